//! The memtable: an ordered in-memory table of internal entries (user key, sequence number,
//! kind, value) in internal order (key ascending, sequence number descending, as
//! [`crate::sstable::compare_internal`]).
//!
//! Structure: an inline skip list in an arena (`skiplist.rs`, `arena.rs`): each entry is one
//! bump allocation holding its fields, links, key and value, inside blocks of up to 1 MiB, so
//! an insert calls no system allocator and dropping a flushed memtable frees a few dozen
//! blocks. One writer at a time (the group commit's leader), readers and iterators without
//! locks, concurrently with it.
//!
//! Range tombstones (`delete_range`) are stored as entries of kind
//! [`ValueKind::RangeTombstone`] whose value is the exclusive end key, and also in a side list
//! ([`MemTable::range_tombstones`]). [`MemTable::get`] does not apply them: the read path
//! combines them with point entries.

mod arena;
mod iter;
mod order;
mod skiplist;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::key::ValueKind;
use crate::write::batch::{BatchOp, WriteBatch};
use crate::Result;

pub use iter::MemTableIter;
use order::Probe;
use skiplist::{Inserter, SkipList};

/// A range tombstone: every key in `start..end` deleted at `seq`.
pub type RangeTombstone = (Vec<u8>, Vec<u8>, u64);

/// An ordered in-memory table. `Send + Sync`: share it in an [`Arc`]; any number of threads may
/// read and iterate while one inserts (inserts from several threads take turns).
pub struct MemTable {
    list: Arc<SkipList>,
    range_tombstones: Mutex<Vec<RangeTombstone>>,
    memory: AtomicUsize,
    min_seq: AtomicU64,
    max_seq: AtomicU64,
}

impl std::fmt::Debug for MemTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTable")
            .field("len", &self.len())
            .field("approximate_memory", &self.approximate_memory())
            .finish()
    }
}

impl Default for MemTable {
    fn default() -> Self {
        MemTable::new()
    }
}

impl MemTable {
    /// An empty memtable (allocates its first arena block on the first insert).
    pub fn new() -> MemTable {
        MemTable {
            list: Arc::new(SkipList::new()),
            range_tombstones: Mutex::new(Vec::new()),
            memory: AtomicUsize::new(0),
            min_seq: AtomicU64::new(u64::MAX),
            max_seq: AtomicU64::new(0),
        }
    }

    /// Inserts one entry. For [`ValueKind::RangeTombstone`], `key` is the start and `value` the
    /// exclusive end. Sequence numbers are unique in a database; inserting the same (key, seq)
    /// twice keeps the first entry. Once this returns, `get`, `iter` and `range_tombstones`
    /// calls that start afterwards see the entry.
    /// Keys must be at most [`crate::write::batch::MAX_KEY_SIZE`] bytes, values at most
    /// [`crate::write::batch::MAX_VALUE_SIZE`] (a batch's limits).
    pub fn insert(&self, key: &[u8], seq: u64, kind: ValueKind, value: &[u8]) {
        let mut inserter = self.list.inserter();
        self.insert_with(&mut inserter, key, seq, kind, value);
    }

    fn insert_with(
        &self,
        inserter: &mut Inserter<'_>,
        key: &[u8],
        seq: u64,
        kind: ValueKind,
        value: &[u8],
    ) {
        if kind == ValueKind::RangeTombstone {
            self.range_tombstones
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((key.to_vec(), value.to_vec(), seq));
        }
        if let Some(bytes) = inserter.insert(key, value, seq, kind) {
            self.memory.fetch_add(bytes, AtomicOrdering::Relaxed);
        }
        self.min_seq.fetch_min(seq, AtomicOrdering::Relaxed);
        self.max_seq.fetch_max(seq, AtomicOrdering::Relaxed);
    }

    /// Inserts every operation of `batch`, operation `i` at sequence number `first_seq + i`,
    /// under one turn of the writer lock.
    pub fn apply(&self, first_seq: u64, batch: &WriteBatch) {
        let mut inserter = self.list.inserter();
        for (i, op) in batch.iter().enumerate() {
            let seq = first_seq + i as u64;
            let (key, kind, value) = match op {
                BatchOp::Put { key, value } => (key, ValueKind::Value, value),
                BatchOp::Delete { key } => (key, ValueKind::Tombstone, &[][..]),
                BatchOp::DeleteRange { start, end } => (start, ValueKind::RangeTombstone, end),
                // Not a key: it only takes its sequence number, which the memtable's newest
                // sequence number must still cover (a flush records it as the last one).
                BatchOp::Annotation { .. } => {
                    self.max_seq.fetch_max(seq, AtomicOrdering::Relaxed);
                    continue;
                }
            };
            self.insert_with(&mut inserter, key, seq, kind, value);
        }
    }

    /// The newest point entry of `key` with a sequence number `<= snapshot_seq`: its sequence
    /// number, kind ([`ValueKind::Value`] or [`ValueKind::Tombstone`]) and value, borrowed
    /// from the memtable. Range tombstones are not consulted (see
    /// [`MemTable::range_tombstones`]); a range tombstone starting at `key` is skipped.
    pub fn get(&self, key: &[u8], snapshot_seq: u64) -> Option<(u64, ValueKind, &[u8])> {
        let mut entry = self.list.seek(&Probe::new(key, snapshot_seq))?;
        loop {
            if entry.key() != key {
                return None;
            }
            if entry.kind() != ValueKind::RangeTombstone {
                return Some((entry.seq(), entry.kind(), entry.value()));
            }
            entry = entry.next()?;
        }
    }

    /// Every range tombstone inserted so far, as (start, end exclusive, seq), in insertion
    /// order. Cheap when there are none.
    pub fn range_tombstones(&self) -> Vec<RangeTombstone> {
        self.range_tombstones
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether any range tombstone was inserted.
    pub fn has_range_tombstones(&self) -> bool {
        !self
            .range_tombstones
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// Approximate memory used: the arena bytes of every entry (its key, value, fields and
    /// links), not counting the unused end of the current arena block.
    pub fn approximate_memory(&self) -> usize {
        self.memory.load(AtomicOrdering::Relaxed)
    }

    /// Number of entries (range tombstones included).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether the table holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Smallest sequence number inserted, `None` when empty.
    pub fn min_seq(&self) -> Option<u64> {
        let s = self.min_seq.load(AtomicOrdering::Relaxed);
        (!self.is_empty() && s != u64::MAX).then_some(s)
    }

    /// Largest sequence number inserted, `None` when empty.
    pub fn max_seq(&self) -> Option<u64> {
        (!self.is_empty()).then(|| self.max_seq.load(AtomicOrdering::Relaxed))
    }

    /// A cursor over all entries (range tombstones included) in internal order, unpositioned.
    /// It holds the memtable's entries alive and stays valid while inserts continue; it sees
    /// every entry inserted before it was positioned and may or may not see later ones.
    pub fn iter(self: &Arc<Self>) -> MemTableIter {
        MemTableIter::new(Arc::clone(&self.list))
    }

    /// Calls `f` for every entry in internal order (key, seq, kind, value): the fast path for
    /// flushing a memtable that no longer receives inserts.
    pub fn for_each(
        &self,
        mut f: impl FnMut(&[u8], u64, ValueKind, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut entry = self.list.first();
        while let Some(e) = entry {
            f(e.key(), e.seq(), e.kind(), e.value())?;
            entry = e.next();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::InternalIterator;

    fn table(entries: &[(&[u8], u64, ValueKind, &[u8])]) -> Arc<MemTable> {
        let m = Arc::new(MemTable::new());
        for (k, s, kind, v) in entries {
            m.insert(k, *s, *kind, v);
        }
        m
    }

    #[test]
    fn get_returns_the_newest_version_at_or_below_the_snapshot() {
        let m = table(&[
            (b"a", 1, ValueKind::Value, b"a1"),
            (b"a", 5, ValueKind::Value, b"a5"),
            (b"a", 7, ValueKind::Tombstone, b""),
            (b"b", 3, ValueKind::Value, b"b3"),
        ]);
        assert!(m.get(b"a", 0).is_none());
        assert_eq!(m.get(b"a", 4), Some((1, ValueKind::Value, &b"a1"[..])));
        assert_eq!(m.get(b"a", 6).unwrap().2, b"a5");
        assert_eq!(m.get(b"a", u64::MAX).unwrap().1, ValueKind::Tombstone);
        assert!(m.get(b"ab", 10).is_none());
        assert!(m.get(b"", 10).is_none());
        assert_eq!(m.min_seq(), Some(1));
        assert_eq!(m.max_seq(), Some(7));
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn get_skips_range_tombstones_which_are_listed_separately() {
        let mut b = WriteBatch::new();
        b.put(b"k", b"v").unwrap();
        b.delete_range(b"k", b"z").unwrap();
        let m = MemTable::new();
        m.apply(10, &b);
        assert_eq!(m.get(b"k", 100), Some((10, ValueKind::Value, &b"v"[..])));
        assert_eq!(
            m.range_tombstones(),
            vec![(b"k".to_vec(), b"z".to_vec(), 11)]
        );
        assert!(m.has_range_tombstones());
    }

    #[test]
    fn empty_table_reports_nothing() {
        let m = Arc::new(MemTable::new());
        assert!(m.is_empty());
        assert_eq!((m.min_seq(), m.max_seq()), (None, None));
        let mut it = m.iter();
        it.seek_to_first().unwrap();
        assert!(!it.valid());
        it.seek_to_last().unwrap();
        assert!(!it.valid());
        it.next().unwrap();
        it.prev().unwrap();
        assert!(!it.valid());
        assert_eq!(it.key(), b"");
    }

    #[test]
    fn memory_counts_each_entrys_arena_bytes() {
        let m = MemTable::new();
        m.insert(b"key", 1, ValueKind::Value, &[0; 100]);
        let one = m.approximate_memory();
        // Fields, at least one link, key and value, rounded to 8 bytes.
        assert!(
            (40 + 4 + 103..=40 + 12 * 8 + 103 + 7).contains(&one),
            "{one}"
        );
        assert!(m.list.allocated() >= one);
    }

    #[test]
    fn the_same_key_and_sequence_number_twice_keeps_the_first_entry() {
        let m = MemTable::new();
        m.insert(b"k", 3, ValueKind::Value, b"first");
        let memory = m.approximate_memory();
        m.insert(b"k", 3, ValueKind::Value, b"second");
        assert_eq!(m.len(), 1);
        assert_eq!(m.approximate_memory(), memory);
        assert_eq!(m.get(b"k", 3), Some((3, ValueKind::Value, &b"first"[..])));
    }

    #[test]
    #[cfg_attr(miri, ignore = "a million inserts take hours under Miri")]
    fn a_dropped_memtable_with_a_million_entries_frees_a_few_blocks() {
        let m = MemTable::new();
        let mut b = WriteBatch::new();
        for i in 0..1_000_000u64 {
            b.put(&i.to_be_bytes(), b"v").unwrap();
            if b.len() == 1000 {
                m.apply(i, &b);
                b = WriteBatch::new();
            }
        }
        assert_eq!(m.len(), 1_000_000);
        // Blocks of up to 1 MiB: about one per MiB of entries, plus the small first ones.
        let blocks_bound = m.approximate_memory() / (1 << 20) + 8;
        assert!(m.list.allocated() <= (blocks_bound + 1) << 20);
    }

    #[test]
    fn memtable_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<MemTable>();
        check::<MemTableIter>();
    }
}
