//! Writing one table for a flush or a compaction and describing it as a [`FileMeta`].

use std::cmp::Ordering;
use std::sync::Arc;

use crate::file_names::table_file_name;
use crate::iter::InternalIterator;
use crate::key::{InternalKey, RangeTombstone, ValueKind, RANGE_SENTINEL_SEQ};
use crate::sstable::{TableBuilder, TableOptions};
use crate::storage::{OpenMode, Storage};
use crate::version::FileMeta;
use crate::Result;

/// A table being written: tracks what its [`FileMeta`] needs (first and last point entry,
/// range tombstones, sequence bounds).
#[derive(Debug)]
pub struct OutputTable {
    number: u64,
    builder: TableBuilder,
    first: Option<InternalKey>,
    last: InternalKey,
    range_tombstones: Vec<RangeTombstone>,
}

impl OutputTable {
    /// Creates table file `number` in `storage`. Exclusively: a file of that name is
    /// [`crate::Error::AlreadyExists`], never truncated (file numbers are never reused, so one
    /// there belongs to someone else: a job's runner that outlived its database, say).
    pub fn create(storage: &dyn Storage, number: u64, options: &TableOptions) -> Result<Self> {
        let file = storage.open(&table_file_name(number), OpenMode::CreateNew)?;
        Ok(OutputTable {
            number,
            builder: TableBuilder::new(file, options.clone())?,
            first: None,
            last: InternalKey::default(),
            range_tombstones: Vec::new(),
        })
    }

    /// The file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Adds a point entry (in table order) or a range tombstone (`key` = start, `value` = end).
    pub fn add(&mut self, key: &[u8], seq: u64, kind: ValueKind, value: &[u8]) -> Result<()> {
        if kind == ValueKind::RangeTombstone {
            self.builder.add_range_tombstone(key, value, seq)?;
            self.range_tombstones.push(RangeTombstone {
                start: key.to_vec(),
                end: value.to_vec(),
                seq,
            });
            return Ok(());
        }
        self.builder.add(key, seq, kind, value)?;
        if self.first.is_none() {
            self.first = Some(InternalKey::new(key, seq));
        }
        self.last.key.clear();
        self.last.key.extend_from_slice(key);
        self.last.seq = seq;
        Ok(())
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.first.is_none() && self.range_tombstones.is_empty()
    }

    /// Bytes written so far (without the open block).
    pub fn file_size(&self) -> u64 {
        self.builder.file_size()
    }

    /// Finishes (and, per the options, syncs) the table. `None` for an empty table, which is
    /// removed.
    pub fn finish(self, storage: &dyn Storage) -> Result<Option<FileMeta>> {
        if self.is_empty() {
            drop(self.builder);
            storage.remove(&table_file_name(self.number))?;
            return Ok(None);
        }
        let summary = self.builder.finish()?;
        let mut smallest = self.first.clone();
        let mut largest = self.first.as_ref().map(|_| self.last.clone());
        for t in &self.range_tombstones {
            let s = InternalKey::new(t.start.clone(), t.seq);
            if smallest
                .as_ref()
                .is_none_or(|m| s.cmp_internal(m) == Ordering::Less)
            {
                smallest = Some(s);
            }
            let l = InternalKey::new(t.end.clone(), RANGE_SENTINEL_SEQ);
            if largest
                .as_ref()
                .is_none_or(|m| l.cmp_internal(m) == Ordering::Greater)
            {
                largest = Some(l);
            }
        }
        let p = &summary.properties;
        Ok(Some(FileMeta {
            number: self.number,
            size: summary.file_size,
            smallest: smallest.unwrap_or_default(),
            largest: largest.unwrap_or_default(),
            min_seq: p.min_seq,
            max_seq: p.max_seq,
            entries: p.entries + p.range_tombstones,
            has_range_tombstones: p.range_tombstones > 0,
        }))
    }
}

/// Writes every entry of `iter` (a memtable, or any source in internal order; range tombstones
/// included) to the new level-0 table `number` and describes it. Nothing is dropped. Returns
/// `None` (and leaves no file) when `iter` is empty. The table is synced when
/// `options.sync_on_finish`; the caller then logs the file in a version edit.
pub fn flush(
    storage: &Arc<dyn Storage>,
    number: u64,
    iter: &mut dyn InternalIterator,
    options: &TableOptions,
) -> Result<Option<FileMeta>> {
    let mut out = OutputTable::create(&**storage, number, options)?;
    iter.seek_to_first()?;
    while iter.valid() {
        out.add(iter.key(), iter.seq(), iter.kind(), iter.value())?;
        iter.next()?;
    }
    out.finish(&**storage)
}
