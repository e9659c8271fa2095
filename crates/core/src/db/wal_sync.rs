//! Deferred WAL syncs, for a host whose thread must not wait on the disk (Node's event loop,
//! where the engine runs in the caller's thread): writes return once they are in the WAL and
//! the memtable, not yet visible; the host syncs the log itself (`fs.fdatasync` in libuv's
//! pool) and reports the outcome, which makes the waiting writes visible in order, or poisons
//! the database. The group commit does the work (`write/group_commit.rs`, "Deferred syncs").

use crate::db::health::PoisonCause;
use crate::db::Db;
use crate::storage::FileHandle;
use crate::Result;

impl Db {
    /// Turns deferred syncs on or off. While on, a write returns once it is in the WAL (handed
    /// to the storage) and the memtable, but it is visible — and, if a write at or before it
    /// asked for `sync`, durable — only once [`Db::commit_seqs`]' visible sequence number
    /// reaches the last one assigned when it returned; a synced write waits for the host's
    /// sync ([`Db::begin_wal_sync`]). Work that needs every write visible (a memtable switch,
    /// close) runs a waiting sync inline. Turning them off runs a waiting sync first.
    #[doc(hidden)]
    pub fn set_deferred_sync(&self, on: bool) -> Result<()> {
        let result = self.inner.writes.group_commit().set_deferred_sync(on);
        self.sync_outcome(result)
    }

    /// `(visible, last assigned)` sequence numbers: writes up to the first are visible (and
    /// durable as they asked); those after it wait for a deferred sync.
    #[doc(hidden)]
    pub fn commit_seqs(&self) -> (u64, u64) {
        let gc = self.inner.writes.group_commit();
        (gc.visible_seq(), gc.last_seq())
    }

    /// Starts the deferred sync that waiting writes need: `None` if none needs one (writes a
    /// sync already covered become visible now). Then the host syncs the returned log file
    /// (everything written to it before that sync starts is covered) and
    /// calls [`Db::finish_wal_sync`]; nothing else may run on the database in between (in
    /// WebAssembly: natively other threads' syncs of the log wait for it). The file may be an
    /// older log, sealed without a sync, that must be durable before the waiting writes' log
    /// is: the host calls this again until it returns `None`.
    /// Errors: `Poisoned` (or `Quota`) if the database is poisoned or an earlier sync of the
    /// log failed.
    #[doc(hidden)]
    pub fn begin_wal_sync(&self) -> Result<Option<FileHandle>> {
        let begun = self.inner.writes.group_commit().begin_host_sync();
        let gate = self.sync_outcome(begun)?;
        Ok(gate.map(|gate| gate.file().clone()))
    }

    /// Reports the outcome of the host's sync: success makes the writes it covers visible, in
    /// commit order; a failure fails every write not yet visible and poisons the database —
    /// the error returned is the one every later write gets (`Poisoned`, or `Quota`, with the
    /// cause).
    #[doc(hidden)]
    pub fn finish_wal_sync(&self, result: Result<()>) -> Result<()> {
        let finished = self.inner.writes.group_commit().finish_host_sync(result);
        self.sync_outcome(finished)
    }

    /// Poisons the database if the group commit is poisoned, turning `result`'s error into the
    /// poisoning one.
    fn sync_outcome<T>(&self, result: Result<T>) -> Result<T> {
        result.map_err(|e| {
            if self.inner.writes.poisoned().is_none() {
                return e;
            }
            self.inner.health.poison(&e);
            PoisonCause::of(&e).error()
        })
    }
}
