//! [`LogFile`]: the file a WAL writes — preallocated ahead of its writes and, where the storage
//! can map it, written through a shared memory mapping instead of a `write` call per commit.
//!
//! Preallocation extends the log in steps of [`LogFile::new`]'s `step` bytes
//! ([`crate::storage::StorageFile::allocate`]), ahead of the data. A synced write then rarely
//! changes the file's size, which saves the file system a metadata commit per sync (Linux's
//! `fdatasync` must write a changed size, not a changed modification time). On storages that
//! can map a preallocated range ([`crate::storage::StorageFile::map_writable`]: natively, on
//! Linux), the bytes of each write are copied into a shared mapping of that range: they are in
//! the OS's page cache when the copy ends — the same place, with the same guarantee, as after a
//! `pwrite` — and the log's `sync` makes them durable. Anywhere preallocation or mapping is not
//! available, or fails, writes go to the file as they are ([`StorageFile::write_at`]).
//!
//! The log's format does not change: its data is followed by zeros up to the preallocated end,
//! which readers take for the end of the data (a torn tail, or after a sealed record the clean
//! end: [`super::WalReader::replay`]). A log that takes no more writes is trimmed to its data
//! ([`LogFile::trim`]).

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::storage::{FileHandle, StorageFile, WritableMap};
use crate::{Error, Result};

/// A WAL's file handle with preallocation and, where possible, a write mapping. Every
/// [`StorageFile`] call but `write_at` and `truncate` passes straight through; `sync` covers
/// the bytes written through the mapping as well.
#[derive(Debug)]
pub struct LogFile {
    inner: FileHandle,
    /// Bytes the file is extended by at a time; 0: no preallocation.
    step: u64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The file holds at least this many bytes (data, then preallocated zeros).
    allocated: u64,
    /// Preallocation is on (a step was given, and no allocation failed or was refused).
    preallocating: bool,
    /// Mapping is worth trying (the storage has not refused or failed one).
    mapping: bool,
    /// The mapping of the preallocated bytes ahead of the data, if any.
    map: Option<Box<dyn WritableMap>>,
}

impl LogFile {
    /// Wraps `inner`, an empty file just created, extending it `step` bytes at a time (0: no
    /// preallocation, and no mapping).
    pub fn new(inner: FileHandle, step: u64) -> LogFile {
        LogFile {
            inner,
            step,
            state: Mutex::new(State {
                allocated: 0,
                preallocating: step > 0,
                mapping: step > 0,
                map: None,
            }),
        }
    }

    /// For a log that takes no more writes (sealed, or closing): unmaps it and cuts the
    /// preallocated bytes past `end` (the end of its data). Returns whether the file changed;
    /// the cut is durable with the next sync. Later writes are written as they are.
    pub fn trim(&self, end: u64) -> Result<bool> {
        let mut st = self.lock();
        st.map = None;
        st.mapping = false;
        st.preallocating = false;
        if st.allocated <= end {
            return Ok(false);
        }
        st.allocated = end;
        self.inner.truncate(end)?;
        Ok(true)
    }

    /// Preallocates the first `len` bytes (in whole steps) and maps them where the storage
    /// can, before any write: what a log prepared ahead of need does off the writer's path, so
    /// that its writes then change no metadata (a file system commit in progress stalls a
    /// `fallocate` or a file's first mapping for milliseconds).
    pub fn reserve(&self, len: u64) {
        let mut st = self.lock();
        if st.preallocating && len > st.allocated {
            self.grow(&mut st, len);
        }
        if st.mapping && st.allocated > 0 {
            self.map_from(&mut st, 0);
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes sure bytes up to `end` are preallocated, extending the file by whole steps. A
    /// failed or refused allocation turns preallocation off for this log (writes then extend
    /// the file themselves, and report a full disk); the file may keep a part of the failed
    /// extension, zeros past the data like the rest.
    fn grow(&self, st: &mut State, end: u64) {
        let target = end
            .div_ceil(self.step)
            .checked_mul(self.step)
            .filter(|&t| t > st.allocated);
        let allocated = target.is_some_and(|target| {
            matches!(
                self.inner.allocate(st.allocated, target - st.allocated),
                Ok(true)
            )
        });
        st.map = None;
        match target {
            Some(target) if allocated => st.allocated = target,
            _ => {
                st.preallocating = false;
                st.mapping = false;
            }
        }
    }

    /// Maps the preallocated bytes from `offset` on, if the storage can. A refusal or failure
    /// turns mapping off for this log.
    fn map_from(&self, st: &mut State, offset: u64) {
        st.map = None;
        let mapped = self
            .inner
            .map_writable(offset, st.allocated.saturating_sub(offset));
        match mapped {
            Ok(Some(map)) => st.map = Some(map),
            Ok(None) | Err(_) => st.mapping = false,
        }
    }
}

impl StorageFile for LogFile {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.inner.read_at(offset, buf)
    }

    /// Writes through the mapping when it covers the bytes (mapping the preallocated bytes
    /// ahead first if needed), else to the file; preallocates a step first when the bytes
    /// reach past the preallocated end.
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        let end = offset.checked_add(data.len() as u64).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "a write of {} bytes at offset {offset} ends beyond u64",
                data.len()
            ))
        })?;
        let mut st = self.lock();
        if st.preallocating && end > st.allocated {
            self.grow(&mut st, end);
        }
        if st.mapping {
            let covered = |m: &dyn WritableMap| m.offset() <= offset && end <= m.end();
            if !st.map.as_deref().is_some_and(covered) && end <= st.allocated {
                self.map_from(&mut st, offset);
            }
            if let Some(map) = st.map.as_mut().filter(|m| covered(&***m)) {
                return map.write_at(offset, data);
            }
        }
        self.inner.write_at(offset, data)
    }

    fn sync(&self) -> Result<()> {
        self.inner.sync()
    }

    fn host_id(&self) -> Option<u64> {
        self.inner.host_id()
    }

    fn size(&self) -> Result<u64> {
        self.inner.size()
    }

    /// Unmaps the file first (a mapping must not reach past the end of the file).
    fn truncate(&self, len: u64) -> Result<()> {
        let mut st = self.lock();
        st.map = None;
        st.allocated = st.allocated.min(len);
        self.inner.truncate(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::{OpenMode, Storage};

    #[test]
    fn a_preallocated_file_grows_in_steps_and_reads_back_what_was_written() {
        let s = MemoryStorage::new();
        let f = LogFile::new(s.open("wal", OpenMode::CreateNew).unwrap(), 1024);
        f.write_at(0, b"header").unwrap();
        assert_eq!(f.size().unwrap(), 1024);
        f.write_at(6, &[7; 2000]).unwrap();
        assert_eq!(f.size().unwrap(), 2048);
        let mut back = vec![0u8; 2006];
        f.read_exact_at(0, &mut back).unwrap();
        assert_eq!(&back[..6], b"header");
        assert!(back[6..].iter().all(|&b| b == 7));
        assert!(f.trim(2006).unwrap());
        assert_eq!(f.size().unwrap(), 2006);
        assert!(!f.trim(2006).unwrap());
        f.write_at(2006, b"more").unwrap();
        assert_eq!(f.size().unwrap(), 2010, "no preallocation after a trim");
    }

    #[test]
    fn without_a_step_writes_pass_through() {
        let s = MemoryStorage::new();
        let f = LogFile::new(s.open("wal", OpenMode::CreateNew).unwrap(), 0);
        f.write_at(0, b"abc").unwrap();
        assert_eq!(f.size().unwrap(), 3);
        assert!(!f.trim(3).unwrap());
    }
}
