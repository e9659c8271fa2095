//! [`DbInner`]: an open database, made of its owners, and how it is put together and closed.
//! Each owner keeps its state behind its own small interface (`health.rs`, `write_path.rs`,
//! `versions.rs`, `maintenance.rs`, `changes/state.rs`, `layers.rs`); the operations that
//! span several owners are `impl DbInner` blocks in one file each (`write.rs`, `switch.rs`,
//! `read.rs`, `maintain.rs`, `obsolete.rs`, `open.rs`, ...).

use std::sync::{Arc, Mutex, PoisonError};

use crate::db::changes::state::ChangeState;
use crate::db::health::Health;
use crate::db::layers::Layers;
use crate::db::maintenance::Maintenance;
use crate::db::next_log::NextLog;
use crate::db::options::Options;
use crate::db::snapshots::SnapshotList;
use crate::db::table_cache::TableCache;
use crate::db::versions::Versions;
use crate::db::write_path::WritePath;
use crate::sstable::BlockCache;
use crate::storage::{Storage, StorageLock};
use crate::Result;

/// Everything an open database shares between its handles.
pub(crate) struct DbInner {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) options: Options,
    /// Closed, poisoned.
    pub(crate) health: Health,
    /// The group commit and the bytes written through it.
    pub(crate) writes: WritePath,
    /// The version set, the manifest, the memtables waiting for flush, the keyspaces, the view.
    pub(crate) versions: Versions,
    /// The maintenance lock, the work in progress, the background thread.
    pub(crate) maintenance: Maintenance,
    pub(crate) snapshots: Arc<SnapshotList>,
    pub(crate) tables: TableCache,
    /// The change feed's logs, waiters and the follower's apply lock.
    pub(crate) changes: ChangeState,
    /// The shared state of the layers built on the engine (queues, topics).
    pub(crate) layers: Layers,
    /// The next log prepared off the writer's path, and sealed logs' tails to cut.
    pub(crate) next_log: NextLog,
    /// The storage's lock on the directory, held until close.
    dir_lock: Mutex<Option<Box<dyn StorageLock>>>,
}

impl std::fmt::Debug for DbInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("storage", &self.storage)
            .finish()
    }
}

impl DbInner {
    /// The shared state of an open database in `storage`: its `versions` (with the live
    /// memtable) and its write path, the directory's `lock` (held until close; none for a
    /// read-only open). Healthy, no work in progress.
    pub(crate) fn assemble(
        storage: Arc<dyn Storage>,
        options: Options,
        versions: Versions,
        writes: WritePath,
        lock: Option<Box<dyn StorageLock>>,
    ) -> DbInner {
        let tables = TableCache::new(
            Arc::clone(&storage),
            Arc::new(BlockCache::new(options.block_cache_size)),
        );
        DbInner {
            writes,
            versions,
            maintenance: Maintenance::new(&options),
            storage,
            health: Health::default(),
            snapshots: Arc::default(),
            tables,
            changes: ChangeState::default(),
            layers: Layers::default(),
            next_log: NextLog::default(),
            dir_lock: Mutex::new(lock),
            options,
        }
    }

    /// Stops background work, syncs the WAL and releases the lock. Idempotent.
    pub(crate) fn close(&self) -> Result<()> {
        if !self.health.close() {
            return Ok(());
        }
        self.maintenance.background().stop();
        self.discard_next_log();
        self.changes.notify_commit();
        let synced = self.writes.exclusive(|wal, _| wal.sync_for_close());
        self.delete_what_jobs_left();
        self.dir_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // A poisoned database closes without complaint: reopening is how it recovers.
        synced.or_else(|e| {
            if self.writes.poisoned().is_some() || self.health.is_poisoned() {
                Ok(())
            } else {
                Err(e)
            }
        })
    }
}

impl DbInner {
    /// At a close: the obsolete files left to deletion jobs that no job removed go now (the
    /// runners are stopped or will find them gone: a runner skips a file already removed), so
    /// a closed database's directory holds only what it needs. Best effort: what a failure
    /// leaves, the next open removes.
    fn delete_what_jobs_left(&self) {
        if !self.maintenance.deletions_by_jobs() || self.health.is_poisoned() {
            return;
        }
        self.maintenance.set_deletions_by_jobs(false);
        let mut work = self.maintenance.lock();
        work.drop_deletion_jobs();
        let _ = self.delete_obsolete_files(&mut work);
    }
}

impl Drop for DbInner {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
