//! The open tables of a database, by file number: each table file is opened (footer, index,
//! filter read) once and shared by every read and compaction until it becomes obsolete.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use foldhash::fast::FixedState;

use crate::file_names::table_file_name;
use crate::sstable::{BlockCache, TableReadOptions, TableReader};
use crate::storage::{OpenMode, Storage};
use crate::Result;

/// Open table readers by file number, sharing one block cache.
#[derive(Debug)]
pub(crate) struct TableCache {
    storage: Arc<dyn Storage>,
    blocks: Arc<BlockCache>,
    /// Looked up by every read of a table; hashed with foldhash, not SipHash (2.6% of a
    /// WebAssembly get's profile at 1 KiB): file numbers are the database's own, so no defence
    /// against chosen keys is needed.
    open: Mutex<OpenTables>,
}

type OpenTables = HashMap<u64, TableReader, FixedState>;

impl TableCache {
    pub(crate) fn new(storage: Arc<dyn Storage>, blocks: Arc<BlockCache>) -> TableCache {
        TableCache {
            storage,
            blocks,
            open: Mutex::default(),
        }
    }

    /// The reader of table `number`, opened now if it is not open yet.
    pub(crate) fn get(&self, number: u64) -> Result<TableReader> {
        if let Some(t) = self.lock().get(&number) {
            return Ok(t.clone());
        }
        let handle = self
            .storage
            .open(&table_file_name(number), OpenMode::Read)?;
        let table = TableReader::open(
            handle,
            TableReadOptions {
                cache: Some(self.blocks.clone()),
                ..TableReadOptions::default()
            },
        )?;
        self.lock().insert(number, table.clone());
        Ok(table)
    }

    /// Forgets every open table whose number `live` does not hold; readers that hold one keep
    /// their copy.
    pub(crate) fn retain(&self, live: &std::collections::BTreeSet<u64>) {
        self.lock().retain(|n, _| live.contains(n));
    }

    /// Forgets table `number` (it is being deleted); readers that hold it keep their copy.
    pub(crate) fn evict(&self, number: u64) {
        self.lock().remove(&number);
    }

    /// The shared block cache.
    pub(crate) fn blocks(&self) -> &BlockCache {
        &self.blocks
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, OpenTables> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
