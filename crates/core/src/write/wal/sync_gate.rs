//! The one place a WAL file is synced.
//!
//! On Linux a writeback error is reported to *one* `fsync` caller: the failed pages are marked
//! clean, and later `fsync`s return success although the data never reached the disk. So if two
//! paths synced one log on their own (group commit, a memtable switch, close), one could get
//! the error while the other was told its writes were durable. Every sync of a log goes through
//! its [`SyncGate`] instead: syncs run one at a time, a sync that covers what a caller needs is
//! shared, and the first failure is remembered for the file — every later sync of it fails with
//! it, so no write is acknowledged as synced past a failed sync of its file.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use crate::storage::FileHandle;
use crate::write::wal::repeat_error;
use crate::{Error, Result};

/// Serializes and remembers the syncs of one log file. Shared (`Arc`) by its writer and by
/// whoever syncs it without holding the writer (group commit).
#[derive(Debug)]
pub struct SyncGate {
    file: FileHandle,
    /// Bytes handed to the storage (the writer's flushed offset).
    written: AtomicU64,
    state: Mutex<GateState>,
    done: Condvar,
    /// Syncs performed (not shared waits).
    syncs: AtomicU64,
}

#[derive(Debug, Default)]
struct GateState {
    /// Bytes known durable: a sync that started after they were written returned `Ok`.
    durable: u64,
    syncing: bool,
    /// The first failed sync: the file can never be trusted to be durable again.
    failed: Option<Error>,
}

impl SyncGate {
    /// A gate for `file`, whose first `durable` bytes are durable and handed to the storage.
    pub fn new(file: FileHandle, durable: u64) -> SyncGate {
        SyncGate {
            file,
            written: AtomicU64::new(durable),
            state: Mutex::new(GateState {
                durable,
                ..GateState::default()
            }),
            done: Condvar::new(),
            syncs: AtomicU64::new(0),
        }
    }

    /// Records that the first `end` bytes were handed to the storage (the writer calls this
    /// after each write).
    pub fn written_to(&self, end: u64) {
        self.written.fetch_max(end, Ordering::AcqRel);
    }

    /// Bytes handed to the storage so far.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// Bytes known durable.
    pub fn durable(&self) -> u64 {
        self.lock().durable
    }

    /// Syncs performed through this gate.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    /// Makes the first `end` bytes durable (they must have been handed to the storage):
    /// returns at once if a completed sync covers them, waits for a running sync, else syncs
    /// the file, covering everything written by then. Fails if this or any earlier sync of the
    /// file failed.
    pub fn sync(&self, end: u64) -> Result<()> {
        self.sync_performed(end).map(drop)
    }

    /// [`SyncGate::sync`], returning whether this call ran the file's sync itself (`false`
    /// when a completed or running sync of another caller covered `end`).
    pub fn sync_performed(&self, end: u64) -> Result<bool> {
        let mut st = self.lock();
        loop {
            if let Some(e) = &st.failed {
                return Err(repeat_error(
                    e,
                    &format!("an earlier sync of {:?} failed", self.file.name()),
                ));
            }
            if st.durable >= end {
                return Ok(false);
            }
            if !st.syncing {
                break;
            }
            st = self.done.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        st.syncing = true;
        let covers = self.written().max(end);
        drop(st);
        let result = self.file.sync();
        let mut st = self.lock();
        st.syncing = false;
        match &result {
            Ok(()) => {
                st.durable = st.durable.max(covers);
                self.syncs.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => st.failed = Some(repeat_error(e, "WAL sync failed")),
        }
        drop(st);
        self.done.notify_all();
        result.map(|()| true)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::faulty::FaultyStorage;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::{OpenMode, Storage};
    use std::sync::Arc;

    #[test]
    fn after_one_failed_sync_every_later_sync_of_the_file_fails() {
        let s = FaultyStorage::new(Arc::new(MemoryStorage::new()));
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        let gate = SyncGate::new(f.clone(), 0);
        f.write_at(0, b"a").unwrap();
        gate.written_to(1);
        s.fail_next_sync();
        assert!(gate.sync(1).is_err());
        // Linux reports the error once; the file's next fsync would succeed. The gate does not.
        f.write_at(1, b"b").unwrap();
        gate.written_to(2);
        assert!(gate.sync(2).is_err());
        assert!(gate.sync(0).is_err());
    }

    /// A file whose syncs wait until the test lets them go.
    #[derive(Debug)]
    struct HeldSync {
        inner: FileHandle,
        entered: std::sync::mpsc::SyncSender<()>,
        release: Mutex<std::sync::mpsc::Receiver<()>>,
    }

    impl crate::storage::StorageFile for HeldSync {
        fn name(&self) -> &str {
            self.inner.name()
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
            self.inner.read_at(offset, buf)
        }
        fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
            self.inner.write_at(offset, data)
        }
        fn sync(&self) -> Result<()> {
            self.entered.send(()).unwrap();
            self.release.lock().unwrap().recv().unwrap();
            self.inner.sync()
        }
        fn size(&self) -> Result<u64> {
            self.inner.size()
        }
        fn truncate(&self, len: u64) -> Result<()> {
            self.inner.truncate(len)
        }
    }

    /// Regression: group commit counted a sync it had only waited for as one it performed
    /// (its stats said two syncs where the file had one).
    #[test]
    fn a_caller_that_waited_for_a_running_sync_is_told_it_did_not_sync() {
        let s = MemoryStorage::new();
        let (entered_tx, entered) = std::sync::mpsc::sync_channel(1);
        let (release, release_rx) = std::sync::mpsc::channel();
        let file: FileHandle = Arc::new(HeldSync {
            inner: s.open("wal", OpenMode::CreateNew).unwrap(),
            entered: entered_tx,
            release: Mutex::new(release_rx),
        });
        file.write_at(0, b"abc").unwrap();
        let gate = Arc::new(SyncGate::new(file, 0));
        gate.written_to(3);
        let first = std::thread::spawn({
            let gate = gate.clone();
            move || gate.sync_performed(3).unwrap()
        });
        entered.recv().unwrap();
        let second = std::thread::spawn({
            let gate = gate.clone();
            move || gate.sync_performed(3).unwrap()
        });
        // The second caller finds the sync running and waits for it.
        while !gate.lock().syncing || Arc::strong_count(&gate) < 3 {
            std::thread::yield_now();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        release.send(()).unwrap();
        assert!(first.join().unwrap());
        assert!(!second.join().unwrap());
        assert_eq!(gate.syncs(), 1);
    }

    #[test]
    fn a_sync_covers_what_was_written_before_it_started() {
        let s = MemoryStorage::new();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        let gate = SyncGate::new(f.clone(), 0);
        f.write_at(0, b"abc").unwrap();
        gate.written_to(3);
        gate.sync(1).unwrap();
        assert_eq!(gate.durable(), 3);
        gate.sync(3).unwrap();
        assert_eq!(gate.syncs(), 1, "the second call was covered");
    }
}
