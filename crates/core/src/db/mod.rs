//! The database: [`Db`], its [`Keyspace`]s, [`Batch`]es, [`Snapshot`]s, iterators and
//! [`Transaction`]s.
//!
//! ```
//! use shaledb::{Db, IterOptions, Options, WriteOptions};
//!
//! let db = Db::open_in_memory(Options::default())?;
//! db.put(b"user:1", b"ada")?;
//! db.put_opt(b"user:2", b"grace", WriteOptions::SYNC)?; // durable against power loss
//! assert_eq!(db.get(b"user:1")?, Some(b"ada".to_vec()));
//!
//! let events = db.keyspace("events")?;      // a named keyspace, sharing the WAL
//! let mut batch = shaledb::Batch::new();    // atomic across keyspaces
//! batch.put(&events, b"0001", b"signup")?.delete(&db.default_keyspace(), b"user:2")?;
//! db.write(&batch, WriteOptions::default())?;
//!
//! let users: Vec<_> = db.iter(IterOptions::prefix(b"user:".to_vec()))?
//!     .collect::<shaledb::Result<_>>()?;
//! assert_eq!(users, vec![(b"user:1".to_vec(), b"ada".to_vec())]);
//! db.close()?;
//! # Ok::<(), shaledb::Error>(())
//! ```

// The owners of an open database's state, each behind its own interface.
mod background;
mod changes;
pub(crate) mod core;
mod flush_job;
mod health;
mod keyspace_ids;
pub(crate) mod layers;
mod maintenance;
mod memtables;
mod next_log;
mod range_compactions;
mod snapshots;
mod table_cache;
mod versions;
mod view;
mod write_path;

// The operations, one file each (most are `impl DbInner` blocks).
mod checkpoint;
mod job_desk;
mod maintain;
mod obsolete;
mod open;
mod prepare_log;
mod range_jobs;
mod read;
mod read_only;
pub(crate) mod recovery;
mod switch;
mod wal_sync;
mod write;

// The public types, and the seams of the layers built on the engine.
mod budget;
mod clock;
pub(crate) mod deferred;
mod for_layers;
mod iterator;
mod keys;
mod keyspace;
pub(crate) mod names;
mod options;
mod snapshot;
mod thread_priority;
mod transaction;

#[cfg(not(target_arch = "wasm32"))]
use std::path::Path;
use std::sync::Arc;

pub use budget::{Budget, CompactProgress, MaintainOutcome};
pub use changes::{Applied, Change, ChangeOp, Changes};
pub use clock::Clock;
pub use iterator::DbIterator;
pub use keyspace::{Batch, Keyspace, RESERVED_KEYSPACE_PREFIX};
pub use options::{ChangeRetention, IterOptions, Options, WriteOptions};
pub use snapshot::Snapshot;
pub use thread_priority::MaintenancePriority;
pub use transaction::Transaction;

use crate::db::core::DbInner;
use crate::storage::memory::MemoryStorage;
use crate::storage::Storage;
use crate::version::NUM_LEVELS;
use crate::Result;

/// An open database. Cheap to clone (a shared handle); natively `Send + Sync`, so one handle
/// serves many threads. The database closes when [`Db::close`] is called or the last handle
/// (including keyspaces, snapshots and iterators) is dropped.
#[derive(Clone, Debug)]
pub struct Db {
    pub(crate) inner: Arc<DbInner>,
    default: Keyspace,
}

/// Figures about a database.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Entries in tables and memtables (every version and tombstone counts).
    pub entries: u64,
    /// Bytes of table files per level.
    pub level_bytes: Vec<u64>,
    /// Table files per level.
    pub level_files: Vec<usize>,
    /// Bytes written to the WAL and to tables, divided by the bytes of user writes.
    pub write_amplification: f64,
    /// Bytes of keys and values written by users since open.
    pub user_bytes_written: u64,
    /// Bytes in memtables.
    pub memtable_bytes: u64,
    /// Bytes held by the block cache.
    pub cache_bytes: u64,
    /// Bytes of all table files.
    pub table_bytes: u64,
    /// Maintenance jobs ([`Db::next_job`]) installed since open.
    pub jobs_installed: u64,
}

impl Db {
    /// Opens (or, per `options`, creates) the database in directory `path`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let storage = crate::storage::std_fs::StdFsStorage::open(path.as_ref())?;
        Db::open_storage(Arc::new(storage), options)
    }

    /// Opens (or creates) the database on any storage: in memory, fault-injecting, or backed by
    /// JavaScript.
    pub fn open_storage(storage: Arc<dyn Storage>, options: Options) -> Result<Db> {
        let background = options.background_thread && !options.read_only;
        let inner = Arc::new(DbInner::open(storage, options)?);
        if background {
            inner
                .start_background()
                .map_err(|e| crate::Error::io("spawn", "", e))?;
        }
        let default = Keyspace::new(&inner, keys::DEFAULT_KEYSPACE, "default");
        Ok(Db { inner, default })
    }

    /// A new database that lives in memory only.
    pub fn open_in_memory(options: Options) -> Result<Db> {
        Db::open_storage(Arc::new(MemoryStorage::new()), options)
    }

    /// The keyspace `name`, created (durably) if missing. `"default"` always exists. Names are
    /// 1 to 255 bytes; those starting with a NUL character are reserved for ShaleDB's own
    /// keyspaces ([`RESERVED_KEYSPACE_PREFIX`]) and refused with [`crate::Error::InvalidArgument`].
    pub fn keyspace(&self, name: &str) -> Result<Keyspace> {
        Keyspace::open(&self.inner, name, false)
    }

    /// One of ShaleDB's own keyspaces, created (durably) if missing: `name` must start with
    /// [`RESERVED_KEYSPACE_PREFIX`]. For the layers built on the engine (the bindings' records
    /// of applied writes, queues, topics), not for applications.
    #[doc(hidden)]
    pub fn reserved_keyspace(&self, name: &str) -> Result<Keyspace> {
        Keyspace::open(&self.inner, name, true)
    }

    /// The metadata of keyspace `name` ([`Keyspace::metadata`]) without opening it: `None` if
    /// the keyspace does not exist or has none. Works on a read-only open (which cannot create
    /// keyspaces); there it is the metadata as of the last catch-up.
    pub fn keyspace_metadata(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.inner.health.check_open()?;
        let versions = self.inner.versions.lock();
        Ok(versions
            .keyspace_id(name)
            .and_then(|id| versions.keyspace_metadata(id))
            .map(<[u8]>::to_vec))
    }

    /// The default keyspace, which [`Db::put`], [`Db::get`] and friends use.
    pub fn default_keyspace(&self) -> Keyspace {
        self.default.clone()
    }

    /// Sets `key` to `value` in the default keyspace. When it returns the write has reached
    /// the OS (it survives the process being killed).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.default.put(key, value)
    }

    /// Sets `key` to `value` in the default keyspace; with `options.sync` it survives power
    /// loss when this returns.
    pub fn put_opt(&self, key: &[u8], value: &[u8], options: WriteOptions) -> Result<()> {
        self.default.put_opt(key, value, options)
    }

    /// The value of `key` in the default keyspace.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.default.get(key)
    }

    /// Deletes `key` from the default keyspace.
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.default.delete(key)
    }

    /// Deletes every key in `[start, end)` of the default keyspace with one range tombstone.
    pub fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        self.default.delete_range(start, end)
    }

    /// An iterator over the default keyspace, seeing the state as of now.
    pub fn iter(&self, options: IterOptions) -> Result<DbIterator> {
        self.default.iter(options)
    }

    /// Applies `batch` atomically (all its writes or, after a crash, none). The batch stays
    /// the caller's (its bytes are copied); [`Db::write_owned`] avoids the copy.
    pub fn write(&self, batch: &Batch, options: WriteOptions) -> Result<()> {
        self.write_with_ids(batch, options).map(|_| ())
    }

    /// [`Db::write`], returning the ids of the batch's queue pushes
    /// ([`Batch::push`](crate::queue)), in the order they were added.
    pub fn write_with_ids(&self, batch: &Batch, options: WriteOptions) -> Result<Vec<u64>> {
        batch.commit_to(&self.inner, options.sync, None)
    }

    /// [`Db::write`] of a batch the caller gives up: its encoding goes to the log as it is,
    /// without a copy.
    pub fn write_owned(&self, batch: Batch, options: WriteOptions) -> Result<()> {
        if batch.has_deferred() || batch.meta().is_some() {
            return self.write(&batch, options);
        }
        let encoded = batch.take(&self.inner)?;
        self.inner.write(encoded, options.sync).map(|_| ())
    }

    /// A consistent read view of the current state.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(&self.inner)
    }

    /// Starts an optimistic transaction.
    pub fn transaction(&self) -> Transaction {
        Transaction::new(&self.inner)
    }

    /// Writes every memtable to tables (the WAL they were in is then deleted).
    pub fn flush(&self) -> Result<()> {
        self.inner.health.check_writable()?;
        self.inner.flush_all()
    }

    /// Makes the live memtable immutable (unless it is empty) and starts a new write-ahead
    /// log, leaving the flush to later [`Db::maintain`] steps (or the background thread). For
    /// a caller about to go idle: it keeps the log that the next open replays short, without
    /// one long flush. Reads see no difference.
    pub fn seal_memtable(&self) -> Result<()> {
        self.inner.health.check_writable()?;
        self.inner.switch_memtable(true)
    }

    /// Compacts stored keys in `[start, end]` of every keyspace (`None` = unbounded) down to
    /// the deepest level, dropping overwritten versions and tombstones no snapshot needs.
    pub fn compact_range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.compact_range_with_progress(start, end, &mut |_| {})
    }

    /// [`Db::compact_range`], calling `progress` at the start of each level's pass and after
    /// each few MiB of it (for a progress bar).
    pub fn compact_range_with_progress(
        &self,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        progress: &mut dyn FnMut(CompactProgress),
    ) -> Result<()> {
        self.inner.health.check_writable()?;
        self.inner.compact_range(start, end, progress)
    }

    /// Does up to `budget` of pending flush and compaction work and says whether more is
    /// pending. With `Options::background_thread` (native) a thread calls this by itself.
    pub fn maintain(&self, budget: Budget) -> Result<MaintainOutcome> {
        self.inner.maintain(budget)
    }

    /// Hands out the next maintenance job due, if any (at most one flush, one compaction and
    /// one deletion are out at a time; in that order of preference, a requested compaction's
    /// passes before the compactions the tree picks): run it anywhere with
    /// [`crate::jobs::run_job`] over a storage of this directory, then [`Db::install_job`] its
    /// output or [`Db::abandon_job`] it. Open with `background_thread: false` (and do not call
    /// [`Db::maintain`] meanwhile) to leave all maintenance to jobs; a writer that must switch
    /// its memtable while too many wait for a flush still flushes one itself. A failure
    /// poisons the database.
    pub fn next_job(&self) -> Result<Option<crate::jobs::MaintenanceJob>> {
        self.inner.next_job()
    }

    /// Whether the next writes may flush a memtable themselves, before writing: too many wait
    /// for a flush already ([`Options::max_immutable_memtables`]) and the live memtable is
    /// nearly full (7/8), so it must soon be switched. A host that runs flushes as jobs can hold
    /// its writes until one is installed instead of letting its thread do the flush.
    pub fn write_would_flush(&self) -> bool {
        let view = self.inner.versions.view();
        let size = self.inner.options.memtable_size;
        view.imms.len() >= self.inner.options.max_immutable_memtables
            && view.mem.approximate_memory() >= size - size / 8
    }

    /// Leaves the removal of obsolete tables and logs to deletion jobs handed out by
    /// [`Db::next_job`] ([`crate::jobs::DeleteWork`]; `true`), or removes them here (`false`, the
    /// default). Unlinking a big file can hold a thread for milliseconds: a database whose
    /// thread must not wait on the disk hands them out. Files no job removed are removed by
    /// the close (after a crash, by the next open).
    pub fn hand_out_deletions(&self, on: bool) {
        self.inner.maintenance.set_deletions_by_jobs(on);
    }

    /// Asks for [`Db::compact_range`]'s work to be done by maintenance jobs instead of here:
    /// seals the live memtable (what was written before is flushed first) and returns a
    /// ticket at once; each level's pass is then a compaction job handed out by
    /// [`Db::next_job`] (before the compactions the tree picks), and the request is done once
    /// [`Db::compactions_done`] reaches its ticket. Requests are carried out one at a time, in
    /// order. For a database whose maintenance runs as jobs: nothing else carries them out.
    pub fn request_compaction(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<u64> {
        self.inner.request_compaction(start, end)
    }

    /// The last ticket of [`Db::request_compaction`] done (0 before any): every request up to
    /// it is done.
    pub fn compactions_done(&self) -> u64 {
        self.inner.compactions_done()
    }

    /// Hands out a job that makes the next write-ahead log durable, if none is ready or out and
    /// the live memtable is at least half full ([`crate::jobs::SyncLogWork`]): the log file is
    /// created now (no sync), the job syncs it
    /// and its directory entry wherever it runs, and once [`Db::install_job`] took its output
    /// the next memtable switch starts that log without creating a file or waiting for a sync.
    /// A switch before the install makes it unusable (it is then deleted). For a database whose
    /// thread must not wait on the disk (a JavaScript event loop); with a background thread,
    /// that thread prepares the next log itself. Run, install and abandon it like any job.
    pub fn next_log_job(&self) -> Result<Option<crate::jobs::MaintenanceJob>> {
        self.inner.next_log_job()
    }

    /// Installs `output` of a job from [`Db::next_job`] with one manifest edit: `Ok(true)`;
    /// `Ok(false)` when the job's inputs changed meanwhile (its tables are deleted and its
    /// work handed out again). Errors: [`crate::Error::InvalidArgument`] for a job that is not
    /// out or an output that does not match it (its tables are deleted); storage failures
    /// poison the database.
    pub fn install_job(&self, output: &crate::jobs::JobOutput) -> Result<bool> {
        self.inner.install_job(output)
    }

    /// Takes back job `id` whose runner failed or went away (its tables are deleted, its
    /// work is handed out again). `false` if it was not out.
    pub fn abandon_job(&self, id: u64) -> Result<bool> {
        self.inner.abandon_job(id)
    }

    /// Writes a consistent copy of the database into directory `dest` (created if missing;
    /// it must hold no files) while the database keeps serving reads and writes. Returns the
    /// sequence number the copy is consistent at: it holds every batch up to it and none
    /// after, so a follower opened from it continues with [`Db::changes`] from that + 1. Change
    /// cursors are not copied (they belong to this database's readers).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn checkpoint(&self, dest: impl AsRef<Path>) -> Result<u64> {
        let storage = crate::storage::std_fs::StdFsStorage::open(dest.as_ref())?;
        self.checkpoint_to(Arc::new(storage))
    }

    /// [`Db::checkpoint`] into any storage.
    pub fn checkpoint_to(&self, dest: Arc<dyn Storage>) -> Result<u64> {
        self.inner.checkpoint(&dest)
    }

    /// On a database opened read-only ([`Options::read_only`]): reads what its writer did since
    /// the open or the last catch-up (its manifest and logs as they are now), so new reads see
    /// it; reads already started keep their state. Errors: `InvalidArgument` unless opened
    /// read-only.
    pub fn catch_up(&self) -> Result<()> {
        self.inner.catch_up()
    }

    /// The sequence number of the last committed batch's last operation (0 for a new
    /// database). On a follower: of the last change applied.
    pub fn sequence(&self) -> u64 {
        self.inner.writes.visible_seq()
    }

    /// The change feed from sequence number `since` on: every batch committed with a first
    /// sequence number at or after it, in commit order ([`Changes`]). Errors:
    /// [`crate::Error::ChangesTruncated`] (with the oldest sequence number kept) if batches
    /// from `since` are no longer kept: logs are kept past their flush only while a change
    /// cursor ([`Db::ack_changes`]) or [`Options::change_retention`] holds them.
    pub fn changes(&self, since: u64) -> Result<Changes> {
        Changes::new(self.inner.clone(), since)
    }

    /// Moves durable change cursor `name` (created if missing; 1 to 200 bytes, no NUL) to
    /// `seq`: its reader is done with every batch up to `seq`. Logs holding later batches are
    /// kept until every cursor has passed them. Each call syncs the log (a cursor never
    /// passes a batch a power loss could take) and writes the manifest (synced): a forwarder
    /// acknowledges every so often, not per batch. Errors: `InvalidArgument` for a
    /// bad name or a `seq` past [`Db::sequence`].
    pub fn ack_changes(&self, name: &str, seq: u64) -> Result<()> {
        self.inner.ack_changes(name, seq)
    }

    /// Where change cursor `name` stands, if it exists.
    pub fn change_cursor(&self, name: &str) -> Option<u64> {
        self.inner
            .versions
            .lock()
            .change_cursors()
            .get(name)
            .copied()
    }

    /// Every change cursor and where it stands, by name.
    pub fn change_cursors(&self) -> Vec<(String, u64)> {
        self.inner
            .versions
            .lock()
            .change_cursors()
            .iter()
            .map(|(n, s)| (n.clone(), *s))
            .collect()
    }

    /// Removes change cursor `name` (the logs it held may go); false if there was none.
    pub fn remove_change_cursor(&self, name: &str) -> Result<bool> {
        self.inner.remove_change_cursor(name)
    }

    /// On a follower ([`Options::follower`]): applies `change` from the leader's feed,
    /// atomically, with the leader's sequence numbers. Idempotent: a change at or below
    /// [`Db::sequence`] was applied before and is skipped ([`Applied::AlreadyApplied`]).
    /// Errors: [`crate::Error::ChangeGap`] for anything but the next change, or one that does
    /// not start at `expected_seq` when given (nothing is written); `InvalidArgument` on a
    /// database that is not a follower.
    pub fn apply_change(&self, change: &Change, expected_seq: Option<u64>) -> Result<Applied> {
        self.inner.apply_change(change, expected_seq, false)
    }

    /// Current figures.
    pub fn stats(&self) -> Stats {
        let inner = &self.inner;
        let view = inner.versions.view();
        let level_bytes: Vec<u64> = (0..NUM_LEVELS)
            .map(|l| view.version.level_bytes(l))
            .collect();
        let level_files = (0..NUM_LEVELS)
            .map(|l| view.version.files(l).len())
            .collect();
        let mems = std::iter::once(&view.mem).chain(view.imms.iter());
        let (mut entries, mut memtable_bytes) = (0u64, 0u64);
        for m in mems {
            entries += m.len() as u64;
            memtable_bytes += m.approximate_memory() as u64;
        }
        for level in 0..NUM_LEVELS {
            entries += view
                .version
                .files(level)
                .iter()
                .map(|f| f.entries)
                .sum::<u64>();
        }
        let user = inner.writes.user_bytes();
        let written = inner.writes.wal_bytes() + inner.maintenance.table_bytes();
        Stats {
            entries,
            table_bytes: level_bytes.iter().sum(),
            jobs_installed: inner.maintenance.jobs_installed(),
            level_bytes,
            level_files,
            write_amplification: if user == 0 {
                0.0
            } else {
                written as f64 / user as f64
            },
            user_bytes_written: user,
            memtable_bytes,
            cache_bytes: inner.tables.blocks().used_bytes(),
        }
    }

    /// Stops background work, syncs the WAL and releases the lock. Every later use of this
    /// database (any handle, keyspace or snapshot of it) fails with `Error::Closed`.
    pub fn close(self) -> Result<()> {
        self.inner.close()
    }
}
