//! [`RangeTombstoneSet`]: the range tombstones (`delete_range`) a read must respect.
//!
//! Strategy: fragmentation, as in RocksDB's `FragmentedRangeTombstoneList`. The tombstones'
//! start and end keys cut the key space into non-overlapping fragments; each fragment keeps the
//! sequence numbers of every tombstone spanning it, in descending order. A query is two binary
//! searches — the fragment holding the key, then the newest sequence number visible at the
//! snapshot — so O(log f + log s) for f fragments and s tombstones stacked on one fragment.
//! Building sorts the boundaries and sweeps them once: O(n log n) for n tombstones, plus the
//! output size, which is f × (tombstones per fragment): linear unless many tombstones overlap
//! one another (nested ranges), quadratic in the worst case. Adjacent fragments with identical
//! sequence lists are merged.
//!
//! Sequence numbers are kept per fragment, not only the maximum, so one set answers for any
//! snapshot (a `DbIterator` at an old snapshot must ignore newer tombstones).

use std::collections::BTreeMap;

use super::internal::InternalIterator;

use crate::key::ValueKind;
use crate::sorting::sort_by;
use crate::Result;

pub use crate::key::RangeTombstone;

#[derive(Debug, Clone)]
struct Fragment {
    start: Vec<u8>,
    end: Vec<u8>,
    /// Sequence numbers of the tombstones spanning the fragment, newest first, no duplicates.
    seqs: Vec<u64>,
}

/// A fragmented, immutable set of range tombstones. Cheap to query; built once per read view.
#[derive(Debug, Clone, Default)]
pub struct RangeTombstoneSet {
    /// Non-overlapping, sorted by start, each non-empty (`start < end`, `seqs` not empty).
    fragments: Vec<Fragment>,
}

impl RangeTombstoneSet {
    /// The empty set.
    pub fn new() -> RangeTombstoneSet {
        RangeTombstoneSet::default()
    }

    /// The set of `tombstones`, in any order. Empty ranges (`start >= end`) delete nothing and
    /// are dropped; duplicates are harmless.
    pub fn from_tombstones(tombstones: impl IntoIterator<Item = RangeTombstone>) -> Self {
        // Sweep events: at each boundary key, tombstones starting there are added and those
        // ending there removed. Keys are borrowed from `ts` during the sweep.
        let ts: Vec<RangeTombstone> = tombstones.into_iter().filter(|t| t.start < t.end).collect();
        let mut events: Vec<(&[u8], bool, u64)> = Vec::with_capacity(ts.len() * 2);
        for t in &ts {
            events.push((&t.start, true, t.seq));
            events.push((&t.end, false, t.seq));
        }
        sort_by(&mut events, |a, b| a.0.cmp(b.0));

        let mut fragments: Vec<Fragment> = Vec::new();
        // Active tombstones: seq -> how many active tombstones carry it.
        let mut active: BTreeMap<u64, u32> = BTreeMap::new();
        let mut i = 0;
        while let Some(&(key, _, _)) = events.get(i) {
            // Apply every event at `key`.
            while let Some(&(k, is_start, seq)) = events.get(i) {
                if k != key {
                    break;
                }
                if is_start {
                    *active.entry(seq).or_insert(0) += 1;
                } else if let Some(n) = active.get_mut(&seq) {
                    *n -= 1;
                    if *n == 0 {
                        active.remove(&seq);
                    }
                }
                i += 1;
            }
            let Some(&(next_key, _, _)) = events.get(i) else {
                break;
            };
            if active.is_empty() {
                continue;
            }
            let seqs: Vec<u64> = active.keys().rev().copied().collect();
            match fragments.last_mut() {
                Some(last) if last.end.as_slice() == key && last.seqs == seqs => {
                    last.end = next_key.to_vec();
                }
                _ => fragments.push(Fragment {
                    start: key.to_vec(),
                    end: next_key.to_vec(),
                    seqs,
                }),
            }
        }
        RangeTombstoneSet { fragments }
    }

    /// Reads every [`ValueKind::RangeTombstone`] entry of `source` (from its first entry to its
    /// last) into `out`. For memtables and tables known to hold range tombstones; the cursor is
    /// left at an unspecified position.
    pub fn collect_from(
        source: &mut dyn InternalIterator,
        out: &mut Vec<RangeTombstone>,
    ) -> Result<()> {
        source.seek_to_first()?;
        while source.valid() {
            if source.kind() == ValueKind::RangeTombstone {
                out.push(RangeTombstone {
                    start: source.key().to_vec(),
                    end: source.value().to_vec(),
                    seq: source.seq(),
                });
            }
            source.next()?;
        }
        Ok(())
    }

    /// Whether the set holds no tombstone.
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    /// Number of fragments (for tests and stats).
    pub fn fragment_count(&self) -> usize {
        self.fragments.len()
    }

    /// The newest sequence number `s <= snapshot_seq` of a tombstone covering `key`, if any.
    /// A version of `key` with sequence number below it is deleted at that snapshot.
    pub fn max_covering_seq(&self, key: &[u8], snapshot_seq: u64) -> Option<u64> {
        if self.fragments.is_empty() {
            return None;
        }
        let i = self
            .fragments
            .partition_point(|f| f.start.as_slice() <= key)
            .checked_sub(1)?;
        let f = self.fragments.get(i)?;
        if key >= f.end.as_slice() {
            return None;
        }
        let j = f.seqs.partition_point(|&s| s > snapshot_seq);
        f.seqs.get(j).copied()
    }

    /// True if some tombstone `t` has `t.start <= key < t.end` and
    /// `entry_seq < t.seq <= snapshot_seq`: the version of `key` written at `entry_seq` is
    /// deleted in the view at `snapshot_seq`.
    #[inline]
    pub fn covers(&self, key: &[u8], entry_seq: u64, snapshot_seq: u64) -> bool {
        self.max_covering_seq(key, snapshot_seq)
            .is_some_and(|s| s > entry_seq)
    }
}

impl FromIterator<RangeTombstone> for RangeTombstoneSet {
    fn from_iter<T: IntoIterator<Item = RangeTombstone>>(iter: T) -> Self {
        RangeTombstoneSet::from_tombstones(iter)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn t(start: &str, end: &str, seq: u64) -> RangeTombstone {
        RangeTombstone {
            start: start.as_bytes().to_vec(),
            end: end.as_bytes().to_vec(),
            seq,
        }
    }

    fn naive(ts: &[RangeTombstone], key: &[u8], entry_seq: u64, snapshot: u64) -> bool {
        ts.iter().any(|t| {
            t.start.as_slice() <= key
                && key < t.end.as_slice()
                && entry_seq < t.seq
                && t.seq <= snapshot
        })
    }

    #[test]
    fn covers_respects_bounds_and_sequence_numbers() {
        let set = RangeTombstoneSet::from_tombstones([t("b", "d", 10), t("c", "f", 5)]);
        assert!(!set.covers(b"a", 1, 100));
        assert!(set.covers(b"b", 1, 100));
        assert!(set.covers(b"c\xff", 9, 100));
        assert!(!set.covers(b"d", 9, 100)); // only [c, f) @5 here
        assert!(set.covers(b"d", 4, 100));
        assert!(!set.covers(b"f", 1, 100)); // end is exclusive
        assert!(!set.covers(b"b", 10, 100)); // not older than the tombstone
        assert!(!set.covers(b"b", 1, 9)); // tombstone not visible at the snapshot
        assert!(set.covers(b"c", 1, 9)); // but the older one is
        assert_eq!(set.max_covering_seq(b"c", 100), Some(10));
        assert_eq!(set.max_covering_seq(b"c", 7), Some(5));
        assert_eq!(set.max_covering_seq(b"c", 4), None);
    }

    #[test]
    fn empty_ranges_and_empty_sets_cover_nothing() {
        let set: RangeTombstoneSet = [
            (b"b".to_vec(), b"b".to_vec(), 10),
            (b"d".to_vec(), b"c".to_vec(), 10),
        ]
        .into_iter()
        .map(RangeTombstone::from)
        .collect();
        assert!(set.is_empty());
        assert!(!set.covers(b"b", 0, u64::MAX));
        assert!(!RangeTombstoneSet::new().covers(b"", 0, u64::MAX));
    }

    #[test]
    fn adjacent_fragments_with_equal_sequences_merge() {
        let set =
            RangeTombstoneSet::from_tombstones([t("a", "c", 3), t("c", "e", 3), t("b", "d", 3)]);
        assert_eq!(set.fragment_count(), 1);
        assert!(set.covers(b"d", 2, 3));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn covers_matches_a_scan_of_all_tombstones(
            raw in prop::collection::vec((0u8..12, 0u8..12, 1u64..20), 0..12),
            queries in prop::collection::vec((0u8..13, 0u64..21, 0u64..21), 1..50),
        ) {
            let ts: Vec<RangeTombstone> = raw
                .iter()
                .map(|&(a, b, s)| RangeTombstone { start: vec![a], end: vec![b], seq: s })
                .collect();
            let set = RangeTombstoneSet::from_tombstones(ts.clone());
            for (k, e, snap) in queries {
                prop_assert_eq!(set.covers(&[k], e, snap), naive(&ts, &[k], e, snap));
                // Keys between the single-byte boundaries too.
                prop_assert_eq!(set.covers(&[k, 0], e, snap), naive(&ts, &[k, 0], e, snap));
            }
        }
    }
}
