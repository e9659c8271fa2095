//! The shared state of an open database and how it is opened (recovery) and closed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use crate::compaction::CompactionJob;
use crate::compaction_picker::{CompactionOptions, CompactionPicker};
use crate::db::background::Background;
use crate::db::keys::DEFAULT_KEYSPACE;
use crate::db::snapshots::SnapshotList;
use crate::db::Options;
use crate::file_names::{parse_file_name, FileKind};
use crate::group_commit::GroupCommit;
use crate::manifest::{self, ManifestOptions, ManifestWriter};
use crate::memtable::MemTable;
use crate::recordio::Compression;
use crate::sstable::{BlockCache, TableOptions, TableReader};
use crate::storage::{Storage, StorageLock};
use crate::version::{Version, VersionSet};
use crate::version_edit::VersionEdit;
use crate::wal::{self, WalEnd, WalOptions, WalReader, WalWriter};
use crate::{Error, Result};

/// Name of the lock file in a database directory.
pub(crate) const LOCK_FILE: &str = "LOCK";

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
    pub(crate) cache: Arc<BlockCache>,
    pub(crate) commit: GroupCommit,
    pub(crate) view: RwLock<Arc<View>>,
    pub(crate) state: Mutex<State>,
    /// Held while a flush or compaction step runs: one maintainer at a time.
    pub(crate) maintenance: Mutex<()>,
    pub(crate) snapshots: Arc<SnapshotList>,
    pub(crate) tables: Mutex<HashMap<u64, TableReader>>,
    pub(crate) counters: Counters,
    pub(crate) background: Background,
    pub(crate) closed: AtomicBool,
    /// Mirrors `State::poisoned.is_some()`, so the write path checks it without a lock.
    pub(crate) poisoned: AtomicBool,
    pub(crate) lock: Mutex<Option<Box<dyn StorageLock>>>,
}

impl std::fmt::Debug for DbInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("storage", &self.storage)
            .finish()
    }
}

impl DbInner {
    /// Opens or creates the database in `storage`: takes the lock, replays the manifest and
    /// the WALs, flushes what the WALs held to an L0 table, starts a new WAL.
    pub(crate) fn open(storage: Arc<dyn Storage>, options: Options) -> Result<DbInner> {
        validate(&options)?;
        let lock = storage.lock(LOCK_FILE)?;
        let recovered = manifest::recover(&*storage)?;
        let manifest_number = recovered.as_ref().map(|r| r.manifest_number);
        let mut versions = match recovered {
            Some(r) => {
                if options.error_if_exists {
                    return Err(Error::AlreadyExists {
                        file: "CURRENT".into(),
                    });
                }
                r.versions
            }
            None => {
                if !options.create_if_missing {
                    return Err(Error::NotFound {
                        file: "CURRENT".into(),
                    });
                }
                VersionSet::new()
            }
        };
        let names = storage.list()?;
        if let Some(number) = manifest_number {
            check_manifest_against_files(&mut versions, &names, number)?;
        }
        for name in &names {
            if let Some(FileKind::Wal(n) | FileKind::Table(n) | FileKind::Manifest(n)) =
                parse_file_name(name)
            {
                versions.mark_file_number_used(n);
            }
        }
        let table_options = TableOptions {
            block_size: options.block_size,
            bloom_bits_per_key: options.bloom_bits_per_key,
            compression: if options.compression {
                Compression::Snappy
            } else {
                Compression::None
            },
            ..TableOptions::default()
        };
        let cache = Arc::new(BlockCache::new(options.block_cache_size));

        // Replay the WALs not yet flushed, oldest first, into one memtable.
        let mut wals: Vec<u64> = names
            .iter()
            .filter_map(|n| wal::parse_wal_file_name(n))
            .filter(|&n| n >= versions.log_number())
            .collect();
        wals.sort_unstable();
        let recovered_mem = Arc::new(MemTable::new());
        let mut last_seq = versions.last_sequence();
        for (i, &number) in wals.iter().enumerate() {
            let replay = WalReader::replay(&*storage, number, |first_seq, batch| {
                recovered_mem.apply(first_seq, &batch);
                Ok(())
            })?;
            // The replay's own last sequence number: an empty batch (possible on disk, never
            // written by the engine) has none, and must not underflow `first_seq - 1`.
            if let Some(seq) = replay.last_seq {
                last_seq = last_seq.max(seq);
            }
            if let WalEnd::TornTail { valid_up_to } = replay.end {
                // Only the last WAL can have a torn tail: a WAL is synced whole before a newer
                // one starts. A damaged or cut-short older WAL is corruption; cutting it and
                // dropping the newer WALs would silently lose acknowledged writes.
                if i + 1 < wals.len() {
                    return Err(Error::corruption(
                        wal::wal_file_name(number),
                        valid_up_to,
                        "WAL is damaged or cut short although newer WALs follow it \
                         (only the last WAL may end in a torn write)",
                    ));
                }
                // The last WAL was being written when the process stopped: what follows its
                // last intact record was never acknowledged as synced. Cut it off.
                let file = storage.open(
                    &wal::wal_file_name(number),
                    crate::storage::OpenMode::ReadWrite,
                )?;
                file.truncate(valid_up_to)?;
                file.sync()?;
            }
        }
        versions.set_last_sequence(last_seq);

        let mut manifest_writer =
            ManifestWriter::create(storage.clone(), &mut versions, ManifestOptions::default())?;
        let wal_number = versions.new_file_number();
        let mut edit = VersionEdit {
            log_number: Some(wal_number),
            ..VersionEdit::default()
        };
        if !versions.keyspaces().contains_key(&DEFAULT_KEYSPACE) {
            edit.keyspaces_created
                .push((DEFAULT_KEYSPACE, "default".to_owned()));
        }
        let mut flushed_bytes = 0;
        if !recovered_mem.is_empty() {
            let number = versions.new_file_number();
            let meta = crate::compaction_output::flush(
                &storage,
                number,
                &mut recovered_mem.iter(),
                &table_options,
            )?;
            if let Some(meta) = meta {
                flushed_bytes = meta.size;
                edit.files_added.push((0, meta));
            }
        }
        let wal_writer = WalWriter::create(&*storage, wal_number, WalOptions::default())?;
        manifest_writer.log_and_apply(&mut versions, edit)?;
        let keyspaces = versions
            .keyspaces()
            .iter()
            .map(|(id, name)| (name.clone(), *id))
            .collect();
        let view = View {
            mem: Arc::new(MemTable::new()),
            imms: Vec::new(),
            version: versions.current(),
        };
        let compaction_options = CompactionOptions {
            l0_trigger: options.l0_compaction_trigger,
            base_level_bytes: options.base_level_size,
            level_size_ratio: options.level_size_ratio,
            target_file_size: options.target_file_size,
            table: TableOptions {
                sync_on_finish: true,
                ..table_options.clone()
            },
        };
        let inner = DbInner {
            commit: GroupCommit::new(wal_writer, versions.last_sequence()),
            storage,
            table_options,
            compaction_options,
            cache,
            view: RwLock::new(Arc::new(view)),
            state: Mutex::new(State {
                manifest: manifest_writer,
                imms: Vec::new(),
                mem_wal: wal_number,
                picker: CompactionPicker::new(),
                job: None,
                flush: None,
                keyspaces,
                poisoned: None,
                versions,
            }),
            maintenance: Mutex::new(()),
            snapshots: Arc::default(),
            tables: Mutex::default(),
            counters: Counters::default(),
            background: Background::default(),
            closed: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
            lock: Mutex::new(Some(lock)),
            options,
        };
        inner
            .counters
            .table_bytes
            .fetch_add(flushed_bytes, Ordering::Relaxed);
        inner.delete_obsolete_files()?;
        Ok(inner)
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
        if st.poisoned.is_none() {
            st.poisoned = Some(PoisonCause::of(e));
        }
        self.poisoned.store(true, Ordering::Release);
    }

    /// Removes WALs older than the log number, tables in no live version (and not being
    /// written by the compaction in progress), old manifests and temporary files. Callers hold
    /// the maintenance lock (or are opening), so no flush is writing a table meanwhile.
    pub(crate) fn delete_obsolete_files(&self) -> Result<()> {
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
        for name in &names {
            let obsolete = match parse_file_name(name) {
                Some(FileKind::Wal(n)) => n < log_number,
                Some(FileKind::Table(n)) => !live.contains(&n) && !pending.contains(&n),
                _ => false,
            };
            if obsolete {
                if let Some(FileKind::Table(n)) = parse_file_name(name) {
                    self.tables
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&n);
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
        let synced = self.commit.exclusive(|wal, _| wal.sync());
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

/// Refuses a manifest that describes files which are gone: a manifest whose damaged last edits
/// were taken for a torn tail. An edit is synced before anything it makes obsolete is deleted,
/// so a manifest that lost no edit names only tables that exist, and its log number names an
/// existing WAL whenever newer WALs exist (a WAL is synced, so it survives a crash, before a
/// newer one is created). Opening such a manifest would show stale data or fail reads later.
fn check_manifest_against_files(
    versions: &mut VersionSet,
    names: &[String],
    manifest_number: u64,
) -> Result<()> {
    let manifest = crate::file_names::manifest_file_name(manifest_number);
    let present: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    for number in versions.live_files() {
        let table = crate::file_names::table_file_name(number);
        if !present.contains(table.as_str()) {
            return Err(Error::corruption(
                manifest,
                0,
                format!("lists table {table}, which is missing (the manifest lost edits?)"),
            ));
        }
    }
    let log = versions.log_number();
    let newer_wals = names
        .iter()
        .filter_map(|n| wal::parse_wal_file_name(n))
        .any(|n| n > log);
    let log_wal = wal::wal_file_name(log);
    if log > 0 && newer_wals && !present.contains(log_wal.as_str()) {
        return Err(Error::corruption(
            manifest,
            0,
            format!(
                "its log number names {log_wal}, which is missing while newer WALs exist \
                 (the manifest lost edits?)"
            ),
        ));
    }
    Ok(())
}

fn validate(options: &Options) -> Result<()> {
    if options.max_key_size > crate::batch::MAX_USER_KEY_SIZE {
        return Err(Error::InvalidArgument(format!(
            "max_key_size {} is over the format's limit of {} bytes",
            options.max_key_size,
            crate::batch::MAX_USER_KEY_SIZE
        )));
    }
    if options.max_value_size > crate::batch::MAX_VALUE_SIZE {
        return Err(Error::InvalidArgument(format!(
            "max_value_size {} is over the format's limit of {} bytes",
            options.max_value_size,
            crate::batch::MAX_VALUE_SIZE
        )));
    }
    if options.memtable_size < 64 * 1024 {
        return Err(Error::InvalidArgument(
            "memtable_size must be at least 64 KiB".into(),
        ));
    }
    Ok(())
}
