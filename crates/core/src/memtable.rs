//! The memtable: an ordered in-memory table of internal entries (user key, sequence number,
//! kind, value) in internal order (key ascending, sequence number descending, as
//! [`crate::sstable::compare_internal`]).
//!
//! Structure: a lock-free skip list (`crossbeam_skiplist::SkipMap`), so reads and iterators run
//! concurrently with inserts without locks, and inserts may even come from several threads.
//! Each entry's key and value share one reference-counted allocation, so an iterator can hold
//! on to entries cheaply. Lookups compare borrowed keys through a trait-object `Borrow` (no
//! allocation per `get` or `seek`).
//!
//! Range tombstones (`delete_range`) are stored as entries of kind
//! [`ValueKind::RangeTombstone`] whose value is the exclusive end key, and also in a side list
//! ([`MemTable::range_tombstones`]). [`MemTable::get`] does not apply them: the read path
//! combines them with point entries.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::ops::{Bound, Deref};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, PoisonError};

use crossbeam_skiplist::SkipMap;

use crate::iter::InternalIterator;
use crate::key::ValueKind;
use crate::write::batch::{BatchOp, WriteBatch};

use crate::Result;

/// Bytes counted per entry on top of its key and value: skip-list node (header, average tower
/// of ~1.33 pointers), the entry's fields, the shared allocation's header, allocator rounding.
pub const ENTRY_OVERHEAD: usize = 96;

/// The first 16 bytes of `key` as a big-endian number, zero-padded. Keys compare like their
/// prefixes whenever the prefixes differ (a shorter key is padded with zeros, and a key that is
/// a proper prefix of another sorts first either way).
#[inline]
fn key_prefix(key: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = key.len().min(16);
    if let (Some(dst), Some(src)) = (b.get_mut(..n), key.get(..n)) {
        dst.copy_from_slice(src);
    }
    u128::from_be_bytes(b)
}

/// One stored entry. Ordered by (key asc, seq desc) only.
#[derive(Clone)]
struct Node {
    /// The key's first 16 bytes ([`key_prefix`]): most comparisons end here, without touching
    /// `data` (a cache miss per skip-list node otherwise) and without a `memcmp` call.
    prefix: u128,
    /// The key's bytes, then the value's, possibly with bytes between them (the entry's bytes
    /// copied whole out of a write batch, value length included).
    data: Arc<[u8]>,
    /// `data[..key_len]` is the key (at most [`crate::write::batch::MAX_KEY_SIZE`] bytes).
    key_len: u32,
    /// `data[value_at..]` is the value (`value_at >= key_len`).
    value_at: u32,
    seq: u64,
    kind: ValueKind,
}

impl Node {
    fn key(&self) -> &[u8] {
        self.data.get(..self.key_len as usize).unwrap_or_default()
    }
    fn value(&self) -> &[u8] {
        self.data.get(self.value_at as usize..).unwrap_or_default()
    }
}

/// Internal order of two keys whose [`key_prefix`]es are equal, then of their sequence
/// numbers: equal prefixes mean equal first 16 bytes, with a key shorter than 16 bytes padded
/// with zeros. So if either key is shorter than 16 bytes, the shorter one is a prefix of the
/// other (or they are equal), and otherwise the bytes after the 16th decide.
#[inline]
fn compare_after_prefix(akey: &[u8], aseq: u64, bkey: &[u8], bseq: u64) -> Ordering {
    let keys = if akey.len() < 16 || bkey.len() < 16 {
        akey.len().cmp(&bkey.len())
    } else {
        akey.get(16..).cmp(&bkey.get(16..))
    };
    keys.then(bseq.cmp(&aseq))
}

/// A key to compare against stored nodes without building one.
trait InternalKeyView {
    fn prefix(&self) -> u128;
    fn user_key(&self) -> &[u8];
    fn seq(&self) -> u64;
}

impl InternalKeyView for Node {
    fn prefix(&self) -> u128 {
        self.prefix
    }
    fn user_key(&self) -> &[u8] {
        self.key()
    }
    fn seq(&self) -> u64 {
        self.seq
    }
}

/// A borrowed probe (key, seq) with its key's prefix.
struct Probe<'a>(&'a [u8], u64, u128);

impl<'a> Probe<'a> {
    fn new(key: &'a [u8], seq: u64) -> Probe<'a> {
        Probe(key, seq, key_prefix(key))
    }
}

impl InternalKeyView for Probe<'_> {
    fn prefix(&self) -> u128 {
        self.2
    }
    fn user_key(&self) -> &[u8] {
        self.0
    }
    fn seq(&self) -> u64 {
        self.1
    }
}

impl<'a> Borrow<dyn InternalKeyView + 'a> for Node {
    fn borrow(&self) -> &(dyn InternalKeyView + 'a) {
        self
    }
}

impl PartialEq for dyn InternalKeyView + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for dyn InternalKeyView + '_ {}
impl PartialOrd for dyn InternalKeyView + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for dyn InternalKeyView + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        self.prefix().cmp(&other.prefix()).then_with(|| {
            compare_after_prefix(self.user_key(), self.seq(), other.user_key(), other.seq())
        })
    }
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Node {}
impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Node {
    fn cmp(&self, other: &Self) -> Ordering {
        self.prefix
            .cmp(&other.prefix)
            .then_with(|| compare_after_prefix(self.key(), self.seq, other.key(), other.seq))
    }
}

fn probe<'a>(p: &'a Probe<'a>) -> &'a (dyn InternalKeyView + 'a) {
    p
}

/// A value held by the memtable, shared without copying. Dereferences to the value bytes.
#[derive(Clone)]
pub struct MemValue(Node);

impl Deref for MemValue {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0.value()
    }
}

impl AsRef<[u8]> for MemValue {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for MemValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemValue({:?})", self.0.value())
    }
}

/// A range tombstone: every key in `start..end` deleted at `seq`.
pub type RangeTombstone = (Vec<u8>, Vec<u8>, u64);

/// An ordered in-memory table. `Send + Sync`: share it in an [`Arc`]; any number of threads may
/// read, iterate and insert at once.
pub struct MemTable {
    map: SkipMap<Node, ()>,
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
    /// An empty memtable.
    pub fn new() -> MemTable {
        MemTable {
            map: SkipMap::new(),
            range_tombstones: Mutex::new(Vec::new()),
            memory: AtomicUsize::new(0),
            min_seq: AtomicU64::new(u64::MAX),
            max_seq: AtomicU64::new(0),
        }
    }

    /// Inserts one entry. For [`ValueKind::RangeTombstone`], `key` is the start and `value` the
    /// exclusive end. Sequence numbers are unique in a database; inserting the same (key, seq)
    /// twice replaces the entry. Once this returns, `get`, `iter` and `range_tombstones` calls
    /// that start afterwards see the entry.
    /// Keys must be at most [`crate::write::batch::MAX_KEY_SIZE`] bytes, values at most
    /// [`crate::write::batch::MAX_VALUE_SIZE`] (a batch's limits).
    pub fn insert(&self, key: &[u8], seq: u64, kind: ValueKind, value: &[u8]) {
        // One allocation: the iterator's exact length lets the Arc be filled in place.
        let data: Arc<[u8]> = key.iter().chain(value).copied().collect();
        self.insert_data(data, key.len(), key.len(), seq, kind);
    }

    /// Inserts the entry whose key is `data[..key_len]` and value `data[value_at..]`.
    fn insert_data(
        &self,
        data: Arc<[u8]>,
        key_len: usize,
        value_at: usize,
        seq: u64,
        kind: ValueKind,
    ) {
        let key = data.get(..key_len).unwrap_or_default();
        let value = data.get(value_at..).unwrap_or_default();
        if kind == ValueKind::RangeTombstone {
            self.range_tombstones
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((key.to_vec(), value.to_vec(), seq));
        }
        let charge = key.len() + value.len() + ENTRY_OVERHEAD;
        let node = Node {
            prefix: key_prefix(key),
            key_len: u32::try_from(key.len()).unwrap_or(u32::MAX),
            value_at: u32::try_from(value_at).unwrap_or(u32::MAX),
            data,
            seq,
            kind,
        };
        self.map.insert(node, ());
        self.memory.fetch_add(charge, AtomicOrdering::Relaxed);
        self.min_seq.fetch_min(seq, AtomicOrdering::Relaxed);
        self.max_seq.fetch_max(seq, AtomicOrdering::Relaxed);
    }

    /// Inserts every operation of `batch`, operation `i` at sequence number `first_seq + i`.
    /// Each entry's bytes are copied out of the batch in one piece
    /// ([`RawOp`](crate::write::batch::RawOp)).
    pub fn apply(&self, first_seq: u64, batch: &WriteBatch) {
        for (i, raw) in batch.raw_ops().enumerate() {
            let seq = first_seq + i as u64;
            let (key_len, kind) = match raw.op {
                BatchOp::Put { key, .. } => (key.len(), ValueKind::Value),
                BatchOp::Delete { key } => (key.len(), ValueKind::Tombstone),
                BatchOp::DeleteRange { start, .. } => (start.len(), ValueKind::RangeTombstone),
                // Not a key: it only takes its sequence number, which the memtable's newest
                // sequence number must still cover (a flush records it as the last one).
                BatchOp::Annotation { .. } => {
                    self.max_seq.fetch_max(seq, AtomicOrdering::Relaxed);
                    continue;
                }
            };
            self.insert_data(Arc::from(raw.span), key_len, raw.second_at, seq, kind);
        }
    }

    /// The newest point entry of `key` with a sequence number `<= snapshot_seq`: its sequence
    /// number, kind ([`ValueKind::Value`] or [`ValueKind::Tombstone`]) and value. Range
    /// tombstones are not consulted (see [`MemTable::range_tombstones`]); a range tombstone
    /// starting at `key` is skipped.
    pub fn get(&self, key: &[u8], snapshot_seq: u64) -> Option<(u64, ValueKind, MemValue)> {
        let p = Probe::new(key, snapshot_seq);
        let mut entry = self.map.lower_bound(Bound::Included(probe(&p)))?;
        loop {
            let node = entry.key();
            if node.key() != key {
                return None;
            }
            if node.kind != ValueKind::RangeTombstone {
                return Some((node.seq, node.kind, MemValue(node.clone())));
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

    /// Approximate memory used: key and value bytes plus [`ENTRY_OVERHEAD`] per entry.
    pub fn approximate_memory(&self) -> usize {
        self.memory.load(AtomicOrdering::Relaxed)
    }

    /// Number of entries (range tombstones included).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the table holds no entry.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
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
    /// It holds the memtable alive and stays valid while inserts continue; it sees every entry
    /// inserted before it was positioned and may or may not see later ones.
    pub fn iter(self: &Arc<Self>) -> MemTableIter {
        MemTableIter {
            mem: Arc::clone(self),
            buf: Vec::new(),
            pos: 0,
            fill: FIRST_FILL,
        }
    }

    /// Calls `f` for every entry in internal order (key, seq, kind, value): the fast path for
    /// flushing a memtable that no longer receives inserts.
    pub fn for_each(
        &self,
        mut f: impl FnMut(&[u8], u64, ValueKind, &[u8]) -> Result<()>,
    ) -> Result<()> {
        for entry in self.map.iter() {
            let n = entry.key();
            f(n.key(), n.seq, n.kind, n.value())?;
        }
        Ok(())
    }
}

/// Entries fetched by the first refill after a positioning call; later refills double it.
const FIRST_FILL: usize = 4;
/// Most entries fetched by one refill.
const MAX_FILL: usize = 256;

/// A cursor over a [`MemTable`] implementing [`InternalIterator`], both directions.
///
/// It copies handles (reference-counted, no byte copies) to a window of entries out of the skip
/// list, so moving costs one skip-list walk per window and a seek `O(log n)`.
pub struct MemTableIter {
    mem: Arc<MemTable>,
    /// A window of consecutive entries in internal order; the cursor is `buf[pos]`.
    buf: Vec<Node>,
    pos: usize,
    /// Size of the next refill.
    fill: usize,
}

impl std::fmt::Debug for MemTableIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTableIter")
            .field("valid", &self.valid())
            .finish()
    }
}

impl MemTableIter {
    fn current(&self) -> Option<&Node> {
        self.buf.get(self.pos)
    }

    /// Fills the window forward from `start` (an entry already found).
    fn fill_forward(&mut self, start: Option<crossbeam_skiplist::map::Entry<'_, Node, ()>>) {
        self.buf.clear();
        self.pos = 0;
        let mut e = start;
        while let Some(entry) = e {
            self.buf.push(entry.key().clone());
            if self.buf.len() >= self.fill {
                break;
            }
            e = entry.next();
        }
        self.fill = (self.fill * 2).min(MAX_FILL);
    }

    /// Fills the window backward from `start`; the cursor ends on `start`.
    fn fill_backward(&mut self, start: Option<crossbeam_skiplist::map::Entry<'_, Node, ()>>) {
        self.buf.clear();
        let mut e = start;
        while let Some(entry) = e {
            self.buf.push(entry.key().clone());
            if self.buf.len() >= self.fill {
                break;
            }
            e = entry.prev();
        }
        self.buf.reverse();
        self.pos = self.buf.len().saturating_sub(1);
        self.fill = (self.fill * 2).min(MAX_FILL);
    }

    fn seek_forward(&mut self, bound: Bound<(&[u8], u64)>) {
        let mem = Arc::clone(&self.mem);
        let start = match bound {
            Bound::Included((k, s)) => mem
                .map
                .lower_bound(Bound::Included(probe(&Probe::new(k, s)))),
            Bound::Excluded((k, s)) => mem
                .map
                .lower_bound(Bound::Excluded(probe(&Probe::new(k, s)))),
            Bound::Unbounded => mem.map.front(),
        };
        self.fill_forward(start);
    }

    fn seek_backward(&mut self, bound: Bound<(&[u8], u64)>) {
        let mem = Arc::clone(&self.mem);
        let start = match bound {
            Bound::Included((k, s)) => mem
                .map
                .upper_bound(Bound::Included(probe(&Probe::new(k, s)))),
            Bound::Excluded((k, s)) => mem
                .map
                .upper_bound(Bound::Excluded(probe(&Probe::new(k, s)))),
            Bound::Unbounded => mem.map.back(),
        };
        self.fill_backward(start);
    }

    fn invalidate(&mut self) {
        self.buf.clear();
        self.pos = 0;
    }
}

impl InternalIterator for MemTableIter {
    fn valid(&self) -> bool {
        self.pos < self.buf.len()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.fill = FIRST_FILL;
        self.seek_forward(Bound::Unbounded);
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.fill = FIRST_FILL;
        self.seek_backward(Bound::Unbounded);
        Ok(())
    }

    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.fill = FIRST_FILL;
        self.seek_forward(Bound::Included((key, seq)));
        Ok(())
    }

    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.fill = FIRST_FILL;
        self.seek_backward(Bound::Included((key, seq)));
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if self.pos + 1 < self.buf.len() {
            self.pos += 1;
            return Ok(());
        }
        let Some(cur) = self.current().cloned() else {
            return Ok(()); // invalid stays invalid
        };
        self.seek_forward(Bound::Excluded((cur.key(), cur.seq)));
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        if self.pos > 0 && self.pos < self.buf.len() {
            self.pos -= 1;
            return Ok(());
        }
        let Some(cur) = self.current().cloned() else {
            return Ok(());
        };
        self.seek_backward(Bound::Excluded((cur.key(), cur.seq)));
        if self.buf.is_empty() {
            self.invalidate();
        }
        Ok(())
    }

    fn key(&self) -> &[u8] {
        self.current().map(Node::key).unwrap_or_default()
    }

    fn seq(&self) -> u64 {
        self.current().map_or(0, |n| n.seq)
    }

    fn kind(&self) -> ValueKind {
        self.current().map_or(ValueKind::Tombstone, |n| n.kind)
    }

    fn value(&self) -> &[u8] {
        self.current().map(Node::value).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (s, k, v) = m.get(b"a", 4).unwrap();
        assert_eq!((s, k, &*v), (1, ValueKind::Value, &b"a1"[..]));
        assert_eq!(&*m.get(b"a", 6).unwrap().2, b"a5");
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
        let (s, kind, v) = m.get(b"k", 100).unwrap();
        assert_eq!((s, kind, &*v), (10, ValueKind::Value, &b"v"[..]));
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
    fn memory_estimate_counts_bytes_and_overhead() {
        let m = MemTable::new();
        m.insert(b"key", 1, ValueKind::Value, &[0; 100]);
        assert_eq!(m.approximate_memory(), 103 + ENTRY_OVERHEAD);
    }

    #[test]
    fn entries_order_like_their_internal_keys_whatever_their_prefixes() {
        let keys: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\0".to_vec(),
            b"a".to_vec(),
            b"a\0".to_vec(),
            b"a\0\0".to_vec(),
            vec![b'x'; 15],
            vec![b'x'; 16],
            [vec![b'x'; 16], vec![0]].concat(),
            [vec![b'x'; 16], vec![1]].concat(),
            [vec![b'x'; 15], vec![0]].concat(),
            [vec![b'x'; 16], b"ab".to_vec()].concat(),
            [vec![b'x'; 16], b"b".to_vec()].concat(),
            vec![0xff; 20],
        ];
        for a in &keys {
            for b in &keys {
                for (sa, sb) in [(1, 1), (1, 2), (2, 1)] {
                    let na = Probe::new(a, sa);
                    let nb = Probe::new(b, sb);
                    assert_eq!(
                        probe(&na).cmp(probe(&nb)),
                        crate::key::compare_internal(a, sa, b, sb),
                        "{a:?}@{sa} vs {b:?}@{sb}"
                    );
                }
            }
        }
    }

    #[test]
    fn memtable_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<MemTable>();
        check::<MemTableIter>();
    }
}
