//! What the database is made of now, and the one way that changes: the version set (tables per
//! level, and the counters and records the manifest keeps), the manifest writer, the memtables
//! waiting for flush, the keyspaces by name, and the [`View`] readers take of them.
//!
//! One lock guards all of it ([`Versions::lock`]). Every change to the version set is a
//! manifest edit logged through the guard ([`VersionsGuard::log_edit`], or one of the installs
//! that also change the memtables), and the view is replaced only by the guard, under that
//! lock: a view always pairs memtables and tables that belong together, and a flush's table
//! appears in the same view change that drops its memtable.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use crate::db::health::Health;
use crate::db::keyspace_ids::KeyspaceIds;
use crate::db::memtables::Memtables;
use crate::db::options::read_only_error;
use crate::db::view::View;
use crate::memtable::MemTable;
use crate::version::edit::VersionEdit;
use crate::version::manifest::ManifestWriter;
use crate::version::{FileMeta, Version, VersionSet};
use crate::{Error, Result};

/// The versions of a database and the view of them.
pub(crate) struct Versions {
    state: Mutex<State>,
    view: RwLock<Arc<View>>,
    /// A read-only open logs no edit (its manifest writer writes to scratch memory).
    read_only: bool,
}

/// What the lock guards.
struct State {
    set: VersionSet,
    manifest: ManifestWriter,
    memtables: Memtables,
    keyspaces: KeyspaceIds,
}

impl Versions {
    /// The versions of `set`, logged by `manifest`, with `mem` the live memtable writing to WAL
    /// `live_wal` and no memtable waiting for flush.
    pub(crate) fn new(
        set: VersionSet,
        manifest: ManifestWriter,
        mem: Arc<MemTable>,
        live_wal: u64,
        read_only: bool,
    ) -> Versions {
        let view = View {
            mem,
            imms: Vec::new(),
            version: set.current(),
        };
        Versions {
            state: Mutex::new(State {
                keyspaces: KeyspaceIds::of(set.keyspaces()),
                memtables: Memtables::new(live_wal),
                manifest,
                set,
            }),
            view: RwLock::new(Arc::new(view)),
            read_only,
        }
    }

    /// Locks the versions. Lock order: taken after the maintenance lock and inside the group
    /// commit's exclusive section, never the other way round.
    pub(crate) fn lock(&self) -> VersionsGuard<'_> {
        VersionsGuard {
            state: self.state.lock().unwrap_or_else(PoisonError::into_inner),
            view: &self.view,
            read_only: self.read_only,
        }
    }

    /// The current view.
    #[inline]
    pub(crate) fn view(&self) -> Arc<View> {
        self.view
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The current view and `seq()`, read while the view cannot be replaced: a sequence
    /// number read here and the view belong together.
    #[inline]
    pub(crate) fn read_point(&self, seq: impl FnOnce() -> u64) -> (Arc<View>, u64) {
        let view = self.view.read().unwrap_or_else(PoisonError::into_inner);
        (view.clone(), seq())
    }
}

/// The versions, locked.
pub(crate) struct VersionsGuard<'a> {
    state: MutexGuard<'a, State>,
    view: &'a RwLock<Arc<View>>,
    read_only: bool,
}

impl VersionsGuard<'_> {
    /// The current version of tables.
    pub(crate) fn current(&self) -> Arc<Version> {
        self.state.set.current()
    }

    /// A file number no file uses (for a new table or log).
    pub(crate) fn new_file_number(&mut self) -> u64 {
        self.state.set.new_file_number()
    }

    /// `count` consecutive file numbers no file uses, `[start, end)` (persisted as used by the
    /// next edit).
    pub(crate) fn reserve_file_numbers(&mut self, count: u64) -> std::ops::Range<u64> {
        let start = self.state.set.next_file_number();
        self.state.set.mark_file_number_used(start + count - 1);
        start..start + count
    }

    /// The oldest WAL recovery needs (older ones are obsolete).
    pub(crate) fn log_number(&self) -> u64 {
        self.state.set.log_number()
    }

    /// The number of the manifest being written.
    pub(crate) fn manifest_number(&self) -> u64 {
        self.state.manifest.number()
    }

    /// The numbers of the tables of every version still in use.
    pub(crate) fn live_files(&mut self) -> BTreeSet<u64> {
        self.state.set.live_files()
    }

    /// The change cursors and where they stand, by name.
    pub(crate) fn change_cursors(&self) -> &BTreeMap<String, u64> {
        self.state.set.change_cursors()
    }

    /// The keyspaces' names, by id.
    pub(crate) fn keyspace_names(&self) -> &BTreeMap<u32, String> {
        self.state.set.keyspaces()
    }

    /// The id of keyspace `name`, if it exists.
    pub(crate) fn keyspace_id(&self, name: &str) -> Option<u32> {
        self.state.keyspaces.get(name)
    }

    /// The metadata of keyspace `id`, if it has some.
    pub(crate) fn keyspace_metadata(&self, id: u32) -> Option<&[u8]> {
        self.state
            .set
            .keyspace_metadata()
            .get(&id)
            .map(Vec::as_slice)
    }

    /// An edit that recreates the whole version set (for a checkpoint's manifest).
    pub(crate) fn snapshot_edit(&self) -> VersionEdit {
        self.state.set.snapshot_edit()
    }

    /// The number of the WAL the live memtable writes to.
    pub(crate) fn live_wal(&self) -> u64 {
        self.state.memtables.live_wal()
    }

    /// The oldest memtable waiting for flush.
    pub(crate) fn oldest_immutable(&self) -> Option<Arc<MemTable>> {
        self.state.memtables.oldest().cloned()
    }

    /// The oldest memtable waiting for flush and the WAL holding its writes.
    pub(crate) fn oldest_immutable_with_wal(&self) -> Option<(Arc<MemTable>, u64)> {
        let mem = self.state.memtables.oldest()?.clone();
        Some((mem, self.state.memtables.oldest_wal()?))
    }

    /// Logs `edit` in the manifest and applies it to the version set. For edits that change no
    /// table (keyspaces, their metadata, change cursors): the view stays. Errors:
    /// [`Error::ReadOnly`] on a read-only open; `InvalidArgument` for an edit that does not
    /// apply (nothing changes); a storage failure poisons `health` (whether the edit reached
    /// the disk is unknown; the manifest writer refuses further edits).
    pub(crate) fn log_edit(&mut self, edit: VersionEdit, health: &Health) -> Result<()> {
        if self.read_only {
            return Err(read_only_error());
        }
        let state = &mut *self.state;
        let result = state.manifest.log_and_apply(&mut state.set, edit);
        if let Err(e) = &result {
            if !matches!(e, Error::InvalidArgument(_)) {
                health.poison(e);
            }
        }
        result
    }

    /// Keyspace `name`'s id, creating it (one manifest edit, as [`VersionsGuard::log_edit`])
    /// with the next free id if it does not exist.
    pub(crate) fn create_keyspace(&mut self, name: &str, health: &Health) -> Result<u32> {
        if let Some(id) = self.state.keyspaces.get(name) {
            return Ok(id);
        }
        let id = self.state.keyspaces.next_id();
        let edit = VersionEdit {
            keyspaces_created: vec![(id, name.to_owned())],
            ..VersionEdit::default()
        };
        self.log_edit(edit, health)?;
        self.state.keyspaces.insert(name, id);
        Ok(id)
    }

    /// Installs the flush of `flushed`, the oldest memtable waiting (flushes run one at a
    /// time, oldest first): one manifest edit adds `table` to level 0 (`None`: the memtable
    /// held nothing to write), moves the log number past the memtable's WAL and the last
    /// sequence number up to its writes; then the memtable stops waiting and the view shows the
    /// table instead of it. Errors as [`VersionsGuard::log_edit`], and then nothing changes.
    pub(crate) fn install_flush(
        &mut self,
        flushed: &MemTable,
        table: Option<FileMeta>,
        health: &Health,
    ) -> Result<()> {
        // WALs before the next memtable still waiting (or the live one) are obsolete.
        let log_number = self.state.memtables.log_number_after_oldest();
        // The table holds these sequence numbers now; the WAL that held them goes away.
        let last = self
            .state
            .set
            .last_sequence()
            .max(flushed.max_seq().unwrap_or(0));
        let edit = VersionEdit {
            log_number: Some(log_number),
            files_added: table.into_iter().map(|m| (0, m)).collect(),
            last_sequence: Some(last),
            ..VersionEdit::default()
        };
        self.log_edit(edit, health)?;
        self.state.set.set_last_sequence(last);
        self.state.memtables.drop_oldest();
        let mem = self.view().mem.clone();
        self.replace_view(mem);
        Ok(())
    }

    /// Installs a compaction's result: `edit` (its inputs removed, its outputs added) is
    /// logged and applied, and the view shows the new version. Errors as
    /// [`VersionsGuard::log_edit`], and then nothing changes.
    pub(crate) fn install_compaction(&mut self, edit: VersionEdit, health: &Health) -> Result<()> {
        self.log_edit(edit, health)?;
        let view = self.view();
        self.set_view(View {
            mem: view.mem.clone(),
            imms: view.imms.clone(),
            version: self.current(),
        });
        Ok(())
    }

    /// Makes `sealed` (the live memtable, whose WAL was sealed) wait for flush, and a new empty
    /// memtable writing to WAL `next_wal` the live one. Returns the WAL `sealed` wrote to. The
    /// view's version comes from the version set, not from the old view: a flush may have
    /// installed a newer one since the caller read it.
    pub(crate) fn switch_memtable(&mut self, sealed: Arc<MemTable>, next_wal: u64) -> u64 {
        let old_wal = self.state.memtables.seal(sealed, next_wal);
        self.replace_view(Arc::new(MemTable::new()));
        old_wal
    }

    /// Replaces the whole state with `set` (recovered again by a read-only open catching up
    /// with its writer), `mem` the live memtable holding its logs' writes up to `last_seq`.
    /// `publish` runs while the new view is installed and the view lock still held, so a read
    /// point never pairs the new view with the old sequence number or the reverse.
    pub(crate) fn replace(
        &mut self,
        mut set: VersionSet,
        mem: Arc<MemTable>,
        last_seq: u64,
        publish: impl FnOnce(),
    ) {
        set.inherit_readers(&self.state.set);
        self.state.keyspaces = KeyspaceIds::of(set.keyspaces());
        let view = View {
            mem,
            imms: Vec::new(),
            version: set.current(),
        };
        self.state.set = set;
        self.state.set.set_last_sequence(last_seq);
        let mut current = self.view.write().unwrap_or_else(PoisonError::into_inner);
        *current = Arc::new(view);
        publish();
    }

    /// The current view.
    fn view(&self) -> Arc<View> {
        self.view
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A view of `mem` (the live memtable), the memtables waiting and the current version.
    fn replace_view(&self, mem: Arc<MemTable>) {
        self.set_view(View {
            mem,
            imms: self.state.memtables.newest_first(),
            version: self.current(),
        });
    }

    fn set_view(&self, view: View) {
        *self.view.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(view);
    }
}
