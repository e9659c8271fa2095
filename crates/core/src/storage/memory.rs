//! An in-memory [`Storage`]: for tests and for purely in-memory databases.
//!
//! Every write is immediately "durable": there is nothing to lose. (For crash testing, wrap it
//! in `storage::faulty::FaultyStorage`, feature `testing`.)

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::storage::{FileHandle, OpenMode, Storage, StorageFile, StorageLock};
use crate::{Error, Result};

type Bytes = Arc<RwLock<Vec<u8>>>;

/// A flat namespace of byte vectors. Cloning gives another handle to the same files.
#[derive(Debug, Clone, Default)]
pub struct MemoryStorage {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    files: Mutex<HashMap<String, Bytes>>,
    locks: Arc<Mutex<HashSet<String>>>,
}

impl MemoryStorage {
    /// An empty storage.
    pub fn new() -> MemoryStorage {
        MemoryStorage::default()
    }

    fn files(&self) -> std::sync::MutexGuard<'_, HashMap<String, Bytes>> {
        self.inner
            .files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Storage for MemoryStorage {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        let mut files = self.files();
        let bytes = match (mode, files.get(name)) {
            (OpenMode::Read | OpenMode::ReadWrite, Some(b)) => b.clone(),
            (OpenMode::Read | OpenMode::ReadWrite, None) => {
                return Err(Error::NotFound { file: name.into() })
            }
            (OpenMode::CreateNew, Some(_)) => {
                return Err(Error::AlreadyExists { file: name.into() })
            }
            (OpenMode::Create, Some(b)) => {
                b.write().unwrap_or_else(PoisonError::into_inner).clear();
                b.clone()
            }
            (OpenMode::Create | OpenMode::CreateNew, None) => {
                let b: Bytes = Arc::default();
                files.insert(name.to_owned(), b.clone());
                b
            }
        };
        Ok(Arc::new(MemoryFile {
            name: name.to_owned(),
            bytes,
            writable: mode != OpenMode::Read,
        }))
    }

    fn exists(&self, name: &str) -> Result<bool> {
        Ok(self.files().contains_key(name))
    }

    fn remove(&self, name: &str) -> Result<()> {
        match self.files().remove(name) {
            Some(_) => Ok(()),
            None => Err(Error::NotFound { file: name.into() }),
        }
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let mut files = self.files();
        let bytes = files
            .remove(from)
            .ok_or_else(|| Error::NotFound { file: from.into() })?;
        files.insert(to.to_owned(), bytes);
        Ok(())
    }

    fn list(&self) -> Result<Vec<String>> {
        Ok(self.files().keys().cloned().collect())
    }

    fn sync_dir(&self) -> Result<()> {
        Ok(())
    }

    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
        let mut held = self
            .inner
            .locks
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !held.insert(name.to_owned()) {
            return Err(Error::Locked {
                file: name.into(),
                holder: "another handle in this process".into(),
            });
        }
        Ok(Box::new(MemoryLock {
            name: name.to_owned(),
            locks: self.inner.locks.clone(),
        }))
    }
}

#[derive(Debug)]
struct MemoryLock {
    name: String,
    locks: Arc<Mutex<HashSet<String>>>,
}

impl StorageLock for MemoryLock {}

impl Drop for MemoryLock {
    fn drop(&mut self) {
        self.locks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.name);
    }
}

#[derive(Debug)]
struct MemoryFile {
    name: String,
    bytes: Bytes,
    writable: bool,
}

impl StorageFile for MemoryFile {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let bytes = self.bytes.read().unwrap_or_else(PoisonError::into_inner);
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let src = bytes.get(start..).unwrap_or_default();
        let n = src.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), src.get(..n)) {
            dst.copy_from_slice(src);
        }
        Ok(n)
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        if !self.writable {
            return Err(read_only(&self.name));
        }
        let start = usize::try_from(offset)
            .map_err(|_| Error::InvalidArgument(format!("offset {offset} too large")))?;
        let end = start
            .checked_add(data.len())
            .ok_or_else(|| Error::InvalidArgument(format!("offset {offset} too large")))?;
        let mut bytes = self.bytes.write().unwrap_or_else(PoisonError::into_inner);
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        if let Some(dst) = bytes.get_mut(start..end) {
            dst.copy_from_slice(data);
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        Ok(())
    }

    fn size(&self) -> Result<u64> {
        Ok(self
            .bytes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len() as u64)
    }

    fn truncate(&self, len: u64) -> Result<()> {
        if !self.writable {
            return Err(read_only(&self.name));
        }
        let len = usize::try_from(len)
            .map_err(|_| Error::InvalidArgument(format!("length {len} too large")))?;
        self.bytes
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .resize(len, 0);
        Ok(())
    }

    /// Extends the file with zeros to `offset + len` bytes if it is shorter (memory is the
    /// reservation).
    fn allocate(&self, offset: u64, len: u64) -> Result<bool> {
        if !self.writable {
            return Err(read_only(&self.name));
        }
        let end = offset
            .checked_add(len)
            .and_then(|end| usize::try_from(end).ok())
            .ok_or_else(|| Error::InvalidArgument(format!("offset {offset} too large")))?;
        let mut bytes = self.bytes.write().unwrap_or_else(PoisonError::into_inner);
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        Ok(true)
    }
}

fn read_only(name: &str) -> Error {
    Error::io(
        "write",
        name,
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, "opened read-only"),
    )
}
