//! [`Storage`] on a directory of the local file system (`std::fs`).
//!
//! TODO(storage): implement.

use std::path::PathBuf;

use crate::storage::{FileHandle, OpenMode, Storage, StorageLock};
use crate::Result;

/// A directory on disk.
#[derive(Debug, Clone)]
pub struct StdFsStorage {
    root: PathBuf,
}

impl StdFsStorage {
    /// Uses directory `root`, creating it (and its parents) if missing.
    pub fn open(root: impl Into<PathBuf>) -> Result<StdFsStorage> {
        Ok(StdFsStorage { root: root.into() })
    }
}

impl Storage for StdFsStorage {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        let _ = (name, mode, &self.root);
        todo!()
    }
    fn exists(&self, name: &str) -> Result<bool> {
        let _ = name;
        todo!()
    }
    fn remove(&self, name: &str) -> Result<()> {
        let _ = name;
        todo!()
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let _ = (from, to);
        todo!()
    }
    fn list(&self) -> Result<Vec<String>> {
        todo!()
    }
    fn sync_dir(&self) -> Result<()> {
        todo!()
    }
    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
        let _ = name;
        todo!()
    }
}
