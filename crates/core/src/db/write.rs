//! The write path: size checks, room in the memtable (switching it, slowing writers down
//! smoothly when flush or compaction falls behind), and group commit.

use std::sync::atomic::Ordering;

use crate::db::background::STEP_BUDGET;
use crate::db::core::{DbInner, Immutable, PoisonCause, View};
use crate::memtable::MemTable;
use crate::write::batch::WriteBatch;
use crate::write::wal::WalWriter;
use crate::{Error, Result};

impl DbInner {
    /// Commits `batch` (keys already carry their keyspace prefix). Returns the batch's first
    /// sequence number. When it returns, the batch is in the WAL (synced if `sync`), in the
    /// memtable, and visible to new reads.
    /// Errors: [`Error::ReadOnly`] on a follower.
    pub(crate) fn write(&self, mut batch: WriteBatch, sync: bool) -> Result<u64> {
        if batch.is_empty() {
            // Nothing to write: not a write a follower or a read-only open must refuse.
            self.check_open()?;
            return Ok(self.commit.visible_seq());
        }
        self.check_leader()?;
        self.annotate(&mut batch, None)?;
        self.write_unchecked(batch, sync)
    }

    /// [`DbInner::write`] without the follower's refusal and without annotating the batch: a
    /// follower's apply writes the leader's batches as they are.
    pub(crate) fn write_unchecked(&self, batch: WriteBatch, sync: bool) -> Result<u64> {
        self.check_not_read_only()?;
        self.check_writable()?;
        if batch.is_empty() {
            return Ok(self.commit.visible_seq());
        }
        self.make_room()?;
        let bytes = batch.approximate_size() as u64;
        let result = self.commit.commit(batch, sync, &mut |first_seq, b| {
            self.view().mem.apply(first_seq, b);
            Ok(())
        });
        match result {
            Ok(seq) => {
                self.counters.user_bytes.fetch_add(bytes, Ordering::Relaxed);
                self.counters.wal_bytes.fetch_add(bytes, Ordering::Relaxed);
                self.changes.signal.notify();
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
        self.check_writable()?;
        self.make_room()?;
        let bytes = batch.approximate_size() as u64;
        self.commit
            .commit_checked(batch, sync, check, &mut |first_seq, b| {
                self.view().mem.apply(first_seq, b);
                Ok(())
            })
            .map_err(|e| self.commit_failed(e))?;
        self.counters.user_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.counters.wal_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.changes.signal.notify();
        Ok(())
    }

    /// [`Error::ReadOnly`] on a follower (only its apply writes) or a read-only open.
    pub(crate) fn check_leader(&self) -> Result<()> {
        self.check_not_read_only()?;
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
        if self.commit.poisoned().is_none() {
            return e;
        }
        self.poison(&e);
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
            let view = self.view();
            let imms = view.imms.len();
            let l0 = view.version.files(0).len();
            let full = view.mem.approximate_memory() >= self.options.memtable_size;
            drop(view);
            if imms >= self.options.max_immutable_memtables {
                // Too many memtables wait for flush: flush one here (bounded by the memtable
                // size), unless the background thread is already doing it.
                self.maintain(STEP_BUDGET)?;
                if full && self.view().imms.len() >= self.options.max_immutable_memtables {
                    continue;
                }
            } else if l0 >= self.options.l0_slowdown_trigger * 2 {
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

    /// Makes the live memtable immutable and starts a new WAL for the next one. With `force`
    /// false, does nothing unless the memtable is full (another writer may have switched it
    /// already); with `force` true, switches any non-empty memtable.
    pub(crate) fn switch_memtable(&self, force: bool) -> Result<()> {
        let switched = self.commit.exclusive(|wal, last_seq| {
            let view = self.view();
            let full = view.mem.approximate_memory() >= self.options.memtable_size;
            if view.mem.is_empty() || (!force && !full) {
                return Ok(());
            }
            let number = self.state().versions.new_file_number();
            // The new log exists durably before the old one names it in its sealed record; the
            // seal syncs the old log whole before the new one takes a write, so recovery may
            // stop at the first torn log without losing an acknowledged synced write.
            let new_wal = WalWriter::create(
                &*self.storage,
                number,
                last_seq + 1,
                self.options.wal_options(),
            )?;
            wal.seal(number)?;
            *wal = new_wal;
            let mut st = self.state();
            let old_wal = std::mem::replace(&mut st.mem_wal, number);
            self.changes.logs.created(number, last_seq + 1);
            self.changes
                .logs
                .sealed(old_wal, self.options.clock.now_ms());
            st.imms.push(Immutable {
                mem: view.mem.clone(),
                wal: old_wal,
            });
            // The version comes from the state, not from `view`: a flush may have installed a
            // newer one since `view` was read (views change only under the state lock).
            self.set_view(View {
                mem: std::sync::Arc::new(MemTable::new()),
                imms: st.imms.iter().rev().map(|i| i.mem.clone()).collect(),
                version: st.versions.current(),
            });
            Ok(())
        });
        if let Err(e) = &switched {
            // A failed creation of the new log or seal of the old one poisons the database:
            // the old log's durability is unknown, and the next open must find the logs as
            // they are now.
            self.poison(e);
        }
        switched?;
        self.background.notify();
        Ok(())
    }
}
