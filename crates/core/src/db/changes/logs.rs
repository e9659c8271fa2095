//! The database's write-ahead logs as the change feed sees them: which exist, where each
//! starts (its header's first sequence number, read once and remembered) and when it was
//! sealed (for age-based retention).

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::recordio::{Reader, ReaderOptions};
use crate::storage::{OpenMode, Storage};
use crate::write::wal::record::LogHeader;
use crate::write::wal::wal_file_name;
use crate::Result;

/// What is known about the logs, shared by readers and retention.
#[derive(Debug, Default)]
pub(crate) struct LogIndex {
    /// Log number to its first sequence number (`None`: no readable header, a format 1 log or
    /// one whose creation was cut short).
    first_seqs: Mutex<BTreeMap<u64, Option<u64>>>,
    /// Log number to when it was sealed (ms since the epoch); logs sealed before the open
    /// count from the open.
    sealed_at: Mutex<BTreeMap<u64, u64>>,
    /// Logs left to a deletion job (obsolete, maybe still on disk): no feed starts in one. A
    /// few at a time (a `Vec`: no B-tree of its own in the WebAssembly module).
    retired: Mutex<Vec<u64>>,
}

impl LogIndex {
    /// The first sequence number of log `number`, from its header.
    pub(crate) fn first_seq(&self, storage: &dyn Storage, number: u64) -> Result<Option<u64>> {
        if lock(&self.retired).contains(&number) {
            return Ok(None);
        }
        if let Some(&known) = lock(&self.first_seqs).get(&number) {
            return Ok(known);
        }
        let first = read_first_seq(storage, number)?;
        // Only a header is remembered: a log being created may not have one yet.
        if first.is_some() {
            lock(&self.first_seqs).insert(number, first);
        }
        Ok(first)
    }

    /// Remembers that log `number` starts at `first_seq` (a log just created).
    pub(crate) fn created(&self, number: u64, first_seq: u64) {
        lock(&self.first_seqs).insert(number, Some(first_seq));
    }

    /// Remembers that log `number` was sealed at `now`.
    pub(crate) fn sealed(&self, number: u64, now: u64) {
        lock(&self.sealed_at).insert(number, now);
    }

    /// When log `number` was sealed, or `default` if not while this database was open.
    pub(crate) fn sealed_at(&self, number: u64, default: u64) -> u64 {
        *lock(&self.sealed_at).entry(number).or_insert(default)
    }

    /// Forgets log `number` (deleted).
    pub(crate) fn forget(&self, number: u64) {
        lock(&self.first_seqs).remove(&number);
        lock(&self.sealed_at).remove(&number);
    }

    /// Forgets log `number`, which a deletion job will remove: until [`LogIndex::removed`], it
    /// counts as gone though its file may still be listed.
    pub(crate) fn retire(&self, number: u64) {
        self.forget(number);
        let mut retired = lock(&self.retired);
        if !retired.contains(&number) {
            retired.push(number);
        }
    }

    /// Log `number`, retired, was removed.
    pub(crate) fn removed(&self, number: u64) {
        lock(&self.retired).retain(|&n| n != number);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads the header of log `number`: its first sequence number, `None` without a header.
fn read_first_seq(storage: &dyn Storage, number: u64) -> Result<Option<u64>> {
    let name = wal_file_name(number);
    let file = match storage.open(&name, OpenMode::Read) {
        Ok(file) => file,
        // Removed since it was listed: as if it had never been.
        Err(crate::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut reader = match Reader::open(file, ReaderOptions::default()) {
        Ok(r) => r,
        Err(e @ crate::Error::Io { .. }) => return Err(e),
        Err(_) => return Ok(None),
    };
    match reader.read_next() {
        Ok(Some(rec)) => match rec.data {
            Some(data) => Ok(LogHeader::decode(data, &name)
                .ok()
                .flatten()
                .map(|h| h.first_seq)),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}
