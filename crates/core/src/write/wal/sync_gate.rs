//! The one place a WAL file is synced.
//!
//! On Linux a writeback error is reported to *one* `fsync` caller: the failed pages are marked
//! clean, and later `fsync`s return success although the data never reached the disk. So if two
//! paths synced one log on their own (group commit, a memtable switch, close), one could get
//! the error while the other was told its writes were durable. Every sync of a log goes through
//! its [`SyncGate`] instead: syncs run one at a time, a sync that covers what a caller needs is
//! shared, and the first failure is remembered for the file — every later sync of it fails with
//! it, so no write is acknowledged as synced past a failed sync of its file.
//!
//! A sealed log is not synced when the next one takes over (that would stall every writer at
//! each memtable switch): the next log's gate *follows* it ([`SyncGate::follow`]), and every
//! sync of a gate first syncs the logs it follows that are not durable yet. So whenever a byte
//! of a log past its header is durable, every older log still in use is durable whole, and
//! recovery may drop whatever follows a torn log: it was never synced. A log whose writes are
//! durable elsewhere (flushed to a table) is no longer followed ([`SyncGate::retire_before`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::storage::FileHandle;
use crate::waiters::Waiters;
use crate::write::wal::repeat::repeat_error;
use crate::{Error, Result};

/// Serializes and remembers the syncs of one log file. Shared (`Arc`) by its writer and by
/// whoever syncs it without holding the writer (group commit).
#[derive(Debug)]
pub struct SyncGate {
    file: FileHandle,
    /// Bytes handed to the storage (the writer's flushed offset).
    written: AtomicU64,
    state: Mutex<GateState>,
    /// Notified when a sync ends, if someone waits (with `state`'s lock).
    done: Waiters,
    /// Syncs performed (not shared waits).
    syncs: AtomicU64,
    /// The previous log (its number and gate), while it may hold bytes not yet durable that
    /// no table holds: synced before any sync of this log.
    follows: Mutex<Option<(u64, Arc<SyncGate>)>>,
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
            done: Waiters::default(),
            syncs: AtomicU64::new(0),
            follows: Mutex::new(None),
        }
    }

    /// Makes every later sync of this log sync log `number` (through `gate`) first: this log
    /// takes over from it, which was sealed without a sync.
    pub fn follow(&self, number: u64, gate: Arc<SyncGate>) {
        *lock(&self.follows) = Some((number, gate));
    }

    /// Stops following logs numbered below `number`, along the chain of followed logs: their
    /// writes are durable in tables (the manifest's log number is past them). Returns the logs
    /// let go, newest first, with their gates (they may still hold bytes not durable).
    pub fn retire_before(&self, number: u64) -> Vec<(u64, Arc<SyncGate>)> {
        let mut next = cut_or_next(&self.follows, number);
        let mut cut = None;
        while let Some(gate) = next {
            match gate {
                Next::Follow(gate) => next = cut_or_next(&gate.follows, number),
                Next::Cut(link) => {
                    cut = Some(link);
                    next = None;
                }
            }
        }
        let mut retired = Vec::new();
        while let Some((n, gate)) = cut {
            cut = lock(&gate.follows).take();
            retired.push((n, gate));
        }
        retired
    }

    /// The oldest log this one follows, through the chain, that holds bytes not yet durable:
    /// what a host that runs syncs itself must sync (whole) before this log.
    pub fn oldest_unsynced_followed(&self) -> Option<Arc<SyncGate>> {
        let mut oldest = None;
        let mut next = followed(&self.follows);
        while let Some(gate) = next {
            next = followed(&gate.follows);
            if gate.durable() < gate.written() {
                oldest = Some(gate);
            }
        }
        oldest
    }

    /// Syncs the followed logs whole, oldest first, then forgets them. A failure is returned
    /// (and remembered by the failing log's gate, which stays followed).
    fn sync_followed(&self) -> Result<()> {
        let followed = lock(&self.follows).clone();
        if let Some((_, gate)) = followed {
            gate.sync(gate.written())?;
            let mut link = lock(&self.follows);
            if link.as_ref().is_some_and(|(_, g)| Arc::ptr_eq(g, &gate)) {
                *link = None;
            }
        }
        Ok(())
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
        self.sync_reporting(end).map(|_| ())
    }

    /// [`Self::sync`], telling whether this call ran the file's sync itself (`true`) or was
    /// covered by another one (`false`): what a caller counting syncs counts. It is
    /// [`Self::begin`], the file's sync, then [`Self::finish`].
    pub fn sync_reporting(&self, end: u64) -> Result<bool> {
        let Some(covers) = self.begin(end)? else {
            return Ok(false);
        };
        self.finish(covers, self.file.sync()).map(|()| true)
    }

    /// Starts a sync that makes the first `end` bytes durable, for a caller that runs the
    /// file's sync itself (possibly elsewhere, asynchronously): `Ok(None)` if a completed sync
    /// covers them already; else waits for a running sync (natively; in WebAssembly, with one
    /// thread, a running sync is an error: nothing could finish it while this waits), then
    /// returns `Some(covers)`: the bytes written by now, which the caller's sync covers. The
    /// caller must then sync the file (all bytes written before that sync started) and report
    /// the outcome with [`Self::finish`]; no other sync of the file starts meanwhile. Fails if
    /// an earlier sync of the file failed.
    pub fn begin(&self, end: u64) -> Result<Option<u64>> {
        self.sync_followed()?;
        let mut st = self.lock();
        loop {
            if let Some(e) = &st.failed {
                return Err(repeat_error(
                    e,
                    &format!("an earlier sync of {:?} failed", self.file.name()),
                ));
            }
            if st.durable >= end {
                return Ok(None);
            }
            if !st.syncing {
                break;
            }
            if cfg!(target_arch = "wasm32") {
                return Err(Error::Closed(format!(
                    "a sync of {:?} is under way: nothing can run until it is reported",
                    self.file.name()
                )));
            }
            st = self.done.wait(st);
        }
        st.syncing = true;
        Ok(Some(self.written().max(end)))
    }

    /// Ends the sync [`Self::begin`] started (it returned `covers`) with the file sync's
    /// `result`: on success the first `covers` bytes are durable; a failure is remembered for
    /// the file (every later sync fails with it) and returned.
    pub fn finish(&self, covers: u64, result: Result<()>) -> Result<()> {
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
        // No system call when nobody waits (the one synced writer's case).
        self.done.notify_all();
        result
    }

    /// The file this gate syncs.
    pub fn file(&self) -> &FileHandle {
        &self.file
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        lock(&self.state)
    }
}

/// The gate `link` follows, if any.
fn followed(link: &Mutex<Option<(u64, Arc<SyncGate>)>>) -> Option<Arc<SyncGate>> {
    lock(link).as_ref().map(|(_, gate)| Arc::clone(gate))
}

/// A step along the chain of followed logs.
enum Next {
    /// A followed log numbered at or above the retirement's bound: look at what it follows.
    Follow(Arc<SyncGate>),
    /// The link to a log below the bound, taken out of the chain.
    Cut((u64, Arc<SyncGate>)),
}

/// Cuts `link` if it follows a log numbered below `number` (returning the link); else the gate
/// it follows, if any.
fn cut_or_next(link: &Mutex<Option<(u64, Arc<SyncGate>)>>, number: u64) -> Option<Next> {
    let mut link = lock(link);
    match &*link {
        Some((n, _)) if *n < number => link.take().map(Next::Cut),
        Some((_, gate)) => Some(Next::Follow(Arc::clone(gate))),
        None => None,
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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

    /// Regression: group commit counted a sync for every caller that saw the gate's counter move
    /// during its call, so two writers covered by one sync counted two (flaky
    /// `concurrent_synced_writers_share_syncs...`). Only the caller that ran the sync counts it.
    #[test]
    fn only_the_caller_that_ran_a_sync_is_told_it_ran_it() {
        let s = MemoryStorage::new();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        let gate = Arc::new(SyncGate::new(f.clone(), 0));
        f.write_at(0, b"abc").unwrap();
        gate.written_to(3);
        let ran: usize = (0..8)
            .map(|_| {
                let gate = Arc::clone(&gate);
                std::thread::spawn(move || gate.sync_reporting(3).unwrap())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| usize::from(h.join().unwrap()))
            .sum();
        assert_eq!(ran as u64, gate.syncs());
        assert_eq!(ran, 1, "one sync covered all eight callers");
    }

    /// `finish` wakes only when someone waits: a caller that waits for a sync under way must
    /// be counted, and woken.
    #[test]
    fn a_caller_waiting_for_the_sync_under_way_is_woken_when_it_ends() {
        let s = MemoryStorage::new();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        let gate = Arc::new(SyncGate::new(f.clone(), 0));
        f.write_at(0, b"abc").unwrap();
        gate.written_to(3);
        let covers = gate.begin(3).unwrap().unwrap();
        let waiter = {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || gate.sync_reporting(3).unwrap())
        };
        while gate.done.waiting() == 0 {
            std::thread::yield_now();
        }
        gate.finish(covers, f.sync()).unwrap();
        assert!(!waiter.join().unwrap(), "covered by the sync it waited for");
        assert_eq!((gate.durable(), gate.syncs()), (3, 1));
    }
}
