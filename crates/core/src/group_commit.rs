//! Group commit: many threads commit write batches through one WAL, sharing its writes and
//! syncs.
//!
//! Each [`GroupCommit::commit`] queues its batch. The writer at the head of the queue, when no
//! other is leading, becomes the *leader*: it takes the queued batches (up to a byte budget),
//! assigns their sequence numbers in queue order, appends them to the WAL — **one record per
//! batch**, handed to the storage in one write, so each batch stays atomic on replay and the
//! log needs no second record format — syncs once if any of them asked for `sync`, applies them
//! in order through the `apply` callback (the memtable), publishes the new
//! [`GroupCommit::visible_seq`], and wakes the others with their results. Then the next head
//! leads. The state lock is never held during I/O, so batches keep queuing while the leader
//! writes: that is what forms the next group.
//!
//! Any WAL failure (write or sync) or `apply` failure poisons the group commit: that group's
//! writers and every later one get an error of the same kind carrying the original cause;
//! reopen the database to recover. A panic in `apply` poisons it too rather than leaving the
//! other writers waiting.
//!
//! Uses `std::sync::Mutex` and `Condvar`; in WebAssembly (one thread) every caller finds the
//! queue empty, leads its own group, and never waits.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use crate::batch::WriteBatch;
use crate::sstable::MAX_SEQ;
use crate::storage::FileHandle;
use crate::wal::{repeat_error, WalWriter};
use crate::{Error, Result};

/// Bytes a group may hold beyond its leader's batch when the leader's is small (LevelDB's
/// rule: small writes are not slowed down by a huge group).
const SMALL_GROUP_EXTRA: usize = 128 * 1024;
/// Byte budget of one group when its leader's batch is over [`SMALL_GROUP_EXTRA`].
const MAX_GROUP_BYTES: usize = 1024 * 1024;

/// Counters of a [`GroupCommit`], for tests and stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Batches committed successfully.
    pub commits: u64,
    /// Groups written (each one WAL write).
    pub groups: u64,
    /// WAL syncs done.
    pub syncs: u64,
}

/// The callback that applies a committed batch (to the memtable): `(first_seq, batch)`.
pub type ApplyFn<'a> = dyn FnMut(u64, &WriteBatch) -> Result<()> + 'a;

struct Pending {
    ticket: u64,
    batch: WriteBatch,
    sync: bool,
}

struct State {
    queue: VecDeque<Pending>,
    /// Results for writers whose batches a leader took.
    done: HashMap<u64, Result<u64>>,
    /// A leader (or an [`GroupCommit::exclusive`] caller) is active.
    leading: bool,
    next_ticket: u64,
    /// Sequence number of the next operation.
    next_seq: u64,
    poisoned: Option<Error>,
}

/// Where the WAL stands: `(log number, offset)` pairs order positions across logs (a newer log
/// is only started once the older one is synced).
#[derive(Default)]
struct Durability {
    /// End of the last group handed to the OS.
    written: (u64, u64),
    /// End of what a completed sync covers.
    synced: (u64, u64),
    /// A sync is running.
    syncing: bool,
    /// A sync failed: nothing after `synced` can be made durable any more.
    failed: Option<Error>,
}

/// Longest a sync waits for concurrent writers to append before it starts.
#[cfg(not(target_arch = "wasm32"))]
const COMMIT_DELAY: std::time::Duration = std::time::Duration::from_micros(50);

/// Decrements a counter when dropped.
struct DecrementOnDrop<'a>(&'a AtomicUsize);

impl Drop for DecrementOnDrop<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A group's WAL end and file, when a writer in it asked for `sync`.
struct SyncTarget {
    number: u64,
    end: u64,
    file: FileHandle,
}

/// Serializes commits of many threads into one WAL, grouping them. `Send + Sync` natively.
pub struct GroupCommit {
    state: Mutex<State>,
    wake: Condvar,
    /// Locked only by the leader or an exclusive caller (never contended).
    wal: Mutex<WalWriter>,
    visible_seq: AtomicU64,
    /// Threads inside [`GroupCommit::commit`] right now.
    writers: AtomicUsize,
    /// What is written and what is durable, for syncs that run outside leadership.
    durability: Mutex<Durability>,
    synced: Condvar,
    commits: AtomicU64,
    groups: AtomicU64,
    syncs: AtomicU64,
}

impl std::fmt::Debug for GroupCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit")
            .field("visible_seq", &self.visible_seq())
            .field("stats", &self.stats())
            .finish()
    }
}

impl GroupCommit {
    /// Commits through `wal`; `last_seq` is the last sequence number already used (0 for a new
    /// database), so the first commit gets `last_seq + 1`.
    pub fn new(wal: WalWriter, last_seq: u64) -> GroupCommit {
        GroupCommit {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                done: HashMap::new(),
                leading: false,
                next_ticket: 0,
                next_seq: last_seq + 1,
                poisoned: None,
            }),
            wake: Condvar::new(),
            wal: Mutex::new(wal),
            visible_seq: AtomicU64::new(last_seq),
            writers: AtomicUsize::new(0),
            durability: Mutex::default(),
            synced: Condvar::new(),
            commits: AtomicU64::new(0),
            groups: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
        }
    }

    /// Commits `batch`: returns its first sequence number once it is in the WAL (handed to the
    /// OS; synced too when `sync`), applied through `apply`, and visible
    /// ([`GroupCommit::visible_seq`] covers it). If this caller leads a group, `apply` is called
    /// for every batch of the group, in sequence order, from this thread; so every caller must
    /// pass an equivalent callback, and `apply` must not call `commit` (it would deadlock).
    /// An empty batch is not logged; it returns the sequence number the next operation gets.
    /// Errors: the poisoning error (module doc), for this and every later commit.
    pub fn commit(&self, batch: WriteBatch, sync: bool, apply: &mut ApplyFn<'_>) -> Result<u64> {
        self.writers.fetch_add(1, Ordering::Relaxed);
        let _writer = DecrementOnDrop(&self.writers);
        let mut st = self.lock_state();
        if let Some(e) = &st.poisoned {
            return Err(poisoned_error(e));
        }
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.queue.push_back(Pending {
            ticket,
            batch,
            sync,
        });
        loop {
            if let Some(r) = st.done.remove(&ticket) {
                return r;
            }
            let at_head = st.queue.front().is_some_and(|p| p.ticket == ticket);
            if at_head && !st.leading {
                break;
            }
            st = self.wake.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        // This thread leads a group.
        st.leading = true;
        let mut group = Vec::new();
        let mut bytes = 0usize;
        let mut budget = MAX_GROUP_BYTES;
        while let Some(p) = st.queue.front() {
            let size = p.batch.approximate_size();
            if group.is_empty() {
                if size <= SMALL_GROUP_EXTRA {
                    budget = size + SMALL_GROUP_EXTRA;
                }
            } else if bytes + size > budget {
                break;
            }
            bytes += size;
            if let Some(p) = st.queue.pop_front() {
                group.push(p);
            }
        }
        let first_of_group = st.next_seq;
        let mut seqs = Vec::with_capacity(group.len());
        let mut next = st.next_seq;
        for p in &mut group {
            p.batch.set_first_seq(next);
            seqs.push(next);
            next += p.batch.len() as u64;
        }
        if next > MAX_SEQ + 1 {
            let e = Error::InvalidArgument(format!(
                "sequence numbers exhausted: {next} is past the maximum {MAX_SEQ}"
            ));
            return self.finish(st, &group, Err(e), ticket, true);
        }
        st.next_seq = next;
        drop(st);

        let mut guard = PanicGuard {
            gc: self,
            tickets: group.iter().map(|p| p.ticket).collect(),
            armed: true,
        };
        let result = self.write_group(&group, &seqs, apply);
        guard.armed = false;
        let mut st = self.lock_state();
        let target = match result {
            Ok(target) => target,
            Err(e) => return self.finish(st, &group, Err(e), ticket, true),
        };
        if next > first_of_group {
            self.visible_seq.store(next - 1, Ordering::Release);
        }
        let Some(target) = target else {
            return self.finish(st, &group, Ok(seqs), ticket, true);
        };
        // Hand leadership on before syncing: the next group writes while this one waits for
        // the disk, and the next sync then covers it too.
        st.leading = false;
        drop(st);
        self.wake.notify_all();
        let synced = self.sync_to(&target);
        let st = self.lock_state();
        self.finish(st, &group, synced.map(|()| seqs), ticket, false)
    }

    /// Commit delay: while other writers are inside `commit`, gives them up to
    /// [`COMMIT_DELAY`] to append their group (the cohort acknowledged by the previous fsync is
    /// re-entering right now), so that the coming fsync covers them too. Returns the WAL
    /// position written by then.
    #[cfg(not(target_arch = "wasm32"))]
    fn commit_delay(&self, mut written: (u64, u64)) -> (u64, u64) {
        if self.writers.load(Ordering::Relaxed) <= 1 {
            return written;
        }
        let deadline = std::time::Instant::now() + COMMIT_DELAY;
        while std::time::Instant::now() < deadline {
            std::thread::yield_now();
            let now = self
                .durability
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .written;
            if now > written {
                written = now;
                break;
            }
        }
        written
    }

    /// No threads, no delay, in WebAssembly.
    #[cfg(target_arch = "wasm32")]
    fn commit_delay(&self, written: (u64, u64)) -> (u64, u64) {
        written
    }

    /// Makes the WAL durable up to `target`: returns at once if a completed sync covers it,
    /// waits if another sync is running, else syncs the file, covering every group written so
    /// far. A failure is remembered: every later sync fails with it.
    fn sync_to(&self, target: &SyncTarget) -> Result<()> {
        let position = (target.number, target.end);
        let mut d = self
            .durability
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(e) = &d.failed {
                return Err(repeat_error(e, "an earlier WAL sync failed"));
            }
            if d.synced >= position {
                return Ok(());
            }
            if !d.syncing {
                break;
            }
            d = self.synced.wait(d).unwrap_or_else(PoisonError::into_inner);
        }
        d.syncing = true;
        let before = d.written;
        drop(d);
        let written = self.commit_delay(before);
        let covered = if written.0 == target.number {
            written.max(position)
        } else {
            position
        };
        let r = target.file.sync();
        let mut d = self
            .durability
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        d.syncing = false;
        match &r {
            Ok(()) => {
                d.synced = d.synced.max(covered);
                self.syncs.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => d.failed = Some(repeat_error(e, "WAL sync failed")),
        }
        drop(d);
        self.synced.notify_all();
        r
    }

    /// Appends and applies one group (no state lock held); returns where the WAL must be
    /// synced to if a writer in the group asked for `sync` (the caller syncs).
    fn write_group(
        &self,
        group: &[Pending],
        seqs: &[u64],
        apply: &mut ApplyFn<'_>,
    ) -> Result<Option<SyncTarget>> {
        let records: Vec<&[u8]> = group
            .iter()
            .filter(|p| !p.batch.is_empty())
            .map(|p| p.batch.as_bytes())
            .collect();
        let mut target = None;
        if !records.is_empty() {
            let mut wal = self.wal.lock().unwrap_or_else(PoisonError::into_inner);
            wal.append_all(&records)?;
            self.groups.fetch_add(1, Ordering::Relaxed);
            let position = (wal.number(), wal.size());
            self.durability
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .written = position;
            if group.iter().any(|p| p.sync) {
                target = Some(SyncTarget {
                    number: position.0,
                    end: position.1,
                    file: wal.file(),
                });
            }
        }
        for (p, &seq) in group.iter().zip(seqs) {
            if !p.batch.is_empty() {
                apply(seq, &p.batch)?;
            }
        }
        Ok(target)
    }

    /// Hands out the group's results, ends leadership, wakes everyone; returns the leader's.
    fn finish(
        &self,
        mut st: MutexGuard<'_, State>,
        group: &[Pending],
        result: Result<Vec<u64>>,
        ticket: u64,
        release_leadership: bool,
    ) -> Result<u64> {
        let mine = match result {
            Ok(seqs) => {
                self.commits
                    .fetch_add(group.len() as u64, Ordering::Relaxed);
                for (p, seq) in group.iter().zip(seqs) {
                    st.done.insert(p.ticket, Ok(seq));
                }
                st.done.remove(&ticket)
            }
            Err(e) => {
                // The leader returns the original error; the others get copies of it.
                for p in group.iter().filter(|p| p.ticket != ticket) {
                    st.done
                        .insert(p.ticket, Err(repeat_error(&e, "the commit group failed")));
                }
                st.poisoned = Some(repeat_error(&e, "poisoned"));
                Some(Err(e))
            }
        };
        if release_leadership {
            st.leading = false;
        }
        drop(st);
        self.wake.notify_all();
        mine.unwrap_or_else(|| Err(Error::Closed("group commit lost a result".into())))
    }

    /// Waits until no group is being written, then takes leadership alone (queued writers wait
    /// until it is released); returns the sequence number the next operation gets. Fails with
    /// the poisoning error if the group commit is poisoned.
    fn lead_alone(&self) -> Result<u64> {
        let mut st = self.lock_state();
        while st.leading {
            st = self.wake.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        if let Some(e) = &st.poisoned {
            return Err(poisoned_error(e));
        }
        st.leading = true;
        Ok(st.next_seq)
    }

    /// Runs `f` with the WAL while no group is being written and none starts (for example to
    /// rotate the WAL and switch the memtable together); `f` also gets the last sequence number
    /// assigned. Waits for the current leader to finish. Fails with the poisoning error if the
    /// group commit is poisoned; an error from `f` does not poison it.
    pub fn exclusive<R>(&self, f: impl FnOnce(&mut WalWriter, u64) -> Result<R>) -> Result<R> {
        let last_seq = self.lead_alone()? - 1;
        let result = {
            let mut wal = self.wal.lock().unwrap_or_else(PoisonError::into_inner);
            // A panic in `f` leaves `leading` set: poison instead of hanging the writers.
            let mut guard = PanicGuard {
                gc: self,
                tickets: Vec::new(),
                armed: true,
            };
            let r = f(&mut wal, last_seq);
            guard.armed = false;
            r
        };
        self.lock_state().leading = false;
        self.wake.notify_all();
        result
    }

    /// Commits `batch` alone, after `check` passes, with no other commit in between: waits
    /// until no group is being written (so every earlier batch is applied and visible), runs
    /// `check`, then appends, syncs (if `sync`), applies and publishes `batch` like
    /// [`GroupCommit::commit`]. This is how optimistic transactions validate their reads
    /// atomically with their write. An error from `check` is returned as is and writes nothing
    /// (no poisoning); WAL and `apply` failures poison as in `commit`.
    pub fn commit_checked(
        &self,
        mut batch: WriteBatch,
        sync: bool,
        check: &mut dyn FnMut() -> Result<()>,
        apply: &mut ApplyFn<'_>,
    ) -> Result<u64> {
        let first = self.lead_alone()?;
        let mut guard = PanicGuard {
            gc: self,
            tickets: Vec::new(),
            armed: true,
        };
        let checked = check();
        let result = checked.and_then(|()| {
            let next = first + batch.len() as u64;
            if next > MAX_SEQ + 1 {
                return Err(Error::InvalidArgument(format!(
                    "sequence numbers exhausted: {next} is past the maximum {MAX_SEQ}"
                )));
            }
            batch.set_first_seq(first);
            let pending = [Pending {
                ticket: u64::MAX,
                batch,
                sync,
            }];
            let written = self
                .write_group(&pending, &[first], apply)
                .and_then(|target| target.map_or(Ok(()), |t| self.sync_to(&t)));
            Ok((written, next))
        });
        guard.armed = false;
        let mut st = self.lock_state();
        let out = match result {
            Err(e) => Err(e),
            Ok((Ok(()), next)) => {
                st.next_seq = next;
                if next > first {
                    self.visible_seq.store(next - 1, Ordering::Release);
                }
                self.commits.fetch_add(1, Ordering::Relaxed);
                Ok(first)
            }
            Ok((Err(e), _)) => {
                st.poisoned = Some(repeat_error(&e, "poisoned"));
                Err(e)
            }
        };
        st.leading = false;
        drop(st);
        self.wake.notify_all();
        out
    }

    /// The last sequence number whose batch is committed and applied: a snapshot taken at it
    /// sees whole batches only.
    pub fn visible_seq(&self) -> u64 {
        self.visible_seq.load(Ordering::Acquire)
    }

    /// The poisoning error, if a failure poisoned the group commit (a copy).
    pub fn poisoned(&self) -> Option<Error> {
        self.lock_state().poisoned.as_ref().map(poisoned_error)
    }

    /// Counters so far.
    pub fn stats(&self) -> GroupCommitStats {
        GroupCommitStats {
            commits: self.commits.load(Ordering::Relaxed),
            groups: self.groups.load(Ordering::Relaxed),
            syncs: self.syncs.load(Ordering::Relaxed),
        }
    }

    /// Takes the WAL back (for example to close the database).
    pub fn into_wal(self) -> WalWriter {
        self.wal
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn poisoned_error(e: &Error) -> Error {
    repeat_error(
        e,
        "an earlier write failed; the database accepts no more writes until it is reopened",
    )
}

/// On unwind out of a leader's or exclusive caller's work: poisons, fails the group, wakes all.
struct PanicGuard<'a> {
    gc: &'a GroupCommit,
    tickets: Vec<u64>,
    armed: bool,
}

impl Drop for PanicGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut st = self.gc.lock_state();
        let e = Error::Closed("a writer panicked while committing".into());
        for t in &self.tickets {
            st.done.insert(*t, Err(repeat_error(&e, "commit failed")));
        }
        st.poisoned.get_or_insert(e);
        st.leading = false;
        drop(st);
        self.gc.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memtable::MemTable;
    use crate::storage::memory::MemoryStorage;
    use crate::wal::WalOptions;

    fn put(k: &[u8]) -> WriteBatch {
        let mut b = WriteBatch::new();
        b.put(k, b"v").unwrap();
        b
    }

    #[test]
    fn single_writer_gets_dense_sequence_numbers_and_syncs_only_when_asked() {
        let s = MemoryStorage::new();
        let wal = WalWriter::create(&s, 1, WalOptions::default()).unwrap();
        let gc = GroupCommit::new(wal, 10);
        let mem = MemTable::new();
        let mut apply = |seq: u64, b: &WriteBatch| {
            mem.apply(seq, b);
            Ok(())
        };
        let mut two = put(b"a");
        two.put(b"b", b"v").unwrap();
        assert_eq!(gc.commit(two, false, &mut apply).unwrap(), 11);
        assert_eq!(gc.commit(put(b"c"), true, &mut apply).unwrap(), 13);
        assert_eq!(gc.commit(WriteBatch::new(), true, &mut apply).unwrap(), 14);
        assert_eq!(gc.visible_seq(), 13);
        assert_eq!(
            gc.stats(),
            GroupCommitStats {
                commits: 3,
                groups: 2,
                syncs: 1
            }
        );
        assert_eq!(mem.len(), 3);
        assert_eq!(mem.get(b"b", 100).unwrap().0, 12);
        let last = gc.exclusive(|wal, last| Ok((wal.number(), last))).unwrap();
        assert_eq!(last, (1, 13));
    }

    #[test]
    fn a_failing_apply_poisons_later_commits() {
        let s = MemoryStorage::new();
        let wal = WalWriter::create(&s, 1, WalOptions::default()).unwrap();
        let gc = GroupCommit::new(wal, 0);
        let mut fail = |_: u64, _: &WriteBatch| Err(Error::InvalidArgument("boom".into()));
        assert_eq!(
            gc.commit(put(b"a"), false, &mut fail).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        let mut ok = |_: u64, _: &WriteBatch| Ok(());
        let e = gc.commit(put(b"b"), false, &mut ok).unwrap_err();
        assert_eq!(e.code(), "CLOSED");
        assert!(e.to_string().contains("boom"));
        assert!(gc.exclusive(|_, _| Ok(())).is_err());
        assert_eq!(gc.visible_seq(), 0);
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn group_commit_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<GroupCommit>();
    }
}
