//! The write path's own state: the group commit (the live WAL, sequence numbers, visibility)
//! and the counts of bytes users wrote. What a write does around it (checks, room in the
//! memtable) is in `write.rs`; the memtable switch is in `switch.rs`.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::write::batch::WriteBatch;
use crate::write::group_commit::{ApplyFn, GroupCommit};
use crate::write::wal::WalWriter;
use crate::{Error, Result};

/// The group commit and the bytes committed through it.
#[derive(Debug)]
pub(crate) struct WritePath {
    commit: GroupCommit,
    /// Bytes of keys and values written by users since open.
    user_bytes: AtomicU64,
    /// Bytes written to the WAL since open.
    wal_bytes: AtomicU64,
}

impl WritePath {
    /// Commits through `wal`; `last_seq` is the last sequence number used.
    pub(crate) fn new(wal: WalWriter, last_seq: u64) -> WritePath {
        WritePath {
            commit: GroupCommit::new(wal, last_seq),
            user_bytes: AtomicU64::new(0),
            wal_bytes: AtomicU64::new(0),
        }
    }

    /// The last sequence number whose batch is committed and visible.
    #[inline]
    pub(crate) fn visible_seq(&self) -> u64 {
        self.commit.visible_seq()
    }

    /// Makes `seq` the last sequence number used and visible: only for a database nothing
    /// commits to (a read-only open catching up with its writer).
    pub(crate) fn set_visible_seq(&self, seq: u64) {
        self.commit.set_visible_seq(seq);
    }

    /// Commits `batch` through the group commit ([`GroupCommit::commit`]: `apply` puts it into
    /// the memtable) and counts its bytes once committed. Returns its first sequence number.
    #[inline]
    pub(crate) fn commit(
        &self,
        batch: WriteBatch,
        sync: bool,
        apply: &mut ApplyFn<'_>,
    ) -> Result<u64> {
        let bytes = batch.approximate_size() as u64;
        let seq = self.commit.commit(batch, sync, apply)?;
        self.count(bytes);
        Ok(seq)
    }

    /// [`WritePath::commit`] of `batch` alone, only if `check` passes with no other commit in
    /// between ([`GroupCommit::commit_checked`]).
    pub(crate) fn commit_checked(
        &self,
        batch: WriteBatch,
        sync: bool,
        check: &mut dyn FnMut() -> Result<()>,
        apply: &mut ApplyFn<'_>,
    ) -> Result<()> {
        let bytes = batch.approximate_size() as u64;
        self.commit.commit_checked(batch, sync, check, apply)?;
        self.count(bytes);
        Ok(())
    }

    /// Runs `f` with the live WAL and the last sequence number assigned while no commit runs
    /// and every written group is visible ([`GroupCommit::exclusive`]).
    pub(crate) fn exclusive<R>(
        &self,
        f: impl FnOnce(&mut WalWriter, u64) -> Result<R>,
    ) -> Result<R> {
        self.commit.exclusive(f)
    }

    /// The group commit itself (deferred syncs: `wal_sync.rs`).
    pub(crate) fn group_commit(&self) -> &GroupCommit {
        &self.commit
    }

    /// Makes everything written to the live WAL so far durable, without stopping commits.
    pub(crate) fn sync_written(&self) -> Result<()> {
        self.commit.sync_written()
    }

    /// Stops syncing logs numbered below `number` first: their writes are in tables; those
    /// `keep` names are synced first ([`GroupCommit::retire_logs_before`]).
    pub(crate) fn retire_logs_before(&self, number: u64, keep: impl Fn(u64) -> bool) -> Result<()> {
        self.commit.retire_logs_before(number, keep)
    }

    /// The error a failure poisoned the group commit with, if one did.
    pub(crate) fn poisoned(&self) -> Option<Error> {
        self.commit.poisoned()
    }

    /// Bytes of keys and values written by users since open.
    pub(crate) fn user_bytes(&self) -> u64 {
        self.user_bytes.load(Ordering::Relaxed)
    }

    /// Bytes written to the WAL since open.
    pub(crate) fn wal_bytes(&self) -> u64 {
        self.wal_bytes.load(Ordering::Relaxed)
    }

    fn count(&self, bytes: u64) {
        self.user_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.wal_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}
