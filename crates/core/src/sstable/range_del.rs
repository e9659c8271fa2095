//! A cursor over a table's range tombstones as internal entries, so that they can be merged
//! with the point entries of the same and other sources (compaction, user iterators).

use std::cmp::Ordering;
use std::sync::Arc;

use super::{compare_internal, RangeTombstone, ValueKind};
use crate::iter::InternalIterator;
use crate::Result;

/// Yields each range tombstone as an entry `(start, seq, RangeTombstone, end)`, in internal
/// order. The list must be sorted by start ascending, then seq descending, as
/// [`super::TableReader::range_tombstones`] is.
#[derive(Debug, Clone)]
pub struct RangeTombstoneIter {
    list: Arc<[RangeTombstone]>,
    /// Current position; `list.len()` (or more) when invalid.
    pos: usize,
}

impl RangeTombstoneIter {
    /// A cursor over `list`, positioned nowhere.
    pub fn new(list: Arc<[RangeTombstone]>) -> RangeTombstoneIter {
        let pos = list.len();
        RangeTombstoneIter { list, pos }
    }

    fn current(&self) -> Option<&RangeTombstone> {
        self.list.get(self.pos)
    }
}

impl InternalIterator for RangeTombstoneIter {
    fn valid(&self) -> bool {
        self.pos < self.list.len()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.pos = 0;
        Ok(())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.pos = self.list.len().checked_sub(1).unwrap_or(self.list.len());
        Ok(())
    }
    fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        self.pos = self
            .list
            .partition_point(|t| compare_internal(&t.start, t.seq, key, seq) == Ordering::Less);
        Ok(())
    }
    fn seek_for_prev(&mut self, key: &[u8], seq: u64) -> Result<()> {
        let n = self
            .list
            .partition_point(|t| compare_internal(&t.start, t.seq, key, seq) != Ordering::Greater);
        self.pos = n.checked_sub(1).unwrap_or(self.list.len());
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
            self.pos = self.pos.checked_sub(1).unwrap_or(self.list.len());
        }
        Ok(())
    }
    fn key(&self) -> &[u8] {
        self.current()
            .map(|t| t.start.as_slice())
            .unwrap_or_default()
    }
    fn seq(&self) -> u64 {
        self.current().map_or(0, |t| t.seq)
    }
    fn kind(&self) -> ValueKind {
        ValueKind::RangeTombstone
    }
    fn value(&self) -> &[u8] {
        self.current().map(|t| t.end.as_slice()).unwrap_or_default()
    }
}
