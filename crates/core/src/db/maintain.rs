//! Flush and compaction as bounded steps (`Db::maintain`), `compact_range`, and the native
//! background thread's loop that drives them.

use std::sync::Arc;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::Weak;

use crate::compaction::picker::{plan_for_range, CompactionPicker, CompactionPlan};
use crate::compaction::{CompactionJob, StepOutcome};
#[cfg(not(target_arch = "wasm32"))]
use crate::db::budget::STEP_BUDGET;
use crate::db::budget::{Budget, CompactProgress, MaintainOutcome};
use crate::db::core::DbInner;
use crate::db::flush_job::FlushJob;
use crate::db::maintenance::MaintenanceGuard;
use crate::version::NUM_LEVELS;
use crate::Result;

impl DbInner {
    /// One bounded step: flush the oldest immutable memtable if there is one, else advance
    /// (or start) a compaction by about `budget.bytes`. Work handed out as a job
    /// (`job_desk.rs`) is left to its runner. A failure poisons the database.
    pub(crate) fn maintain(&self, budget: Budget) -> Result<MaintainOutcome> {
        self.maintain_as(budget, false)
    }

    /// [`DbInner::maintain`] for a writer that cannot go on until a memtable is flushed: it
    /// flushes the oldest one here even if a job has it (that job's install is then refused).
    pub(crate) fn maintain_taking_over(&self, budget: Budget) -> Result<MaintainOutcome> {
        self.maintain_as(budget, true)
    }

    fn maintain_as(&self, budget: Budget, take_over: bool) -> Result<MaintainOutcome> {
        self.options.check_not_read_only()?;
        self.health.check_writable()?;
        let mut work = self.maintenance.lock();
        self.health
            .poison_on_error(self.maintain_locked(&mut work, budget, take_over))
    }

    fn maintain_locked(
        &self,
        work: &mut MaintenanceGuard<'_>,
        budget: Budget,
        take_over: bool,
    ) -> Result<MaintainOutcome> {
        if !take_over && work.flush_issued() && !work.has_flush() {
            // The oldest memtable is a job's; compactions may still run here.
        } else if let Some(written) = self.flush_oldest(work, budget.bytes)? {
            return Ok(MaintainOutcome {
                bytes_written: written,
                more: true,
            });
        }
        self.compaction_step(work, budget.bytes, None)
    }

    /// Advances the flush of the oldest immutable memtable to an L0 table by about `budget`
    /// bytes of table output (starting it if none is in progress), installing the table once
    /// the memtable is written out. `None` if there is nothing to flush.
    fn flush_oldest(&self, work: &mut MaintenanceGuard<'_>, budget: u64) -> Result<Option<u64>> {
        let mut job = match work.take_flush() {
            Some(job) => job,
            None => {
                let (mem, number) = {
                    let mut versions = self.versions.lock();
                    let Some(mem) = versions.oldest_immutable() else {
                        return Ok(None);
                    };
                    (mem, versions.new_file_number())
                };
                let options = self.maintenance.table_options();
                FlushJob::start(&*self.storage, mem, number, options)?
            }
        };
        let start = job.table_size();
        if job.write(start, budget)? {
            let written = job.table_size() - start;
            work.park_flush(job);
            self.maintenance.add_table_bytes(written);
            return Ok(Some(written));
        }
        let (mem, meta) = job.finish(&*self.storage)?;
        if meta.is_some() {
            // The table is synced; its directory entry must be durable before an edit names it.
            self.storage.sync_dir()?;
        }
        let written = meta.as_ref().map_or(0, |m| m.size);
        // Bytes of this step: the table's tail (and index, filter, footer) since `start`.
        let written_now = written.saturating_sub(start);
        self.versions
            .lock()
            .install_flush(&mem, meta, &self.health)?;
        self.maintenance.add_table_bytes(written_now);
        self.delete_obsolete_files(work)?;
        Ok(Some(written_now))
    }

    /// Advances the compaction in progress, or starts the one the tree needs most (none while
    /// a compaction job is out) or, with `forced`, the given plan.
    pub(super) fn compaction_step(
        &self,
        work: &mut MaintenanceGuard<'_>,
        budget: u64,
        forced: Option<CompactionPlan>,
    ) -> Result<MaintainOutcome> {
        let job = match work.take_compaction() {
            Some(job) => Some(job),
            None => {
                let plan = match forced {
                    Some(p) => Some(p),
                    None if work.compaction_issued() => None,
                    None => {
                        let version = self.versions.lock().current();
                        work.pick(&version, self.maintenance.compaction_options())
                    }
                };
                match plan {
                    Some(plan) => Some(self.start_job(plan)?),
                    None => None,
                }
            }
        };
        let Some(mut job) = job else {
            return Ok(MaintainOutcome::default());
        };
        let before = job.stats().bytes_written;
        let outcome = job.step(budget.max(1), &mut || {
            Ok(self.versions.lock().new_file_number())
        })?;
        let written = job.stats().bytes_written - before;
        self.maintenance.add_table_bytes(written);
        match outcome {
            StepOutcome::Pending => {
                work.park_compaction(job);
                Ok(MaintainOutcome {
                    bytes_written: written,
                    more: true,
                })
            }
            StepOutcome::Done => {
                let edit = job.finish()?;
                if !edit.files_added.is_empty() {
                    // The outputs are synced; their entries must be durable before the edit.
                    self.storage.sync_dir()?;
                }
                self.versions
                    .lock()
                    .install_compaction(edit, &self.health)?;
                self.delete_obsolete_files(work)?;
                let more = self.needs_compaction();
                Ok(MaintainOutcome {
                    bytes_written: written,
                    more,
                })
            }
        }
    }

    fn start_job(&self, plan: CompactionPlan) -> Result<CompactionJob> {
        let version = self.versions.lock().current();
        let mut tables = Vec::new();
        for (_, f) in plan.all_inputs() {
            tables.push(self.tables.get(f.number)?);
        }
        let bottommost = plan.is_bottommost(&version);
        CompactionJob::new(
            self.storage.clone(),
            plan,
            tables,
            self.snapshots.sequences(),
            bottommost,
            self.maintenance.compaction_options().clone(),
        )
    }

    /// Whether some level is over its target.
    fn needs_compaction(&self) -> bool {
        let version = self.versions.lock().current();
        CompactionPicker::scores(&version, self.maintenance.compaction_options())
            .iter()
            .any(|&s| s >= 1.0)
    }

    /// Flushes every memtable, then compacts `[start, end]` level by level down to the last
    /// level holding data.
    /// A failure poisons the database.
    /// `progress` is called at the start of each level's pass and after each step of it.
    pub(crate) fn compact_range(
        &self,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        progress: &mut dyn FnMut(CompactProgress),
    ) -> Result<()> {
        self.options.check_not_read_only()?;
        self.flush_all()?;
        self.health
            .poison_on_error(self.compact_range_flushed(start, end, progress))
    }

    fn compact_range_flushed(
        &self,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        progress: &mut dyn FnMut(CompactProgress),
    ) -> Result<()> {
        let mut work = self.maintenance.lock();
        // Finish whatever compaction is in progress first.
        while work.has_compaction() {
            self.compaction_step(&mut work, u64::MAX, None)?;
        }
        for level in 0..NUM_LEVELS - 1 {
            // The version is dropped before the compaction runs: holding it would keep the
            // compaction's input tables alive (undeletable) after it.
            let plan = {
                let version = self.versions.lock().current();
                // Push data down to the deepest level holding any (out of L0 at least), where
                // tombstones can finally be dropped.
                match version.deepest_nonempty_level() {
                    None => break,
                    Some(deepest) if level >= deepest.max(1) => break,
                    Some(_) => plan_for_range(&version, level, start, end),
                }
            };
            if let Some(plan) = plan {
                let mut done = CompactProgress {
                    level: plan.level,
                    output_level: plan.output_level,
                    entries_done: 0,
                    entries_total: plan.all_inputs().map(|(_, f)| f.entries).sum(),
                };
                progress(done);
                self.compaction_step(&mut work, COMPACT_RANGE_STEP_BYTES, Some(plan))?;
                while let Some(read) = work.compaction_entries_read() {
                    done.entries_done = read.min(done.entries_total);
                    progress(done);
                    self.compaction_step(&mut work, COMPACT_RANGE_STEP_BYTES, None)?;
                }
                done.entries_done = done.entries_total;
                progress(done);
            }
        }
        self.delete_obsolete_files(&mut work)
    }

    /// Runs `plan` here to its end (a trivial move: no file is written).
    pub(crate) fn compact_here(
        &self,
        work: &mut MaintenanceGuard<'_>,
        plan: CompactionPlan,
    ) -> Result<()> {
        self.compaction_step(work, u64::MAX, Some(plan))?;
        while work.has_compaction() {
            self.compaction_step(work, u64::MAX, None)?;
        }
        Ok(())
    }

    /// Makes the live memtable immutable (if it holds anything) and flushes every immutable
    /// memtable. A failure poisons the database.
    pub(crate) fn flush_all(&self) -> Result<()> {
        self.options.check_not_read_only()?;
        self.switch_memtable(true)?;
        let mut work = self.maintenance.lock();
        self.health.poison_on_error((|| {
            while self.flush_oldest(&mut work, u64::MAX)?.is_some() {}
            Ok(())
        })())
    }

    /// Starts the background thread that drives maintenance (native targets; in WebAssembly
    /// there is none: the host calls `maintain`).
    pub(crate) fn start_background(self: &Arc<Self>) -> std::io::Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let db = Arc::downgrade(self);
            self.maintenance
                .background()
                .start(self.options.maintenance_priority, move || {
                    run_in_background(db)
                })
        }
        #[cfg(target_arch = "wasm32")]
        Ok(())
    }
}

/// How much a level's pass of [`DbInner::compact_range`] does between two progress reports.
const COMPACT_RANGE_STEP_BYTES: u64 = 4 << 20;

/// The background thread's loop: steps while there is work, then sleeps until woken (or for
/// 200 ms); ends when stopped, when the database is dropped, or after a failed step (which
/// poisoned the database: writes report it).
#[cfg(not(target_arch = "wasm32"))]
fn run_in_background(db: Weak<DbInner>) {
    loop {
        let Some(inner) = db.upgrade() else { return };
        let background = inner.maintenance.background();
        if background.stopped() {
            return;
        }
        inner.prepare_next_log();
        let more = match inner.maintain(STEP_BUDGET) {
            Ok(outcome) => outcome.more,
            // The failure poisoned the database (writes report it); stop working.
            Err(_) => return,
        };
        if !more && !background.wait(std::time::Duration::from_millis(200)) {
            return;
        }
    }
}
