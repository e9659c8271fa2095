//! The read path: point reads and iterators over a consistent view.

use std::sync::Arc;

use crate::db::core::DbInner;
use crate::db::view::View;
use crate::iter::{BoxedInternalIterator, KeyBounds, MergingIterator, RangeTombstoneSet};
use crate::key::{RangeTombstone, ValueKind};

use crate::version::NUM_LEVELS;
use crate::Result;

/// The engine-level iterator: a merge of every source of a view, filtered at a snapshot.
pub(crate) type ViewIterator = crate::iter::DbIterator<MergingIterator<'static>>;

/// Which state a read sees.
#[derive(Debug, Clone)]
pub(crate) enum ReadAt {
    /// The latest visible state: the sequence number and the view are taken together.
    Latest,
    /// A registered snapshot's state (compaction keeps what it needs, so any later view has it).
    Snapshot(u64),
    /// A snapshot of a read-only open, with the view it was taken in: the writer's compactions
    /// do not know it, so a later view (after a catch-up) may lack what it needs.
    Pinned(Arc<View>, u64),
}

/// The newest version of a key visible at a snapshot.
enum Found {
    /// A value, written at this sequence number.
    Value(u64, Vec<u8>),
    /// Deleted (by a point or range tombstone) at this sequence number.
    Deleted(u64),
}

impl DbInner {
    /// The newest value of stored key `key` visible `at`, or `None` if it is absent, deleted,
    /// or covered by a newer range tombstone.
    pub(crate) fn get_stored(&self, key: &[u8], at: ReadAt) -> Result<Option<Vec<u8>>> {
        self.health.check_open()?;
        let (view, snapshot) = self.read_point(at);
        Ok(match self.lookup(&view, key, snapshot)? {
            Some(Found::Value(_, v)) => Some(v),
            Some(Found::Deleted(_)) | None => None,
        })
    }

    /// The sequence number of the newest write touching stored key `key` (a value, a delete,
    /// or a range delete covering it), if any: what a transaction's conflict check compares
    /// with its snapshot.
    pub(crate) fn latest_seq(&self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self
            .lookup(&self.versions.view(), key, u64::MAX)?
            .map(|f| match f {
                Found::Value(seq, _) | Found::Deleted(seq) => seq,
            }))
    }

    /// Looks `key` up newest source first — memtable, immutable memtables, L0 newest first,
    /// then L1 and deeper — so the first version found decides and a deletion never falls
    /// through to older data. Range tombstones of each source are taken into account before its
    /// entries; a source's tombstones cannot cover entries of newer sources (the LSM invariant:
    /// for one key, sequence numbers fall from newer sources to older ones).
    fn lookup(&self, view: &View, key: &[u8], snapshot: u64) -> Result<Option<Found>> {
        let mut covering: Option<u64> = None;
        let mut cover = |start: &[u8], end: &[u8], seq: u64| {
            if seq <= snapshot && start <= key && key < end {
                covering = Some(covering.map_or(seq, |c| c.max(seq)));
            }
        };
        let decide = |seq: u64, kind: ValueKind, value: &[u8], covering: Option<u64>| match covering
        {
            Some(c) if c > seq => Found::Deleted(c),
            _ if kind == ValueKind::Value => Found::Value(seq, value.to_vec()),
            _ => Found::Deleted(seq),
        };
        for mem in std::iter::once(&view.mem).chain(view.imms.iter()) {
            if mem.has_range_tombstones() {
                for (start, end, seq) in mem.range_tombstones() {
                    cover(&start, &end, seq);
                }
            }
            if let Some((seq, kind, value)) = mem.get(key, snapshot) {
                return Ok(Some(decide(seq, kind, value, covering)));
            }
        }
        for level in 0..NUM_LEVELS {
            for file in view.version.files_for_key(level, key) {
                let table = self.tables.get(file.number)?;
                if file.has_range_tombstones {
                    for t in table.range_tombstones().iter() {
                        cover(&t.start, &t.end, t.seq);
                    }
                }
                if let Some(e) = table.get(key, snapshot)? {
                    return Ok(Some(match decide(e.seq, e.kind, &[], covering) {
                        Found::Value(seq, _) => Found::Value(seq, e.value),
                        deleted => deleted,
                    }));
                }
            }
        }
        Ok(covering.map(Found::Deleted))
    }

    /// The view and sequence number a read `at` uses. For the latest state both are taken
    /// under the view lock, so no flush or compaction installs a new version in between: the
    /// view holds every version the sequence number needs (a compaction that dropped one for
    /// a newer version installed its result before, and then the sequence number is newer).
    pub(crate) fn read_point(&self, at: ReadAt) -> (Arc<View>, u64) {
        match at {
            ReadAt::Snapshot(seq) => (self.versions.view(), seq),
            ReadAt::Pinned(view, seq) => (view, seq),
            ReadAt::Latest => self.versions.read_point(|| self.writes.visible_seq()),
        }
    }

    /// An iterator over stored keys within `bounds` as of `at`, and the view it reads (keep it
    /// alive as long as the iterator: it pins the tables).
    pub(crate) fn view_iterator(
        &self,
        at: ReadAt,
        bounds: KeyBounds,
    ) -> Result<(ViewIterator, Arc<View>)> {
        self.health.check_open()?;
        let (view, snapshot) = self.read_point(at);
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
                let table = self.tables.get(file.number)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::keys;
    use crate::{Db, Options};

    /// Failure 6: `get` and `iter` read the visible sequence number, then the view; a
    /// compaction in between dropped the version that sequence number needed (no snapshot kept
    /// it), and a key that always had a value read as missing. A read point takes both at once.
    #[test]
    fn a_read_point_keeps_every_version_its_sequence_number_needs() {
        let options = Options {
            background_thread: false,
            ..Options::default()
        };
        let db = Db::open_in_memory(options).unwrap();
        let k = keys::encode(keys::DEFAULT_KEYSPACE, b"k");
        db.put(b"k", b"v1").unwrap();
        db.flush().unwrap();
        let (view, seq) = db.inner.read_point(ReadAt::Latest);
        db.put(b"k", b"v2").unwrap();
        db.compact_range(None, None).unwrap();
        let found = |view: &View| match db.inner.lookup(view, &k, seq).unwrap() {
            Some(Found::Value(_, v)) => Some(v),
            _ => None,
        };
        assert_eq!(
            found(&view),
            Some(b"v1".to_vec()),
            "the read point still has v1"
        );
        // The old order: the sequence number before the compaction, the view after it.
        assert_eq!(
            found(&db.inner.versions.view()),
            None,
            "v1 was compacted away"
        );
    }
}
