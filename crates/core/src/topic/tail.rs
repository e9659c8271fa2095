//! A topic's committed tail: its first and next offsets as of the last commit, and, while
//! someone reads near the end, its most recent records — so that readers at the tail (a
//! [`crate::topic::Subscription`], a `read` from the next offset) neither take the topic's lock,
//! which an append holds across its commit, nor build an iterator over the tree.
//!
//! Invariants (under the tail's lock): `recent` holds exactly the records of offsets
//! `start..next`, in order, whose stored sizes sum to `bytes`; `first <= start <= next` unless
//! the ring is empty, then `start == next`. The ring is filled only by the commits of this
//! process (a topic's records are written by nothing else), in commit order (publication is
//! made with the topic's lock held).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::topic::options::ReadLimits;
use crate::topic::record::Record;
use crate::waiters::Waiters;

/// Most records kept in the ring (four reads of a subscription).
const RECENT_RECORDS: usize = 1024;
/// Most stored bytes kept in the ring.
const RECENT_BYTES: usize = 1 << 20;
/// Records published without a read near the tail after which the ring is emptied and stops
/// being filled: an idle topic keeps no copies.
const IDLE_RECORDS: u64 = 2 * RECENT_RECORDS as u64;

/// How long a waiter polls the next offset before it sleeps: a publisher appending every few
/// microseconds then never pays a wake-up (a system call and a context switch), nor the reader
/// the scheduler's delay.
const SPIN: Duration = Duration::from_micros(50);

/// A committed record and its stored size.
pub(crate) type Kept = (Record, usize);

/// The committed tail of one topic (module doc).
#[derive(Debug)]
pub(crate) struct Tail {
    inner: Mutex<Recent>,
    /// Notified when `next` moves or the tail is closed, if someone waits (with `inner`'s lock).
    grown: Waiters,
    /// Whether appends should hand their records to the ring (someone reads near the tail).
    wanted: AtomicBool,
    /// `next`, readable without the lock (set under it, after the ring).
    next: AtomicU64,
}

#[derive(Debug)]
struct Recent {
    first: u64,
    next: u64,
    start: u64,
    /// Shared, so that a read copies them after releasing the lock.
    recent: VecDeque<(Arc<Record>, usize)>,
    bytes: usize,
    /// Records published since the last read near the tail.
    unread: u64,
    /// The topic was deleted.
    closed: bool,
}

/// What the tail can say about a read from an offset.
#[derive(Debug)]
pub(crate) enum TailRead {
    /// The records from the offset on (empty at the next offset).
    Records(Vec<Record>),
    /// The offset is outside `first..=next`.
    OutOfRange { first: u64, next: u64 },
    /// The records are older than the ring: read them from the tree, below `next` (a commit
    /// makes its records visible in the tree before it publishes them here: a reader must not
    /// move past the published end).
    Stored { next: u64 },
    /// The topic was deleted.
    Closed,
}

impl Tail {
    /// The tail of a topic holding offsets `first..next`, with an empty ring.
    pub(crate) fn new(first: u64, next: u64) -> Tail {
        Tail {
            inner: Mutex::new(Recent {
                first,
                next,
                start: next,
                recent: VecDeque::new(),
                bytes: 0,
                unread: 0,
                closed: false,
            }),
            grown: Waiters::default(),
            wanted: AtomicBool::new(false),
            next: AtomicU64::new(next),
        }
    }

    /// Whether a commit should hand its appended records to [`Tail::publish`].
    pub(crate) fn wants_records(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    /// Whether the ring could keep a record of `size` stored bytes (a larger one would be
    /// dropped at once: the commit keeps its copy, and the ring starts again after it).
    pub(crate) fn could_keep(size: usize) -> bool {
        size <= RECENT_BYTES
    }

    /// The committed `(first, next)` offsets.
    pub(crate) fn bounds(&self) -> (u64, u64) {
        let r = self.lock();
        (r.first, r.next)
    }

    /// Publishes a commit: the topic now holds `first..next`; `fresh` are the records it
    /// appended with their stored sizes, if the ring wanted them (a commit that did not hand
    /// over all its records empties the ring). Wakes the waiters if `next` moved.
    pub(crate) fn publish(&self, first: u64, next: u64, fresh: Vec<Kept>) {
        let mut r = self.lock();
        let grew = next != r.next;
        let contiguous = fresh.first().is_none_or(|(rec, _)| rec.offset == r.next)
            && r.next + fresh.len() as u64 == next;
        if !contiguous || !self.wants_records() {
            r.clear_at(next);
        } else {
            for (record, size) in fresh {
                r.bytes += size;
                r.recent.push_back((Arc::new(record), size));
            }
            r.unread += next - r.next;
        }
        r.next = next;
        r.first = first;
        r.trim();
        self.next.store(next, Ordering::Release);
        if r.unread > IDLE_RECORDS {
            self.wanted.store(false, Ordering::Relaxed);
            r.clear_at(next);
        }
        drop(r);
        if grew {
            self.grown.notify_all();
        }
    }

    /// Reads from `offset` within `limits` if the ring holds it (module doc).
    pub(crate) fn read(&self, offset: u64, limits: ReadLimits) -> TailRead {
        let mut r = self.lock();
        if r.closed {
            return TailRead::Closed;
        }
        let (first, next) = (r.first, r.next);
        if offset < first || offset > next {
            return TailRead::OutOfRange { first, next };
        }
        if next - offset <= RECENT_RECORDS as u64 {
            r.unread = 0;
            self.wanted.store(true, Ordering::Relaxed);
        }
        if offset < r.start {
            return TailRead::Stored { next };
        }
        let skip = (offset - r.start) as usize;
        let mut shared = Vec::new();
        let mut bytes = 0usize;
        for (record, size) in r.recent.range(skip..) {
            if shared.len() >= limits.limit || (bytes >= limits.max_bytes && !shared.is_empty()) {
                break;
            }
            bytes += size;
            shared.push(record.clone());
        }
        drop(r);
        TailRead::Records(shared.iter().map(|r| Record::clone(r)).collect())
    }

    /// Waits up to `timeout` until the next offset passes `position` or the tail is closed:
    /// polls for [`SPIN`] first, then sleeps until woken.
    pub(crate) fn wait_past(&self, position: u64, timeout: Duration) {
        let spin_until = Instant::now() + SPIN.min(timeout);
        while Instant::now() < spin_until {
            for _ in 0..64 {
                if self.next.load(Ordering::Acquire) > position {
                    return;
                }
                std::hint::spin_loop();
            }
        }
        let r = self.lock();
        if r.next > position || r.closed {
            return;
        }
        drop(self.grown.wait_timeout(r, timeout));
    }

    /// The topic was deleted: frees the ring and wakes every waiter.
    pub(crate) fn close(&self) {
        let mut r = self.lock();
        r.closed = true;
        let next = r.next;
        r.clear_at(next);
        drop(r);
        self.grown.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, Recent> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Recent {
    /// Empties the ring; it starts again at `next`.
    fn clear_at(&mut self, next: u64) {
        self.recent = VecDeque::new();
        self.bytes = 0;
        self.start = next;
    }

    /// Drops the oldest records while the ring is over a bound or below `first`.
    fn trim(&mut self) {
        if self.recent.is_empty() {
            self.start = self.next;
            return;
        }
        while let Some((record, size)) = self.recent.front() {
            let over = self.recent.len() > RECENT_RECORDS || self.bytes > RECENT_BYTES;
            if !over && record.offset >= self.first {
                break;
            }
            self.bytes -= size;
            self.recent.pop_front();
        }
        self.start = self.recent.front().map_or(self.next, |(r, _)| r.offset);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn kept(offset: u64, size: usize) -> Kept {
        let record = Record {
            offset,
            time_ms: offset,
            key: None,
            headers: Vec::new(),
            value: vec![offset as u8; size],
        };
        (record, size)
    }

    fn all() -> ReadLimits {
        ReadLimits {
            limit: usize::MAX,
            max_bytes: usize::MAX,
        }
    }

    fn offsets(read: TailRead) -> Option<Vec<u64>> {
        match read {
            TailRead::Records(r) => Some(r.iter().map(|r| r.offset).collect()),
            _ => None,
        }
    }

    /// Publishes one commit of offsets `from..to` the way `locked.rs` does (records only if
    /// wanted).
    fn commit(tail: &Tail, first: u64, from: u64, to: u64) {
        let fresh = if tail.wants_records() {
            (from..to).map(|o| kept(o, 10)).collect()
        } else {
            Vec::new()
        };
        tail.publish(first, to, fresh);
    }

    #[test]
    fn the_ring_fills_only_after_a_read_near_the_tail_and_serves_from_there() {
        let tail = Tail::new(0, 5);
        commit(&tail, 0, 5, 7);
        assert!(matches!(tail.read(5, all()), TailRead::Stored { .. }));
        assert!(
            tail.wants_records(),
            "a read near the tail asks for records"
        );
        commit(&tail, 0, 7, 9);
        assert_eq!(offsets(tail.read(7, all())), Some(vec![7, 8]));
        assert_eq!(offsets(tail.read(9, all())), Some(vec![]));
        assert!(matches!(tail.read(6, all()), TailRead::Stored { .. }));
        assert!(matches!(
            tail.read(10, all()),
            TailRead::OutOfRange { first: 0, next: 9 }
        ));
    }

    #[test]
    fn a_commit_that_did_not_hand_over_its_records_empties_the_ring() {
        let tail = Tail::new(0, 0);
        tail.read(0, all());
        commit(&tail, 0, 0, 3);
        tail.publish(0, 5, Vec::new()); // appended 3..5 before the ring was wanted
        assert!(matches!(tail.read(3, all()), TailRead::Stored { .. }));
        assert_eq!(offsets(tail.read(5, all())), Some(vec![]));
        commit(&tail, 0, 5, 6);
        assert_eq!(offsets(tail.read(5, all())), Some(vec![5]));
    }

    #[test]
    fn retention_and_the_bounds_drop_the_oldest_records_of_the_ring() {
        let tail = Tail::new(0, 0);
        tail.read(0, all());
        commit(&tail, 0, 0, 4);
        commit(&tail, 2, 4, 5); // retention moved first to 2
        assert!(matches!(
            tail.read(1, all()),
            TailRead::OutOfRange { first: 2, next: 5 }
        ));
        assert_eq!(offsets(tail.read(2, all())), Some(vec![2, 3, 4]));

        let n = RECENT_RECORDS as u64 + 10;
        commit(&tail, 2, 5, 5 + n);
        let end = 5 + n;
        let start = end - RECENT_RECORDS as u64;
        assert!(matches!(
            tail.read(start - 1, all()),
            TailRead::Stored { .. }
        ));
        assert_eq!(
            offsets(tail.read(end - 2, all())),
            Some(vec![end - 2, end - 1])
        );

        let big = Tail::new(0, 0);
        big.read(0, all());
        let fresh = (0..3).map(|o| kept(o, RECENT_BYTES / 2)).collect();
        big.publish(0, 3, fresh);
        assert!(matches!(big.read(0, all()), TailRead::Stored { .. }));
        assert_eq!(offsets(big.read(1, all())), Some(vec![1, 2]));
    }

    #[test]
    fn reads_from_the_ring_keep_to_the_limits() {
        let tail = Tail::new(0, 0);
        tail.read(0, all());
        commit(&tail, 0, 0, 6);
        let limits = |limit, max_bytes| ReadLimits { limit, max_bytes };
        assert_eq!(offsets(tail.read(1, limits(2, 1000))), Some(vec![1, 2]));
        assert_eq!(offsets(tail.read(1, limits(9, 15))), Some(vec![1, 2]));
        assert_eq!(offsets(tail.read(1, limits(9, 0))), Some(vec![1]));
        assert_eq!(offsets(tail.read(1, limits(0, 1000))), Some(vec![]));
    }

    #[test]
    fn an_idle_tail_stops_keeping_records() {
        let tail = Tail::new(0, 0);
        tail.read(0, all());
        for o in 0..=IDLE_RECORDS {
            commit(&tail, 0, o, o + 1);
        }
        assert!(!tail.wants_records());
        assert!(tail.lock().recent.is_empty());
    }

    #[test]
    fn a_waiter_wakes_on_growth_and_on_close() {
        let tail = Arc::new(Tail::new(0, 0));
        let waiter = {
            let tail = tail.clone();
            std::thread::spawn(move || tail.wait_past(0, Duration::from_secs(60)))
        };
        while tail.grown.waiting() == 0 {
            std::thread::yield_now();
        }
        commit(&tail, 0, 0, 1);
        waiter.join().unwrap();

        let waiter = {
            let tail = tail.clone();
            std::thread::spawn(move || tail.wait_past(1, Duration::from_secs(60)))
        };
        while tail.grown.waiting() == 0 {
            std::thread::yield_now();
        }
        tail.close();
        waiter.join().unwrap();
        assert!(matches!(tail.read(1, all()), TailRead::Closed));
    }
}
