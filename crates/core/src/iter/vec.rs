//! [`VecIterator`]: an [`InternalIterator`] over an owned, sorted vector of entries — for tests
//! and for small sources (a handful of range tombstones, a batch being applied).

use std::cmp::Ordering;

use super::internal::InternalIterator;

use crate::key::{compare_internal, Entry, ValueKind};
use crate::sorting::sort_by;
use crate::Result;

/// A cursor over owned entries in internal order. Never fails.
#[derive(Debug, Clone, Default)]
pub struct VecIterator {
    entries: Vec<Entry>,
    /// The current index; `entries.len()` when invalid.
    pos: usize,
}

impl VecIterator {
    /// A cursor over `entries`, which are sorted here into internal order (a stable sort, so
    /// exact duplicates keep their given order). Invalid until positioned.
    pub fn new(mut entries: Vec<Entry>) -> VecIterator {
        sort_by(&mut entries, |a, b| {
            compare_internal(&a.key, a.seq, &b.key, b.seq)
        });
        let pos = entries.len();
        VecIterator { entries, pos }
    }

    /// The entries, in internal order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn current(&self) -> Option<&Entry> {
        self.entries.get(self.pos)
    }

    fn invalidate(&mut self) {
        self.pos = self.entries.len();
    }

    /// Index of the first entry at or after (`key`, `seq`).
    fn lower_bound(&self, key: &[u8], seq: u64) -> usize {
        self.entries
            .partition_point(|e| compare_internal(&e.key, e.seq, key, seq) == Ordering::Less)
    }
}

impl InternalIterator for VecIterator {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.pos = 0;
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.pos = self
            .entries
            .len()
            .checked_sub(1)
            .unwrap_or(self.entries.len());
        Ok(())
    }

    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.pos = self.lower_bound(key, seq);
        Ok(())
    }

    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()> {
        // First index strictly after the target, minus one.
        let upper = self
            .entries
            .partition_point(|e| compare_internal(&e.key, e.seq, key, seq) != Ordering::Greater);
        match upper.checked_sub(1) {
            Some(p) => self.pos = p,
            None => self.invalidate(),
        }
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if self.valid() {
            self.pos += 1;
        }
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        if self.valid() {
            match self.pos.checked_sub(1) {
                Some(p) => self.pos = p,
                None => self.invalidate(),
            }
        }
        Ok(())
    }

    fn key(&self) -> &[u8] {
        self.current().map(|e| e.key.as_slice()).unwrap_or_default()
    }

    fn seq(&self) -> u64 {
        self.current().map_or(0, |e| e.seq)
    }

    fn kind(&self) -> ValueKind {
        self.current().map_or(ValueKind::Value, |e| e.kind)
    }

    fn value(&self) -> &[u8] {
        self.current()
            .map(|e| e.value.as_slice())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn e(key: &str, seq: u64) -> Entry {
        Entry {
            key: key.as_bytes().to_vec(),
            seq,
            kind: ValueKind::Value,
            value: format!("{key}@{seq}").into_bytes(),
        }
    }

    fn at(it: &VecIterator) -> Option<(String, u64)> {
        it.valid()
            .then(|| (String::from_utf8_lossy(it.key()).into_owned(), it.seq()))
    }

    #[test]
    fn sorts_and_seeks_both_ways() {
        let mut it = VecIterator::new(vec![e("b", 1), e("a", 2), e("b", 5), e("c", 3)]);
        assert!(!it.valid());
        it.seek_to_first().unwrap();
        assert_eq!(at(&it), Some(("a".into(), 2)));
        it.next().unwrap();
        assert_eq!(at(&it), Some(("b".into(), 5)));
        it.seek(b"b", 3).unwrap();
        assert_eq!(at(&it), Some(("b".into(), 1)));
        it.seek_for_prev(b"b", 3).unwrap();
        assert_eq!(at(&it), Some(("b".into(), 5)));
        it.seek_for_prev(b"b", 5).unwrap();
        assert_eq!(at(&it), Some(("b".into(), 5)));
        it.seek_for_prev(b"a", 3).unwrap();
        assert!(!it.valid());
        it.seek(b"c", 2).unwrap();
        assert!(!it.valid());
        it.seek_to_last().unwrap();
        assert_eq!(at(&it), Some(("c".into(), 3)));
        it.prev().unwrap();
        it.prev().unwrap();
        it.prev().unwrap();
        assert_eq!(at(&it), Some(("a".into(), 2)));
        it.prev().unwrap();
        assert!(!it.valid());
        it.prev().unwrap();
        assert!(!it.valid());
        assert_eq!(it.key(), b"");
    }

    #[test]
    fn empty_is_never_valid() {
        let mut it = VecIterator::new(Vec::new());
        it.seek_to_last().unwrap();
        assert!(!it.valid());
        it.seek_to_first().unwrap();
        assert!(!it.valid());
        it.seek_for_prev(b"x", 0).unwrap();
        assert!(!it.valid());
    }
}
