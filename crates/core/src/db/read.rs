//! The read path: point reads and iterators over a consistent view.

use std::sync::Arc;

use crate::db::core::{DbInner, View};
use crate::iter::{
    BoxedInternalIterator, KeyBounds, MergingIterator, RangeTombstone, RangeTombstoneSet,
};
use crate::sstable::ValueKind;
use crate::version::NUM_LEVELS;
use crate::Result;

/// The engine-level iterator: a merge of every source of a view, filtered at a snapshot.
pub(crate) type ViewIterator = crate::iter::DbIterator<MergingIterator<'static>>;

impl DbInner {
    /// The newest value of stored key `key` visible at `snapshot`, or `None` if it is absent,
    /// deleted, or covered by a newer range tombstone. Sources are consulted newest first, so
    /// the first version found decides and a deletion never falls through to older data.
    pub(crate) fn get_stored(&self, key: &[u8], snapshot: u64) -> Result<Option<Vec<u8>>> {
        self.check_open()?;
        let view = self.view();
        let covering = self.covering_tombstone(&view, key, snapshot)?;
        let visible = |seq: u64| covering.is_none_or(|c| c <= seq);
        for mem in std::iter::once(&view.mem).chain(view.imms.iter()) {
            if let Some((seq, kind, value)) = mem.get(key, snapshot) {
                return Ok((kind == ValueKind::Value && visible(seq)).then(|| value.to_vec()));
            }
        }
        for level in 0..NUM_LEVELS {
            for file in view.version.files_for_key(level, key) {
                let table = self.table(&file)?;
                if let Some(entry) = table.get(key, snapshot)? {
                    return Ok((entry.kind == ValueKind::Value && visible(entry.seq))
                        .then_some(entry.value));
                }
            }
        }
        Ok(None)
    }

    /// The sequence number of the newest write touching stored key `key` (a value, a delete,
    /// or a range delete covering it), if any: what a transaction's conflict check compares
    /// with its snapshot.
    pub(crate) fn latest_seq(&self, key: &[u8]) -> Result<Option<u64>> {
        let view = self.view();
        let covering = self.covering_tombstone(&view, key, u64::MAX)?;
        let mut newest = None;
        for mem in std::iter::once(&view.mem).chain(view.imms.iter()) {
            if let Some((seq, _, _)) = mem.get(key, u64::MAX) {
                newest = Some(seq);
                break;
            }
        }
        if newest.is_none() {
            'levels: for level in 0..NUM_LEVELS {
                for file in view.version.files_for_key(level, key) {
                    if let Some(entry) = self.table(&file)?.get(key, u64::MAX)? {
                        newest = Some(entry.seq);
                        break 'levels;
                    }
                }
            }
        }
        Ok(newest.max(covering))
    }

    /// The highest sequence number `<= snapshot` of a range tombstone covering `key`, over
    /// every source of `view`.
    fn covering_tombstone(&self, view: &View, key: &[u8], snapshot: u64) -> Result<Option<u64>> {
        let mut best: Option<u64> = None;
        let mut consider = |start: &[u8], end: &[u8], seq: u64| {
            if seq <= snapshot && start <= key && key < end {
                best = Some(best.map_or(seq, |b| b.max(seq)));
            }
        };
        for mem in std::iter::once(&view.mem).chain(view.imms.iter()) {
            if mem.has_range_tombstones() {
                for (start, end, seq) in mem.range_tombstones() {
                    consider(&start, &end, seq);
                }
            }
        }
        for level in 0..NUM_LEVELS {
            for file in view.version.files_for_key(level, key) {
                if file.has_range_tombstones {
                    for t in self.table(&file)?.range_tombstones().iter() {
                        consider(&t.start, &t.end, t.seq);
                    }
                }
            }
        }
        Ok(best)
    }

    /// An iterator over stored keys within `bounds` at `snapshot`, and the view it reads
    /// (keep it alive as long as the iterator: it pins the tables).
    pub(crate) fn view_iterator(
        &self,
        snapshot: u64,
        bounds: KeyBounds,
    ) -> Result<(ViewIterator, Arc<View>)> {
        self.check_open()?;
        let view = self.view();
        let mut sources: Vec<BoxedInternalIterator<'static>> = Vec::new();
        let mut tombstones: Vec<RangeTombstone> = Vec::new();
        for mem in std::iter::once(&view.mem).chain(view.imms.iter()) {
            sources.push(Box::new(mem.iter()));
            if mem.has_range_tombstones() {
                tombstones.extend(mem.range_tombstones().into_iter().map(RangeTombstone::from));
            }
        }
        let (lo, hi) = (bound_key(&bounds.lower), bound_key(&bounds.upper));
        for level in 0..NUM_LEVELS {
            for file in view.version.overlapping(level, lo, hi) {
                let table = self.table(&file)?;
                if file.has_range_tombstones {
                    tombstones.extend(table.range_tombstones().iter().cloned());
                }
                sources.push(Box::new(table.iter()));
            }
        }
        let set = Arc::new(RangeTombstoneSet::from_tombstones(tombstones));
        let iter =
            crate::iter::DbIterator::new(MergingIterator::new(sources), set, snapshot, bounds);
        Ok((iter, view))
    }
}

fn bound_key(b: &std::ops::Bound<Vec<u8>>) -> Option<&[u8]> {
    match b {
        std::ops::Bound::Included(k) | std::ops::Bound::Excluded(k) => Some(k),
        std::ops::Bound::Unbounded => None,
    }
}
