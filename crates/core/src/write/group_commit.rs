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
//! Uses `std::sync::Mutex` and a condition variable (`crate::waiters`); in WebAssembly (one
//! thread) every caller finds the queue empty, leads its own group, and never waits.
//!
//! # Deferred syncs
//!
//! With [`GroupCommit::set_deferred_sync`] on (a host whose thread must not wait on the disk:
//! Node's event loop), a commit returns as soon as its group is written and applied, before
//! it is visible, and a group that asked for `sync` is not synced by its leader: it waits, not
//! visible, with every later group queued behind it, until the host runs the sync itself
//! ([`GroupCommit::begin_host_sync`], the file's sync wherever the host likes, then
//! [`GroupCommit::finish_host_sync`]) — one sync for every group written before it started.
//! Success makes the waiting groups visible in order; failure is a failed sync as above (the
//! log's gate remembers it, the group commit is poisoned, nothing past it becomes visible).
//! The synchronous path is the same code with the sync run inline by the leader; and work that
//! needs every group visible ([`GroupCommit::exclusive`]: a memtable switch) runs a pending
//! deferred sync inline first.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::key::MAX_SEQ;
use crate::waiters::Waiters;
use crate::write::batch::WriteBatch;

use crate::write::wal::{repeat_error, SyncGate, WalWriter};
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

/// A written group waiting to become visible: once it is ready (written, and synced if one
/// of its writers asked: `sync` is `None`) and every earlier group is visible.
struct Publication {
    /// The group's writers waiting for their result: `(ticket, first sequence number)` (none
    /// with deferred syncs: those writers had theirs when the group was written).
    members: Vec<(u64, u64)>,
    /// The last sequence number the group used (the visible one once it is published).
    last_seq: u64,
    /// Where the log must be durable before the group is ready; `None` once it is.
    sync: Option<SyncTarget>,
}

/// Hashes a ticket (unique, sequential) with one multiplication.
#[derive(Default)]
struct TicketHasher(u64);

impl Hasher for TicketHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

struct State {
    queue: VecDeque<Pending>,
    /// Results for writers whose batches a leader took.
    done: HashMap<u64, Result<u64>, BuildHasherDefault<TicketHasher>>,
    /// Emptied vectors of earlier groups, reused so that a commit allocates none.
    spare_groups: Vec<Vec<Pending>>,
    spare_members: Vec<Vec<(u64, u64)>>,
    /// A leader (or an [`GroupCommit::exclusive`] caller) is active.
    leading: bool,
    next_ticket: u64,
    /// Sequence number of the next operation.
    next_seq: u64,
    poisoned: Option<Error>,
    /// Written groups not yet visible, in commit order.
    unpublished: VecDeque<Publication>,
    /// Syncs are the host's (module doc, "Deferred syncs").
    deferred: bool,
    /// The host's sync under way: the gate and what it covers ([`SyncGate::begin`]).
    host_sync: Option<(Arc<SyncGate>, u64)>,
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

/// A group's WAL end and the log's gate, when a writer in it asked for `sync`.
#[derive(Clone)]
struct SyncTarget {
    end: u64,
    gate: Arc<SyncGate>,
}

/// Serializes commits of many threads into one WAL, grouping them. `Send + Sync` natively.
pub struct GroupCommit {
    state: Mutex<State>,
    /// Notified when results are in or leadership ends, if someone waits (with `state`'s lock).
    wake: Waiters,
    /// Locked only by the leader or an exclusive caller (never contended).
    wal: Mutex<WalWriter>,
    visible_seq: AtomicU64,
    /// Threads inside [`GroupCommit::commit`] right now.
    writers: AtomicUsize,
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
                done: HashMap::default(),
                spare_groups: Vec::new(),
                spare_members: Vec::new(),
                leading: false,
                next_ticket: 0,
                next_seq: last_seq + 1,
                poisoned: None,
                unpublished: VecDeque::new(),
                deferred: false,
                host_sync: None,
            }),
            wake: Waiters::default(),
            wal: Mutex::new(wal),
            visible_seq: AtomicU64::new(last_seq),
            writers: AtomicUsize::new(0),
            commits: AtomicU64::new(0),
            groups: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
        }
    }

    /// Commits `batch`: returns its first sequence number once it is in the WAL (handed to the
    /// OS; synced too when `sync`), applied through `apply`, and visible
    /// ([`GroupCommit::visible_seq`] covers it) — with deferred syncs on, once it is in the
    /// WAL and applied only: it is visible (and, with `sync`, durable) when
    /// [`GroupCommit::visible_seq`] reaches its last sequence number. A batch becomes visible
    /// only when every earlier one is, and a synced one only once its sync returned: a reader never sees a write that a
    /// failed sync may still take away. If this caller leads a group, `apply` is called for
    /// every batch of the group, in sequence order, from this thread; so every caller must pass
    /// an equivalent callback, and `apply` must not call `commit` (it would deadlock).
    /// An empty batch is not logged; it returns the sequence number the next operation gets.
    /// Errors: the poisoning error (module doc), for this and every later commit. A failed
    /// commit's outcome is unknown: its batch may be in the log (and come back at reopen).
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
            st = self.wake.wait(st);
        }
        // This thread leads a group.
        st.leading = true;
        let mut group = st.spare_groups.pop().unwrap_or_default();
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
        let st = self.write_and_publish(st, group, ticket, apply);
        self.wait_for(st, ticket)
    }

    /// Waits for `ticket`'s result.
    fn wait_for<'a>(&'a self, mut st: MutexGuard<'a, State>, ticket: u64) -> Result<u64> {
        loop {
            if let Some(r) = st.done.remove(&ticket) {
                return r;
            }
            st = self.wake.wait(st);
        }
    }

    /// Leader's work (called leading, with the state lock): gives the group its sequence
    /// numbers, appends and applies it, ends leadership, syncs if asked, and publishes it in
    /// order. Results reach the group's writers through `done`; if the group fails, the
    /// `leader` gets the original error and the others copies.
    fn write_and_publish<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        mut group: Vec<Pending>,
        leader: u64,
        apply: &mut ApplyFn<'_>,
    ) -> MutexGuard<'a, State> {
        let mut members = st.spare_members.pop().unwrap_or_default();
        let mut next = st.next_seq;
        for p in &mut group {
            p.batch.set_first_seq(next);
            members.push((p.ticket, next));
            next += p.batch.len() as u64;
        }
        if next > MAX_SEQ + 1 {
            let e = Error::InvalidArgument(format!(
                "sequence numbers exhausted: {next} is past the maximum {MAX_SEQ}"
            ));
            for p in group.iter().filter(|p| p.ticket != leader) {
                st.done
                    .insert(p.ticket, Err(repeat_error(&e, "commit refused")));
            }
            st.done.insert(leader, Err(e));
            st.leading = false;
            self.wake.notify_all();
            return st;
        }
        st.next_seq = next;
        drop(st);

        let mut guard = PanicGuard {
            gc: self,
            group: &group,
            armed: true,
        };
        let written = self.write_group(&group, apply);
        guard.armed = false;
        drop(guard);
        let mut st = self.lock_state();
        st.leading = false;
        let target = match written {
            Ok(target) => target,
            Err(e) => {
                for p in group.iter().filter(|p| p.ticket != leader) {
                    st.done
                        .insert(p.ticket, Err(repeat_error(&e, "the commit group failed")));
                }
                st.poisoned
                    .get_or_insert_with(|| repeat_error(&e, "poisoned"));
                st.done.insert(leader, Err(e));
                self.wake.notify_all();
                return st;
            }
        };
        // The batches are in the log and the memtable: their buffers go, the vector stays.
        group.clear();
        st.spare_groups.push(group);
        if st.deferred {
            // The writers return now; the host syncs (and the group becomes visible) later.
            self.commits
                .fetch_add(members.len() as u64, Ordering::Relaxed);
            for &(ticket, seq) in &members {
                st.done.insert(ticket, Ok(seq));
            }
            members.clear();
        }
        st.unpublished.push_back(Publication {
            members,
            last_seq: next - 1,
            sync: target.clone(),
        });
        let target = match target {
            Some(target) if !st.deferred => target,
            _ => {
                self.publish_ready(&mut st);
                self.wake.notify_all();
                return st;
            }
        };
        // The next group writes while this one waits for the disk; the next sync covers it too.
        self.wake.notify_all();
        drop(st);
        let synced = self.sync_to(&target).map(|()| target.gate.durable());
        let mut st = self.lock_state();
        self.synced(&mut st, &target.gate, synced);
        self.wake.notify_all();
        st
    }

    /// After a sync of `gate` returned `result` (on success, the bytes the gate knows durable,
    /// read before the state lock was taken): every group waiting for them is ready, and the
    /// ready groups are published; on failure, every group not yet visible fails and the
    /// group commit is poisoned.
    fn synced(&self, st: &mut State, gate: &Arc<SyncGate>, result: Result<u64>) {
        match result {
            Ok(durable) => {
                for p in &mut st.unpublished {
                    if p.sync
                        .as_ref()
                        .is_some_and(|t| Arc::ptr_eq(&t.gate, gate) && t.end <= durable)
                    {
                        p.sync = None;
                    }
                }
                self.publish_ready(st);
            }
            Err(e) => self.fail_unpublished(st, &e),
        }
    }

    /// Publishes the ready groups at the head of the queue: raises the visible sequence number
    /// and hands their writers their results.
    fn publish_ready(&self, st: &mut State) {
        while st.unpublished.front().is_some_and(|p| p.sync.is_none()) {
            let Some(p) = st.unpublished.pop_front() else {
                break;
            };
            self.visible_seq.fetch_max(p.last_seq, Ordering::AcqRel);
            self.commits
                .fetch_add(p.members.len() as u64, Ordering::Relaxed);
            let mut members = p.members;
            for &(ticket, seq) in &members {
                st.done.insert(ticket, Ok(seq));
            }
            members.clear();
            st.spare_members.push(members);
        }
    }

    /// A sync failed: poisons, and fails every group not yet visible (their outcome is
    /// unknown: none may become visible past the failed one).
    fn fail_unpublished(&self, st: &mut State, e: &Error) {
        st.poisoned
            .get_or_insert_with(|| repeat_error(e, "poisoned"));
        for p in std::mem::take(&mut st.unpublished) {
            for (ticket, _) in p.members {
                st.done
                    .insert(ticket, Err(repeat_error(e, "the WAL sync failed")));
            }
        }
    }

    /// Commit delay: while other writers are inside `commit`, gives them up to
    /// [`COMMIT_DELAY`] to append their group (the cohort acknowledged by the previous fsync is
    /// re-entering right now), so that the coming fsync covers them too.
    #[cfg(not(target_arch = "wasm32"))]
    fn commit_delay(&self, gate: &SyncGate) {
        if self.writers.load(Ordering::Relaxed) <= 1 {
            return;
        }
        let written = gate.written();
        let deadline = std::time::Instant::now() + COMMIT_DELAY;
        while std::time::Instant::now() < deadline {
            std::thread::yield_now();
            if gate.written() > written {
                break;
            }
        }
    }

    /// No threads, no delay, in WebAssembly.
    #[cfg(target_arch = "wasm32")]
    fn commit_delay(&self, _gate: &SyncGate) {}

    /// Makes the WAL durable up to `target` through the log's gate (which shares a running or
    /// completed sync, and remembers a failure for good).
    fn sync_to(&self, target: &SyncTarget) -> Result<()> {
        if target.gate.durable() < target.end {
            self.commit_delay(&target.gate);
        }
        let ran = target.gate.sync_reporting(target.end)?;
        if ran {
            self.syncs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Appends and applies one group (no state lock held); returns where the WAL must be
    /// synced to if a writer in the group asked for `sync` (the caller syncs).
    fn write_group(
        &self,
        group: &[Pending],
        apply: &mut ApplyFn<'_>,
    ) -> Result<Option<SyncTarget>> {
        let records = group
            .iter()
            .filter(|p| !p.batch.is_empty())
            .map(|p| p.batch.as_bytes());
        let mut target = None;
        if records.clone().next().is_some() {
            let mut wal = self.wal.lock().unwrap_or_else(PoisonError::into_inner);
            wal.append_iter(records)?;
            self.groups.fetch_add(1, Ordering::Relaxed);
            if group.iter().any(|p| p.sync) {
                target = Some(SyncTarget {
                    end: wal.size(),
                    gate: wal.gate(),
                });
            }
        }
        for p in group {
            if !p.batch.is_empty() {
                apply(p.batch.first_seq(), &p.batch)?;
            }
        }
        Ok(target)
    }

    /// Waits until no group is being written (and, with `drained`, until every written group
    /// is visible), then takes leadership alone (queued writers wait until it is released).
    /// Fails with the poisoning error if the group commit is poisoned.
    fn lead_alone(&self, drained: bool) -> Result<MutexGuard<'_, State>> {
        let mut st = self.lock_state();
        while st.leading || (drained && !st.unpublished.is_empty() && st.poisoned.is_none()) {
            if !st.leading && st.deferred {
                // Groups wait for a deferred sync: run it here (its failure poisons), unless
                // the host's is under way (natively, wait for it; with one thread, nothing could
                // finish it).
                if st.host_sync.is_none() {
                    drop(st);
                    let _ = self.sync_for_host();
                    st = self.lock_state();
                    continue;
                }
                if cfg!(target_arch = "wasm32") {
                    return Err(Error::Closed(
                        "a deferred WAL sync is under way: report it before this runs".into(),
                    ));
                }
            }
            st = self.wake.wait(st);
        }
        if let Some(e) = &st.poisoned {
            return Err(poisoned_error(e));
        }
        st.leading = true;
        Ok(st)
    }

    /// Runs `f` with the WAL while no group is being written and none starts (for example to
    /// rotate the WAL and switch the memtable together); `f` also gets the last sequence number
    /// assigned. Waits for the current leader to finish and for every written group to be
    /// visible (so a memtable switched here holds visible writes only, and a flush never puts
    /// a write into a table before readers may see it). Fails with the poisoning error if the
    /// group commit is poisoned; an error from `f` does not poison it.
    pub fn exclusive<R>(&self, f: impl FnOnce(&mut WalWriter, u64) -> Result<R>) -> Result<R> {
        let st = self.lead_alone(true)?;
        let last_seq = st.next_seq - 1;
        drop(st);
        let result = {
            let mut wal = self.wal.lock().unwrap_or_else(PoisonError::into_inner);
            // A panic in `f` leaves `leading` set: poison instead of hanging the writers.
            let mut guard = PanicGuard {
                gc: self,
                group: &[],
                armed: true,
            };
            let r = f(&mut wal, last_seq);
            guard.armed = false;
            r
        };
        let mut st = self.lock_state();
        st.leading = false;
        self.wake.notify_all();
        result
    }

    /// Commits `batch` alone, after `check` passes, with no other commit in between: waits
    /// until no group is being written (so every earlier batch is applied), runs `check`, then
    /// commits `batch` like [`GroupCommit::commit`]. This is how optimistic transactions
    /// validate their reads atomically with their write. An error from `check` is returned as
    /// is and writes nothing (no poisoning); WAL and `apply` failures poison as in `commit`.
    pub fn commit_checked(
        &self,
        batch: WriteBatch,
        sync: bool,
        check: &mut dyn FnMut() -> Result<()>,
        apply: &mut ApplyFn<'_>,
    ) -> Result<u64> {
        let mut st = self.lead_alone(false)?;
        drop(st);
        let mut guard = PanicGuard {
            gc: self,
            group: &[],
            armed: true,
        };
        let checked = check();
        guard.armed = false;
        st = self.lock_state();
        if let Err(e) = checked {
            st.leading = false;
            self.wake.notify_all();
            return Err(e);
        }
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        let group = vec![Pending {
            ticket,
            batch,
            sync,
        }];
        let st = self.write_and_publish(st, group, ticket, apply);
        self.wait_for(st, ticket)
    }

    /// Makes everything written to the live log so far durable, without stopping commits: the
    /// sync goes through the log's gate (shared with a sync already running; a failure fails
    /// every later sync of the log), which syncs the older logs still in use first.
    pub fn sync_written(&self) -> Result<()> {
        let gate = self
            .wal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .gate();
        gate.sync(gate.written())
    }

    /// Stops syncing logs numbered below `number` before the live one: their writes are in
    /// tables ([`SyncGate::retire_before`]). Those `keep` names (kept for the change feed) are
    /// synced whole first, so that a power loss cannot cut writes out of the middle of the
    /// feed; a failure is returned (and remembered by the log's gate).
    pub fn retire_logs_before(&self, number: u64, keep: impl Fn(u64) -> bool) -> Result<()> {
        let gate = self
            .wal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .gate();
        for (n, retired) in gate.retire_before(number).into_iter().rev() {
            if keep(n) {
                retired.sync(retired.written())?;
            }
        }
        Ok(())
    }

    /// Turns deferred syncs on or off (module doc, "Deferred syncs"). Turning them off runs a
    /// pending deferred sync first (its failure is returned, and poisons).
    pub fn set_deferred_sync(&self, on: bool) -> Result<()> {
        if !on {
            self.sync_for_host()?;
        }
        self.lock_state().deferred = on;
        Ok(())
    }

    /// Starts the sync that groups written with deferred syncs wait for: `Ok(None)` when none
    /// waits (or a sync already covered them: they are published now); else the gate of the
    /// log to sync — an older log the waiting groups' log follows, if one is not durable yet
    /// (then the groups still wait after it: call again), else their log —,
    /// whose file the host must now sync — everything written to it before that sync starts
    /// is covered — and then report with [`GroupCommit::finish_host_sync`]. No other sync of
    /// the log runs meanwhile. Errors: the poisoning error; a host sync already under way
    /// (`Closed`); a failed earlier sync of the log (which poisons, failing the waiting groups).
    pub fn begin_host_sync(&self) -> Result<Option<Arc<SyncGate>>> {
        let st = self.lock_state();
        if let Some(e) = &st.poisoned {
            return Err(poisoned_error(e));
        }
        if st.host_sync.is_some() {
            return Err(Error::Closed(
                "a deferred WAL sync is under way already".into(),
            ));
        }
        let Some(mut target) = st.unpublished.iter().rev().find_map(|p| p.sync.clone()) else {
            return Ok(None);
        };
        drop(st);
        // An older log the target's follows and that is not durable yet goes first: the host
        // syncs it, and the next call starts the target's own sync.
        let mut older = false;
        if let Some(gate) = target.gate.oldest_unsynced_followed() {
            older = true;
            target = SyncTarget {
                end: gate.written(),
                gate,
            };
        }
        let begun = target.gate.begin(target.end);
        let durable = target.gate.durable();
        let mut st = self.lock_state();
        match begun {
            Ok(Some(covers)) => {
                st.host_sync = Some((Arc::clone(&target.gate), covers));
                Ok(Some(target.gate))
            }
            // Another thread synced the older log meanwhile: on to the waiting groups' own.
            Ok(None) if older => {
                drop(st);
                self.begin_host_sync()
            }
            Ok(None) => {
                self.synced(&mut st, &target.gate, Ok(durable));
                self.wake.notify_all();
                Ok(None)
            }
            Err(e) => {
                self.synced(
                    &mut st,
                    &target.gate,
                    Err(repeat_error(&e, "WAL sync failed")),
                );
                self.wake.notify_all();
                Err(e)
            }
        }
    }

    /// Reports the outcome of the sync [`GroupCommit::begin_host_sync`] started: on success
    /// the groups written before it started are ready and become visible in order; a failure
    /// is remembered by the log's gate, poisons the group commit, fails every group not yet
    /// visible, and is returned. Errors also if no host sync is under way (`InvalidArgument`).
    pub fn finish_host_sync(&self, result: Result<()>) -> Result<()> {
        let Some((gate, covers)) = self.lock_state().host_sync.take() else {
            return Err(Error::InvalidArgument(
                "no deferred WAL sync is under way".into(),
            ));
        };
        let finished = gate.finish(covers, result);
        if finished.is_ok() {
            self.syncs.fetch_add(1, Ordering::Relaxed);
        }
        let outcome = match &finished {
            Ok(()) => Ok(gate.durable()),
            Err(e) => Err(repeat_error(e, "WAL sync failed")),
        };
        let mut st = self.lock_state();
        self.synced(&mut st, &gate, outcome);
        self.wake.notify_all();
        finished
    }

    /// Runs the sync that groups written with deferred syncs wait for, inline (the host's sync,
    /// in this thread): what work that needs every group visible does first.
    pub fn sync_for_host(&self) -> Result<()> {
        while let Some(gate) = self.begin_host_sync()? {
            let result = gate.file().sync();
            self.finish_host_sync(result)?;
        }
        Ok(())
    }

    /// The last sequence number assigned to a batch (visible or not yet).
    pub fn last_seq(&self) -> u64 {
        self.lock_state().next_seq - 1
    }

    /// Makes `seq` the last sequence number used and visible. Only for a database nothing
    /// commits to (a read-only open catching up with its writer).
    pub fn set_visible_seq(&self, seq: u64) {
        let mut st = self.lock_state();
        st.next_seq = seq + 1;
        self.visible_seq.store(seq, Ordering::Release);
    }

    /// The last sequence number whose batch is committed, applied and visible: a snapshot taken
    /// at it sees whole batches only.
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
struct PanicGuard<'a, 'g> {
    gc: &'a GroupCommit,
    /// The group whose writers are failed (empty for an exclusive caller).
    group: &'g [Pending],
    armed: bool,
}

impl Drop for PanicGuard<'_, '_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut st = self.gc.lock_state();
        let e = Error::Closed("a writer panicked while committing".into());
        for p in self.group {
            st.done
                .insert(p.ticket, Err(repeat_error(&e, "commit failed")));
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
    use crate::storage::faulty::FaultyStorage;
    use crate::storage::memory::MemoryStorage;
    use crate::write::wal::WalOptions;

    fn put(k: &[u8]) -> WriteBatch {
        let mut b = WriteBatch::new();
        b.put(k, b"v").unwrap();
        b
    }

    #[test]
    fn single_writer_gets_dense_sequence_numbers_and_syncs_only_when_asked() {
        let s = MemoryStorage::new();
        let wal = WalWriter::create(&s, 1, 11, WalOptions::default()).unwrap();
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
        let wal = WalWriter::create(&s, 1, 1, WalOptions::default()).unwrap();
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

    /// A group commit with deferred syncs on, over `storage`, and a memtable to apply to.
    fn deferred(storage: &dyn crate::storage::Storage) -> (GroupCommit, MemTable) {
        let wal = WalWriter::create(storage, 1, 1, WalOptions::default()).unwrap();
        let gc = GroupCommit::new(wal, 0);
        gc.set_deferred_sync(true).unwrap();
        (gc, MemTable::new())
    }

    #[test]
    fn a_deferred_synced_write_becomes_visible_after_the_host_sync_with_later_writes_behind_it() {
        let s = MemoryStorage::new();
        let (gc, mem) = deferred(&s);
        let mut apply = |seq: u64, b: &WriteBatch| {
            mem.apply(seq, b);
            Ok(())
        };
        assert_eq!(
            gc.begin_host_sync().unwrap().map(|_| ()),
            None,
            "nothing waits"
        );
        assert_eq!(gc.commit(put(b"a"), true, &mut apply).unwrap(), 1);
        // Not synced: in the log and the memtable, not visible; a later unsynced write waits.
        assert_eq!(gc.commit(put(b"b"), false, &mut apply).unwrap(), 2);
        assert_eq!(gc.commit(put(b"c"), true, &mut apply).unwrap(), 3);
        assert_eq!((gc.visible_seq(), gc.last_seq(), mem.len()), (0, 3, 3));
        assert_eq!(gc.stats().syncs, 0);
        let gate = gc.begin_host_sync().unwrap().expect("a sync is needed");
        assert!(gc.begin_host_sync().is_err(), "one host sync at a time");
        // Written while the host syncs: the next sync's.
        assert_eq!(gc.commit(put(b"d"), true, &mut apply).unwrap(), 4);
        let result = gate.file().sync();
        gc.finish_host_sync(result).unwrap();
        assert_eq!(
            gc.visible_seq(),
            3,
            "what was written before the sync started"
        );
        let gate = gc.begin_host_sync().unwrap().expect("d waits");
        gc.finish_host_sync(gate.file().sync()).unwrap();
        assert_eq!(gc.visible_seq(), 4);
        assert_eq!(gc.begin_host_sync().unwrap().map(|_| ()), None);
        assert_eq!(
            gc.stats(),
            GroupCommitStats {
                commits: 4,
                groups: 4,
                syncs: 2
            }
        );
        assert!(gc.finish_host_sync(Ok(())).is_err(), "no sync under way");
    }

    #[test]
    fn unsynced_deferred_writes_are_visible_at_once_when_no_sync_waits() {
        let s = MemoryStorage::new();
        let (gc, _mem) = deferred(&s);
        let mut apply = |_: u64, _: &WriteBatch| Ok(());
        gc.commit(put(b"a"), false, &mut apply).unwrap();
        assert_eq!(gc.visible_seq(), 1);
        assert_eq!(gc.stats().syncs, 0);
    }

    #[test]
    fn a_failed_host_sync_fails_the_waiting_writes_and_poisons() {
        let s = FaultyStorage::new(Arc::new(MemoryStorage::new()));
        let (gc, _mem) = deferred(&s);
        let mut apply = |_: u64, _: &WriteBatch| Ok(());
        gc.commit(put(b"a"), false, &mut apply).unwrap();
        gc.commit(put(b"b"), true, &mut apply).unwrap();
        gc.commit(put(b"c"), false, &mut apply).unwrap();
        let gate = gc.begin_host_sync().unwrap().unwrap();
        s.fail_next_sync();
        let e = gc.finish_host_sync(gate.file().sync()).unwrap_err();
        assert_eq!(e.code(), "IO");
        assert_eq!(
            gc.visible_seq(),
            1,
            "nothing past the failed sync becomes visible"
        );
        assert_eq!(gc.poisoned().map(|e| e.code()), Some("IO"));
        assert!(gc.commit(put(b"d"), true, &mut apply).is_err());
        assert!(gc.begin_host_sync().is_err());
        // The gate remembers: a later sync of the log is never trusted.
        assert!(gate.sync(gate.written()).is_err());
        assert_eq!(gc.visible_seq(), 1);
    }

    #[test]
    fn work_that_needs_every_write_visible_runs_a_waiting_deferred_sync_inline() {
        let s = MemoryStorage::new();
        let (gc, _mem) = deferred(&s);
        let mut apply = |_: u64, _: &WriteBatch| Ok(());
        gc.commit(put(b"a"), true, &mut apply).unwrap();
        gc.commit(put(b"b"), false, &mut apply).unwrap();
        let last = gc.exclusive(|_, last| Ok(last)).unwrap();
        assert_eq!((last, gc.visible_seq(), gc.stats().syncs), (2, 2, 1));
        gc.commit(put(b"c"), true, &mut apply).unwrap();
        gc.set_deferred_sync(false).unwrap();
        assert_eq!(gc.visible_seq(), 3, "turning deferral off syncs what waits");
        assert_eq!(gc.commit(put(b"d"), true, &mut apply).unwrap(), 4);
        assert_eq!((gc.visible_seq(), gc.stats().syncs), (4, 3));
    }

    #[test]
    fn a_sync_of_the_log_by_another_path_covers_the_deferred_writes_before_it() {
        // Close or a memtable switch syncs through the same gate: the host's next
        // begin_host_sync finds the waiting writes durable and publishes them.
        let s = MemoryStorage::new();
        let (gc, _mem) = deferred(&s);
        let mut apply = |_: u64, _: &WriteBatch| Ok(());
        gc.commit(put(b"a"), true, &mut apply).unwrap();
        gc.sync_written().unwrap();
        assert_eq!(
            gc.visible_seq(),
            0,
            "the gate is durable; the group waits for the report"
        );
        assert_eq!(
            gc.begin_host_sync().unwrap().map(|_| ()),
            None,
            "covered already"
        );
        assert_eq!(gc.visible_seq(), 1);
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn group_commit_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<GroupCommit>();
    }
}
