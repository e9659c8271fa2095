//! Options of a database, of writes and of reads.

use std::ops::Bound;

use crate::compaction::picker::CompactionOptions;
use crate::db::clock::Clock;
use crate::db::thread_priority::MaintenancePriority;
use crate::recordio::Compression;
use crate::sstable::TableOptions;
use crate::write::wal::WalOptions;
use crate::{Error, Result};

/// How a database is opened and tuned. `Default` suits a service on an SSD.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Create the database if the directory holds none (default `true`).
    pub create_if_missing: bool,
    /// Fail if a database already exists there (default `false`).
    pub error_if_exists: bool,
    /// Bytes of writes collected in the memtable before it is flushed to an L0 table
    /// (default 64 MiB).
    pub memtable_size: usize,
    /// Immutable memtables waiting for flush before writes slow down (default 2).
    pub max_immutable_memtables: usize,
    /// Block cache budget in bytes (default 64 MiB).
    pub block_cache_size: u64,
    /// Data block size of tables (default 4 KiB).
    pub block_size: usize,
    /// Bloom filter bits per key (default 10; 0 disables filters).
    pub bloom_bits_per_key: u32,
    /// Compress table blocks with Snappy where it saves at least 1/8 (default `true`).
    pub compression: bool,
    /// Number of L0 tables that triggers a compaction into L1 (default 4).
    pub l0_compaction_trigger: usize,
    /// Number of L0 tables at which writes start to slow down (default 12); at twice this
    /// number a write first does a bounded step of compaction itself.
    pub l0_slowdown_trigger: usize,
    /// Target size of L1 in bytes (default 64 MiB); each next level is `level_size_ratio`
    /// times larger.
    pub base_level_size: u64,
    /// Size ratio between adjacent levels (default 10).
    pub level_size_ratio: u64,
    /// Target size of a table written by compaction (default 64 MiB).
    pub target_file_size: u64,
    /// Run flush and compaction on a background thread (native only; default `true`). When
    /// `false`, the caller drives them with [`crate::Db::maintain`].
    pub background_thread: bool,
    /// The background thread's CPU priority (default [`MaintenancePriority::Low`]).
    pub maintenance_priority: MaintenancePriority,
    /// Largest key accepted, in bytes (default 64 KiB, the maximum).
    pub max_key_size: usize,
    /// Largest value accepted, in bytes (default 256 MiB, the maximum).
    pub max_value_size: usize,
    /// Bytes by which a write-ahead log file is extended at a time, ahead of its data (default
    /// 1 MiB; 0 extends it by each write). A synced write then seldom changes the file's size,
    /// which spares the file system a metadata commit per sync; natively on Linux the extension
    /// reserves disk space (`fallocate`) and the log is written through a shared memory mapping
    /// of it, instead of a `write` system call per commit. A log is cut back to its data when
    /// it is sealed or the database closes. Storages that cannot preallocate (WebAssembly)
    /// ignore it.
    pub wal_preallocation: u64,
    /// Keep committed batches for the change feed ([`crate::Db::changes`]) after they are
    /// flushed, as their write-ahead logs, and stamp each batch with its commit time (default
    /// `None`: logs go once flushed, unless a change cursor still needs them; batches carry no
    /// time). Change cursors ([`crate::Db::ack_changes`]) hold logs whatever this says.
    pub change_retention: Option<ChangeRetention>,
    /// Open as a follower of another database (default `false`): every write fails with
    /// [`crate::Error::ReadOnly`] except [`crate::Db::apply_change`], which applies the
    /// leader's change feed with the leader's sequence numbers. Reads, iterators, snapshots,
    /// checkpoints and the follower's own change feed work as usual.
    pub follower: bool,
    /// Open read-only (default `false`): take no lock and write nothing to the directory, so
    /// any number of read-only opens may share it with one writer in another process or
    /// thread (RocksDB's secondary instances). The database is seen as of the open — its
    /// manifest, tables and logs — until [`crate::Db::catch_up`] reads what the writer did
    /// since. Every write, flush, compaction and checkpoint fails with
    /// [`crate::Error::ReadOnly`]; there is no background thread. A missing database is
    /// `NotFound`.
    pub read_only: bool,
    /// The wall clock (default [`Clock::system`]): queue leases, delays and expiry, topic
    /// append times, batch commit times and age-based change retention follow it from the
    /// open on. WebAssembly hosts give theirs ([`Clock::from_fn`]); tests move time with it.
    pub clock: Clock,
}

/// How long committed batches stay available to the change feed after their flush
/// ([`Options::change_retention`]). A log is kept while any limit given holds it, and while a
/// change cursor has not passed it. With neither limit, only the cursors hold logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChangeRetention {
    /// Keep batches committed at most this many milliseconds ago (measured from when their
    /// log was sealed, or from the open for logs sealed before it).
    pub age_ms: Option<u64>,
    /// Keep the newest logs up to this many bytes in total.
    pub bytes: Option<u64>,
}

impl ChangeRetention {
    /// Keep batches of the last `age_ms` milliseconds.
    pub fn age_ms(age_ms: u64) -> ChangeRetention {
        ChangeRetention {
            age_ms: Some(age_ms),
            bytes: None,
        }
    }

    /// Keep the newest `bytes` bytes of logs.
    pub fn bytes(bytes: u64) -> ChangeRetention {
        ChangeRetention {
            age_ms: None,
            bytes: Some(bytes),
        }
    }

    /// Keep only what change cursors need (and stamp batches with their time).
    pub fn cursors_only() -> ChangeRetention {
        ChangeRetention::default()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            memtable_size: 64 << 20,
            max_immutable_memtables: 2,
            block_cache_size: 64 << 20,
            block_size: 4096,
            bloom_bits_per_key: 10,
            compression: true,
            l0_compaction_trigger: 4,
            l0_slowdown_trigger: 12,
            base_level_size: 64 << 20,
            level_size_ratio: 10,
            target_file_size: 64 << 20,
            background_thread: true,
            maintenance_priority: MaintenancePriority::default(),
            max_key_size: 64 << 10,
            max_value_size: 256 << 20,
            wal_preallocation: 1 << 20,
            change_retention: None,
            follower: false,
            read_only: false,
            clock: Clock::system(),
        }
    }
}

impl Options {
    /// The options of the database's write-ahead logs.
    pub(crate) fn wal_options(&self) -> WalOptions {
        WalOptions {
            preallocation: self.wal_preallocation,
            ..WalOptions::default()
        }
    }

    /// The options of the tables a flush writes.
    pub(crate) fn table_options(&self) -> TableOptions {
        TableOptions {
            block_size: self.block_size,
            bloom_bits_per_key: self.bloom_bits_per_key,
            compression: if self.compression {
                Compression::Snappy
            } else {
                Compression::None
            },
            ..TableOptions::default()
        }
    }

    /// The options of compactions (their tables are synced when finished).
    pub(crate) fn compaction_options(&self) -> CompactionOptions {
        CompactionOptions {
            l0_trigger: self.l0_compaction_trigger,
            base_level_bytes: self.base_level_size,
            level_size_ratio: self.level_size_ratio,
            target_file_size: self.target_file_size,
            table: TableOptions {
                sync_on_finish: true,
                ..self.table_options()
            },
        }
    }

    /// [`Error::ReadOnly`] for a database opened read-only ([`Options::read_only`]).
    pub(crate) fn check_not_read_only(&self) -> Result<()> {
        if self.read_only {
            return Err(read_only_error());
        }
        Ok(())
    }
}

/// What a write to a database opened read-only fails with.
pub(crate) fn read_only_error() -> Error {
    Error::ReadOnly("the database is open read-only: reopen it without read_only to write".into())
}

/// Options of one write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `false` (default): the write has reached the operating system when the call returns, so
    /// it survives the process being killed. `true`: it has been flushed to stable storage
    /// (fdatasync), so it survives power loss. Concurrent synced writers share one flush.
    pub sync: bool,
}

impl WriteOptions {
    /// `sync: true`.
    pub const SYNC: WriteOptions = WriteOptions { sync: true };
}

/// What an iterator covers and how it moves.
#[derive(Debug, Clone)]
pub struct IterOptions {
    /// Lower bound of keys (default unbounded).
    pub lower: Bound<Vec<u8>>,
    /// Upper bound of keys (default unbounded).
    pub upper: Bound<Vec<u8>>,
    /// Only keys starting with this prefix (combined with the bounds).
    pub prefix: Option<Vec<u8>>,
    /// Start from the last key and move backwards.
    pub reverse: bool,
}

impl Default for IterOptions {
    fn default() -> Self {
        IterOptions {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
            prefix: None,
            reverse: false,
        }
    }
}

impl IterOptions {
    /// Keys in `[start, end)`.
    pub fn range(start: impl Into<Vec<u8>>, end: impl Into<Vec<u8>>) -> IterOptions {
        IterOptions {
            lower: Bound::Included(start.into()),
            upper: Bound::Excluded(end.into()),
            ..IterOptions::default()
        }
    }

    /// Keys starting with `prefix`.
    pub fn prefix(prefix: impl Into<Vec<u8>>) -> IterOptions {
        IterOptions {
            prefix: Some(prefix.into()),
            ..IterOptions::default()
        }
    }

    /// The same, from the last key backwards.
    pub fn reversed(mut self) -> IterOptions {
        self.reverse = true;
        self
    }
}
