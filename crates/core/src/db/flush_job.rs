//! [`FlushJob`]: a memtable flush in progress between `maintain` steps — the memtable in, one
//! level-0 table out.

use std::sync::Arc;

use crate::compaction::output::OutputTable;
use crate::iter::InternalIterator;
use crate::memtable::{MemTable, MemTableIter};
use crate::sstable::TableOptions;
use crate::storage::Storage;
use crate::version::FileMeta;
use crate::Result;

/// The memtable being flushed, a cursor on its next entry to write, and the table being
/// written.
#[derive(Debug)]
pub(crate) struct FlushJob {
    mem: Arc<MemTable>,
    iter: MemTableIter,
    out: OutputTable,
}

impl FlushJob {
    /// Starts writing `mem` to table `number` in `storage` (nothing is written yet but the
    /// table's file).
    pub(crate) fn start(
        storage: &dyn Storage,
        mem: Arc<MemTable>,
        number: u64,
        options: &TableOptions,
    ) -> Result<FlushJob> {
        let mut iter = mem.iter();
        iter.seek_to_first()?;
        let out = OutputTable::create(storage, number, options)?;
        Ok(FlushJob { mem, iter, out })
    }

    /// The number of the table being written (a file no live version names yet).
    pub(crate) fn table_number(&self) -> u64 {
        self.out.number()
    }

    /// Bytes of the table file so far.
    pub(crate) fn table_size(&self) -> u64 {
        self.out.file_size()
    }

    /// Writes entries until the table grew `budget` bytes past `from` (a size it had) or every
    /// entry is written. Returns whether entries remain.
    pub(crate) fn write(&mut self, from: u64, budget: u64) -> Result<bool> {
        while self.iter.valid() {
            let it = &self.iter;
            self.out.add(it.key(), it.seq(), it.kind(), it.value())?;
            self.iter.next()?;
            if self.out.file_size() - from >= budget && self.iter.valid() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Finishes the table (synced; none is left for a memtable that held nothing) once every
    /// entry is written. Returns the memtable and the table.
    pub(crate) fn finish(self, storage: &dyn Storage) -> Result<(Arc<MemTable>, Option<FileMeta>)> {
        let FlushJob { mem, out, .. } = self;
        let meta = out.finish(storage)?;
        Ok((mem, meta))
    }
}
