//! Online checkpoints: a consistent copy of the database in another storage.

use std::sync::Arc;

use crate::db::core::DbInner;
use crate::file_names::table_file_name;
use crate::file_names::LOCK;
use crate::storage::{OpenMode, Storage};
use crate::version::manifest::{ManifestOptions, ManifestWriter};
use crate::version::{VersionSet, NUM_LEVELS};
use crate::write::wal::{WalOptions, WalWriter};
use crate::{Error, Result};

/// Bytes copied per read.
const COPY_CHUNK: usize = 1 << 20;

impl DbInner {
    /// Copies a consistent state of the database into `dest`, which must hold no files. The
    /// database keeps serving reads and writes meanwhile. The copy holds every write
    /// acknowledged before the call; writes made during it may or may not be included, each
    /// batch wholly or not at all. Returns the sequence number the copy holds everything up
    /// to (and nothing after). The copy has no change cursors.
    pub(crate) fn checkpoint(&self, dest: &Arc<dyn Storage>) -> Result<u64> {
        self.health.check_open()?;
        let existing: Vec<String> = dest.list()?.into_iter().filter(|n| n != LOCK).collect();
        if let Some(name) = existing.first() {
            return Err(Error::AlreadyExists { file: name.clone() });
        }
        // Everything acknowledged so far goes into tables; the copy then needs no WAL.
        self.flush_all()?;
        // The state and the version it names, taken together. Holding `version` keeps its
        // tables from being deleted while they are copied.
        let (mut edit, version) = {
            let versions = self.versions.lock();
            (versions.snapshot_edit(), versions.current())
        };
        for level in 0..NUM_LEVELS {
            for file in version.files(level) {
                copy_file(&*self.storage, &**dest, &table_file_name(file.number))?;
            }
        }
        // Change cursors belong to the readers of this database, not of the copy (a follower
        // bootstrapped from it would keep its logs for a reader that never comes).
        edit.change_cursors.clear();
        let mut versions = VersionSet::new();
        // The copy's log gets a number after every one in use, and starts empty after the last
        // sequence number its tables hold (the log number must name an existing log).
        let wal_number = edit.next_file_number.unwrap_or(1);
        edit.log_number = Some(wal_number);
        versions.apply(&edit)?;
        versions.mark_file_number_used(wal_number);
        // Syncs the directory too: the tables' entries are durable with it.
        WalWriter::create(
            &**dest,
            wal_number,
            versions.last_sequence() + 1,
            WalOptions::default(),
        )?;
        ManifestWriter::create(dest.clone(), &mut versions, ManifestOptions::default())?;
        Ok(versions.last_sequence())
    }
}

fn copy_file(from: &dyn Storage, to: &dyn Storage, name: &str) -> Result<()> {
    let src = from.open(name, OpenMode::Read)?;
    let dst = to.open(name, OpenMode::CreateNew)?;
    let size = src.size()?;
    let mut buf = vec![0u8; COPY_CHUNK.min(size as usize)];
    let mut at = 0u64;
    while at < size {
        let n = src.read_at(at, &mut buf)?;
        if n == 0 {
            break;
        }
        dst.write_at(at, buf.get(..n).unwrap_or_default())?;
        at += n as u64;
    }
    dst.sync()
}
