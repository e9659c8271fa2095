//! The write path: size checks, room in the memtable (switching it, slowing writers down
//! smoothly when flush or compaction falls behind), and the commit through the group commit
//! (`write_path.rs`).

use crate::db::budget::STEP_BUDGET;
use crate::db::core::DbInner;
use crate::db::health::PoisonCause;
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

impl DbInner {
    /// Commits `batch` (keys already carry their keyspace prefix). Returns the batch's first
    /// sequence number. When it returns, the batch is in the WAL (synced if `sync`), in the
    /// memtable, and visible to new reads.
    /// Errors: [`Error::ReadOnly`] on a follower.
    pub(crate) fn write(&self, mut batch: WriteBatch, sync: bool) -> Result<u64> {
        if batch.is_empty() {
            // Nothing to write: not a write a follower or a read-only open must refuse.
            self.health.check_open()?;
            return Ok(self.writes.visible_seq());
        }
        self.check_leader()?;
        self.annotate(&mut batch, None)?;
        self.write_unchecked(batch, sync)
    }

    /// [`DbInner::write`] without the follower's refusal and without annotating the batch: a
    /// follower's apply writes the leader's batches as they are.
    pub(crate) fn write_unchecked(&self, batch: WriteBatch, sync: bool) -> Result<u64> {
        self.options.check_not_read_only()?;
        self.health.check_writable()?;
        if batch.is_empty() {
            return Ok(self.writes.visible_seq());
        }
        self.make_room()?;
        let result = self.writes.commit(batch, sync, &mut |first_seq, b| {
            self.versions.view().mem.apply(first_seq, b);
            Ok(())
        });
        match result {
            Ok(seq) => {
                self.changes.notify_commit();
                Ok(seq)
            }
            Err(e) => Err(self.commit_failed(e)),
        }
    }

    /// Commits `batch` only if `check` passes, with no other commit in between (optimistic
    /// transactions).
    pub(crate) fn commit_checked(
        &self,
        mut batch: WriteBatch,
        sync: bool,
        check: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        self.check_leader()?;
        self.annotate(&mut batch, None)?;
        self.health.check_writable()?;
        self.make_room()?;
        self.writes
            .commit_checked(batch, sync, check, &mut |first_seq, b| {
                self.versions.view().mem.apply(first_seq, b);
                Ok(())
            })
            .map_err(|e| self.commit_failed(e))?;
        self.changes.notify_commit();
        Ok(())
    }

    /// [`Error::ReadOnly`] on a follower (only its apply writes) or a read-only open.
    pub(crate) fn check_leader(&self) -> Result<()> {
        self.options.check_not_read_only()?;
        if self.options.follower {
            return Err(Error::ReadOnly(
                "this database is a follower: it takes writes only from its leader's change feed (apply_change)".into(),
            ));
        }
        Ok(())
    }

    /// Adds the batch's annotation (crate::write::batch) unless it has one: the commit time
    /// when the database keeps changes ([`crate::Options::change_retention`]), and `meta`.
    /// An empty batch stays empty (it is not written).
    pub(crate) fn annotate(&self, batch: &mut WriteBatch, meta: Option<&[u8]>) -> Result<()> {
        let stamp = self.options.change_retention.is_some();
        if batch.is_empty() || batch.annotated() || !(stamp || meta.is_some()) {
            return Ok(());
        }
        let time = stamp.then(|| self.options.clock.now_ms());
        batch.annotate(time, meta)
    }

    /// Turns a failed commit into the caller's error: a WAL failure poisons the group commit,
    /// and then the whole database (`Poisoned`, with the cause) — other errors (a transaction
    /// conflict) pass through.
    fn commit_failed(&self, e: Error) -> Error {
        if self.writes.poisoned().is_none() {
            return e;
        }
        self.health.poison(&e);
        PoisonCause::of(&e).error()
    }

    /// `InvalidArgument` unless `key` fits the key size limit.
    pub(crate) fn check_key(&self, key: &[u8]) -> Result<()> {
        if key.len() > self.options.max_key_size {
            return Err(Error::InvalidArgument(format!(
                "key of {} bytes is over the limit of {} bytes",
                key.len(),
                self.options.max_key_size
            )));
        }
        Ok(())
    }

    /// `InvalidArgument` unless `value` fits the value size limit.
    pub(crate) fn check_value(&self, value: &[u8]) -> Result<()> {
        if value.len() > self.options.max_value_size {
            return Err(Error::InvalidArgument(format!(
                "value of {} bytes is over the limit of {} bytes",
                value.len(),
                self.options.max_value_size
            )));
        }
        Ok(())
    }

    /// Makes sure the live memtable has room. A full memtable becomes immutable (a new WAL is
    /// started). When immutable memtables or L0 tables pile up past their limits, this writer
    /// first performs bounded maintenance steps itself: writes slow down by the work they cause
    /// instead of stalling behind an unbounded amount of it.
    fn make_room(&self) -> Result<()> {
        loop {
            let view = self.versions.view();
            let imms = view.imms.len();
            let l0 = view.version.files(0).len();
            let full = view.mem.approximate_memory() >= self.options.memtable_size;
            drop(view);
            if full && imms >= self.options.max_immutable_memtables {
                // The live memtable must be switched and too many wait for flush already: flush
                // one here (bounded by the memtable size), unless the background thread is
                // already doing it; a job's runner that is behind is overtaken. While the live
                // one has room, writes go on and the flush stays the background's or the job's.
                self.maintain_taking_over(STEP_BUDGET)?;
                if self.versions.view().imms.len() >= self.options.max_immutable_memtables {
                    continue;
                }
            } else if l0 >= self.options.l0_slowdown_trigger * 2 && !self.maintenance.jobs_used() {
                // With jobs, compactions are theirs: a step here would be dropped by the next
                // job handed out.
                self.maintain(STEP_BUDGET)?;
            } else if l0 >= self.options.l0_slowdown_trigger {
                // Gentle slowdown: yield so the background thread can catch up.
                std::thread::yield_now();
            }
            if !full {
                return Ok(());
            }
            self.switch_memtable(false)?;
        }
    }
}
