//! The shared state of an open database and how it is opened (recovery) and closed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use crate::compaction::picker::{CompactionOptions, CompactionPicker};
use crate::compaction::CompactionJob;
use crate::db::background::Background;
use crate::db::snapshots::SnapshotList;
use crate::db::table_cache::TableCache;
use crate::db::Options;
use crate::file_names::{parse_file_name, FileKind};
use crate::memtable::MemTable;
use crate::sstable::TableOptions;
use crate::storage::{Storage, StorageLock};
use crate::version::edit::VersionEdit;
use crate::version::manifest::{self, ManifestWriter};
use crate::version::{Version, VersionSet};
use crate::write::group_commit::GroupCommit;
use crate::{Error, Result};

/// What a reader needs for a consistent view: the live memtable, the immutable ones (newest
/// first) and the current version of tables. Replaced whole, never mutated (the live memtable
/// itself accepts inserts; readers filter by sequence number).
#[derive(Debug)]
pub(crate) struct View {
    pub(crate) mem: Arc<MemTable>,
    pub(crate) imms: Vec<Arc<MemTable>>,
    pub(crate) version: Arc<Version>,
}

/// An immutable memtable waiting for flush, and the first WAL holding its writes.
#[derive(Debug)]
pub(crate) struct Immutable {
    pub(crate) mem: Arc<MemTable>,
    pub(crate) wal: u64,
}

/// State changed by flushes, compactions and memtable switches (under one mutex).
pub(crate) struct State {
    pub(crate) versions: VersionSet,
    pub(crate) manifest: ManifestWriter,
    /// Oldest first.
    pub(crate) imms: Vec<Immutable>,
    /// Number of the WAL the live memtable's writes are in.
    pub(crate) mem_wal: u64,
    pub(crate) picker: CompactionPicker,
    /// A compaction in progress between `maintain` steps.
    pub(crate) job: Option<CompactionJob>,
    /// A flush of the oldest immutable memtable in progress between `maintain` steps.
    pub(crate) flush: Option<crate::db::maintain::FlushJob>,
    /// Keyspace names to ids.
    pub(crate) keyspaces: HashMap<String, u32>,
    /// Set by a failed flush, compaction or manifest write: writes fail with it.
    pub(crate) poisoned: Option<PoisonCause>,
}

/// Why a database stopped accepting writes.
#[derive(Debug, Clone)]
pub(crate) struct PoisonCause {
    message: String,
    storage_full: bool,
}

impl PoisonCause {
    pub(crate) fn of(e: &Error) -> PoisonCause {
        PoisonCause {
            message: e.to_string(),
            storage_full: e.code() == "QUOTA",
        }
    }

    /// The error every later write gets.
    pub(crate) fn error(&self) -> Error {
        Error::Poisoned {
            cause: self.message.clone(),
            storage_full: self.storage_full,
        }
    }
}

/// Byte counters for stats.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) user_bytes: AtomicU64,
    pub(crate) wal_bytes: AtomicU64,
    pub(crate) table_bytes: AtomicU64,
}

/// Everything an open database shares between its handles.
pub(crate) struct DbInner {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) options: Options,
    pub(crate) table_options: TableOptions,
    pub(crate) compaction_options: CompactionOptions,
    pub(crate) commit: GroupCommit,
    pub(crate) view: RwLock<Arc<View>>,
    pub(crate) state: Mutex<State>,
    /// Held while a flush or compaction step runs: one maintainer at a time.
    pub(crate) maintenance: Mutex<()>,
    pub(crate) snapshots: Arc<SnapshotList>,
    pub(crate) tables: TableCache,
    pub(crate) counters: Counters,
    pub(crate) background: Background,
    pub(crate) closed: AtomicBool,
    /// Mirrors `State::poisoned.is_some()`, so the write path checks it without a lock.
    pub(crate) poisoned: AtomicBool,
    pub(crate) lock: Mutex<Option<Box<dyn StorageLock>>>,
    /// Shared in-memory state of the layers built on the engine (the registries of queues and
    /// topics), one per type, made on first use ([`DbInner::layer`]). None may hold a handle to
    /// the database (that would be a cycle).
    pub(crate) layers: Mutex<Vec<Arc<dyn std::any::Any + Send + Sync>>>,
    /// The change feed's logs, waiters and the follower's apply lock.
    pub(crate) changes: crate::db::changes::ChangeState,
}

impl std::fmt::Debug for DbInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("storage", &self.storage)
            .finish()
    }
}

impl DbInner {
    /// The shared state of type `T` of a layer built on the engine, made by `create` on first
    /// use.
    pub(crate) fn layer<T: std::any::Any + Send + Sync>(
        &self,
        create: impl FnOnce() -> T,
    ) -> Arc<T> {
        let mut layers = self.layers.lock().unwrap_or_else(PoisonError::into_inner);
        for l in layers.iter() {
            if let Ok(found) = l.clone().downcast::<T>() {
                return found;
            }
        }
        let made = Arc::new(create());
        layers.push(made.clone());
        made
    }

    /// The current consistent view.
    pub(crate) fn view(&self) -> Arc<View> {
        self.view
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the view.
    pub(crate) fn set_view(&self, view: View) {
        *self.view.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(view);
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Fails with [`Error::Closed`] once the database is closed.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Closed("the database is closed".into()));
        }
        Ok(())
    }

    /// Fails if the database is closed or poisoned.
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_open()?;
        if self.poisoned.load(Ordering::Acquire) {
            let cause = self.state().poisoned.clone();
            return Err(cause.map_or_else(
                || Error::Poisoned {
                    cause: String::new(),
                    storage_full: false,
                },
                |c| c.error(),
            ));
        }
        // A poisoned group commit refuses the write itself, with its cause.
        Ok(())
    }

    /// Records a failure that leaves the database unable to write safely.
    pub(crate) fn poison(&self, e: &Error) {
        let mut st = self.state();
        self.poison_locked(&mut st, e);
    }

    /// [`DbInner::poison`] with the state lock held.
    pub(crate) fn poison_locked(&self, st: &mut State, e: &Error) {
        if st.poisoned.is_none() {
            st.poisoned = Some(PoisonCause::of(e));
        }
        self.poisoned.store(true, Ordering::Release);
    }

    /// Passes `result` through, poisoning the database if it is an error (other than the
    /// database being closed): for work whose failure leaves the files in an unknown state.
    pub(crate) fn poison_on_error<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result {
            if !matches!(e, Error::Closed(_)) {
                self.poison(e);
            }
        }
        result
    }

    /// Logs `edit` in the manifest and applies it: the one way the engine changes the version
    /// set after open. A storage failure poisons the database (whether the edit reached the
    /// disk is unknown; the manifest writer refuses further edits); an edit that does not apply
    /// is `InvalidArgument` and changes nothing.
    pub(crate) fn log_edit(&self, st: &mut State, edit: VersionEdit) -> Result<()> {
        self.check_not_read_only()?;
        let st_ref = &mut *st;
        let result = st_ref.manifest.log_and_apply(&mut st_ref.versions, edit);
        if let Err(e) = &result {
            if !matches!(e, Error::InvalidArgument(_)) {
                self.poison_locked(st, e);
            }
        }
        result
    }

    /// Removes WALs older than the log number, tables in no live version (and not being
    /// written by the compaction in progress), old manifests and temporary files. Callers hold
    /// the maintenance lock (or are opening), so no flush is writing a table meanwhile.
    pub(crate) fn delete_obsolete_files(&self) -> Result<()> {
        if self.options.read_only {
            // The files are the writer's.
            return Ok(());
        }
        let (live, log_number, manifest_number, pending) = {
            let mut st = self.state();
            let pending: Vec<u64> = st
                .job
                .as_ref()
                .map(|j| j.pending_outputs().to_vec())
                .unwrap_or_default()
                .into_iter()
                .chain(st.flush.as_ref().map(|f| f.out.number()))
                .collect();
            (
                st.versions.live_files(),
                st.versions.log_number(),
                st.manifest.number(),
                pending,
            )
        };
        let names = self.storage.list()?;
        let logs = crate::db::changes::LogIndex::numbers(&names);
        let obsolete_logs: Vec<u64> = logs.iter().copied().filter(|&n| n < log_number).collect();
        let kept = self.logs_to_keep(&obsolete_logs, &logs)?;
        for name in &names {
            let obsolete = match parse_file_name(name) {
                Some(FileKind::Wal(n)) => n < log_number && !kept.contains(&n),
                Some(FileKind::Table(n)) => !live.contains(&n) && !pending.contains(&n),
                _ => false,
            };
            if obsolete {
                match parse_file_name(name) {
                    Some(FileKind::Table(n)) => self.tables.evict(n),
                    Some(FileKind::Wal(n)) => self.changes.logs.forget(n),
                    _ => {}
                }
                self.storage.remove(name)?;
            }
        }
        for name in manifest::obsolete_manifests(&names, manifest_number) {
            self.storage.remove(&name)?;
        }
        Ok(())
    }

    /// Stops background work, syncs the WAL and releases the lock. Idempotent.
    pub(crate) fn close(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        self.background.stop();
        self.changes.signal.notify();
        let synced = self.commit.exclusive(|wal, _| wal.sync_for_close());
        self.lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // A poisoned database closes without complaint: reopening is how it recovers.
        synced.or_else(|e| {
            if self.commit.poisoned().is_some() || self.state().poisoned.is_some() {
                Ok(())
            } else {
                Err(e)
            }
        })
    }
}

impl Drop for DbInner {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
