//! The database: `Db`, its keyspaces, batches, snapshots, iterators and transactions.
//!
//! TODO(db): implementation in progress; signatures are the contract the benchmarks, the
//! WebAssembly bindings and the tests build on.

mod keys;
mod options;
mod snapshots;

use std::path::Path;
use std::sync::Arc;

pub use options::{IterOptions, Options, WriteOptions};

use crate::storage::Storage;
use crate::Result;

/// An open database. Cheap to clone (a shared handle); usable from many threads natively.
#[derive(Clone)]
pub struct Db {
    _private: (),
}

/// A named keyspace (column family) of a database. All keyspaces share one write-ahead log,
/// so a [`Batch`] across keyspaces is atomic. Cheap to clone.
#[derive(Clone)]
pub struct Keyspace {
    _private: (),
}

/// An atomic group of writes, possibly across keyspaces.
#[derive(Default)]
pub struct Batch {
    _private: (),
}

/// A consistent read view: gets and iterators through it see the database as it was when it
/// was taken, while writes continue. Released on drop.
pub struct Snapshot {
    _private: (),
}

/// An optimistic transaction: reads from a snapshot, buffers writes, and at commit fails with
/// [`crate::Error::Conflict`] if a key it read was written by someone else meanwhile.
pub struct Transaction {
    _private: (),
}

/// A cursor over keys and values in key order (or reverse), seeing one snapshot.
pub struct DbIterator {
    _private: (),
}

/// How much work one [`Db::maintain`] call may do.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Bytes of table data to read or write at most (approximately).
    pub bytes: u64,
}

/// What a [`Db::maintain`] call did and whether more is pending.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaintainOutcome {
    /// Bytes of table data written.
    pub bytes_written: u64,
    /// More flush or compaction work is pending.
    pub more: bool,
}

/// Figures about a database.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Approximate number of entries in tables and memtables (versions and tombstones count).
    pub entries: u64,
    /// Bytes of table files per level.
    pub level_bytes: Vec<u64>,
    /// Table files per level.
    pub level_files: Vec<usize>,
    /// Bytes written to disk (WAL, tables, manifest) divided by bytes of user writes.
    pub write_amplification: f64,
    /// Bytes of user data written since open (keys and values).
    pub user_bytes_written: u64,
    /// Bytes in memtables.
    pub memtable_bytes: u64,
    /// Bytes held by the block cache.
    pub cache_bytes: u64,
    /// Total bytes of live files on disk.
    pub disk_bytes: u64,
}

impl Db {
    /// Opens (or creates, per `options`) the database in directory `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let _ = (path.as_ref(), options);
        todo!()
    }

    /// Opens the database on any storage (in memory, fault-injecting, JS-backed).
    pub fn open_storage(storage: Arc<dyn Storage>, options: Options) -> Result<Db> {
        let _ = (storage, options);
        todo!()
    }

    /// A database that lives in memory only.
    pub fn open_in_memory(options: Options) -> Result<Db> {
        let _ = options;
        todo!()
    }

    /// The keyspace `name`, created if missing. `"default"` always exists.
    pub fn keyspace(&self, name: &str) -> Result<Keyspace> {
        let _ = name;
        todo!()
    }

    /// The default keyspace.
    pub fn default_keyspace(&self) -> Keyspace {
        todo!()
    }

    /// Sets `key` to `value` in the default keyspace.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let _ = (key, value);
        todo!()
    }

    /// Sets `key` to `value` in the default keyspace with `options`.
    pub fn put_opt(&self, key: &[u8], value: &[u8], options: WriteOptions) -> Result<()> {
        let _ = (key, value, options);
        todo!()
    }

    /// The value of `key` in the default keyspace.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let _ = key;
        todo!()
    }

    /// Deletes `key` from the default keyspace.
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        let _ = key;
        todo!()
    }

    /// Deletes every key in `[start, end)` of the default keyspace with one range tombstone.
    pub fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        let _ = (start, end);
        todo!()
    }

    /// An iterator over the default keyspace at the current state.
    pub fn iter(&self, options: IterOptions) -> Result<DbIterator> {
        let _ = options;
        todo!()
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: &Batch, options: WriteOptions) -> Result<()> {
        let _ = (batch, options);
        todo!()
    }

    /// A consistent read view of the current state.
    pub fn snapshot(&self) -> Snapshot {
        todo!()
    }

    /// Starts an optimistic transaction.
    pub fn transaction(&self) -> Transaction {
        todo!()
    }

    /// Writes the memtable to a table, so the WAL can be dropped.
    pub fn flush(&self) -> Result<()> {
        todo!()
    }

    /// Compacts the key range (all keyspaces; `None` = unbounded) down to the last level.
    pub fn compact_range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        let _ = (start, end);
        todo!()
    }

    /// Does up to `budget` of pending flush and compaction work.
    pub fn maintain(&self, budget: Budget) -> Result<MaintainOutcome> {
        let _ = budget;
        todo!()
    }

    /// Writes a consistent copy of the database into the empty or missing directory `dest`
    /// while it keeps serving reads and writes.
    pub fn checkpoint(&self, dest: impl AsRef<Path>) -> Result<()> {
        let _ = dest.as_ref();
        todo!()
    }

    /// Current figures.
    pub fn stats(&self) -> Stats {
        todo!()
    }

    /// Flushes what must be flushed, stops background work and releases the lock.
    pub fn close(self) -> Result<()> {
        todo!()
    }
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Sets `key` in `keyspace`.
    pub fn put(&mut self, keyspace: &Keyspace, key: &[u8], value: &[u8]) -> &mut Batch {
        let _ = (keyspace, key, value);
        todo!()
    }

    /// Deletes `key` from `keyspace`.
    pub fn delete(&mut self, keyspace: &Keyspace, key: &[u8]) -> &mut Batch {
        let _ = (keyspace, key);
        todo!()
    }

    /// Deletes `[start, end)` from `keyspace`.
    pub fn delete_range(&mut self, keyspace: &Keyspace, start: &[u8], end: &[u8]) -> &mut Batch {
        let _ = (keyspace, start, end);
        todo!()
    }
}

impl DbIterator {
    /// Whether the cursor is on an entry.
    pub fn valid(&self) -> bool {
        todo!()
    }
    /// The current key (requires `valid()`).
    pub fn key(&self) -> &[u8] {
        todo!()
    }
    /// The current value (requires `valid()`).
    pub fn value(&self) -> &[u8] {
        todo!()
    }
    /// Moves to the next entry in the iterator's direction.
    pub fn advance(&mut self) -> Result<()> {
        todo!()
    }
    /// Moves to the first key `>= key` (forward) or the last key `<= key` (reverse).
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        let _ = key;
        todo!()
    }
}

impl Iterator for DbIterator {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        todo!()
    }
}
