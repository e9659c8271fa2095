//! The registry of live snapshots: compaction must keep every version some snapshot can see.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Sequence numbers of live snapshots, with how many handles hold each.
#[derive(Debug, Default)]
pub(crate) struct SnapshotList {
    live: Mutex<BTreeMap<u64, usize>>,
}

impl SnapshotList {
    /// Registers a snapshot at `seq`; it stays registered until the guard drops.
    #[cfg(test)]
    pub(crate) fn acquire(self: &Arc<Self>, seq: u64) -> SnapshotGuard {
        self.acquire_with(|| seq)
    }

    /// Registers a snapshot at the sequence number `seq()` returns, called while the list is
    /// locked: a reader of [`SnapshotList::sequences`] sees the registration or ran before the
    /// sequence number was read (and then kept every version it can need).
    pub(crate) fn acquire_with(self: &Arc<Self>, seq: impl FnOnce() -> u64) -> SnapshotGuard {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = seq();
        *live.entry(seq).or_insert(0) += 1;
        SnapshotGuard {
            list: Arc::clone(self),
            seq,
        }
    }

    /// The live snapshot sequence numbers, ascending.
    pub(crate) fn sequences(&self) -> Vec<u64> {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .copied()
            .collect()
    }

    fn release(&self, seq: u64) {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = live.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                live.remove(&seq);
            }
        }
    }
}

/// Keeps one snapshot registered while alive.
#[derive(Debug)]
pub(crate) struct SnapshotGuard {
    list: Arc<SnapshotList>,
    seq: u64,
}

impl SnapshotGuard {
    /// The snapshot's sequence number: it sees every write with a sequence number `<=` this.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }
}

impl Drop for SnapshotGuard {
    fn drop(&mut self) {
        self.list.release(self.seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_stays_registered_until_its_last_guard_drops() {
        let list = Arc::new(SnapshotList::default());
        let a = list.acquire(5);
        let b = list.acquire(5);
        let c = list.acquire(9);
        assert_eq!(list.sequences(), vec![5, 9]);
        drop(a);
        assert_eq!(list.sequences(), vec![5, 9]);
        drop(b);
        assert_eq!(list.sequences(), vec![9]);
        assert_eq!(c.seq(), 9);
        drop(c);
        assert!(list.sequences().is_empty());
    }
}
