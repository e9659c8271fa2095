//! Flush and compaction as bounded steps (`Db::maintain`), and `compact_range`.

use std::sync::atomic::Ordering;
use std::sync::PoisonError;

use std::sync::Arc;

use crate::compaction::output::OutputTable;
use crate::compaction::picker::{plan_for_range, CompactionPlan};
use crate::compaction::{CompactionJob, StepOutcome};
use crate::db::core::{DbInner, View};
use crate::db::{Budget, MaintainOutcome};
use crate::iter::InternalIterator;
use crate::memtable::{MemTable, MemTableIter};
use crate::version::edit::VersionEdit;
use crate::version::NUM_LEVELS;
use crate::Result;

/// A memtable flush in progress between `maintain` steps: the immutable memtable (the oldest),
/// a cursor on the next entry to write, and the table being written.
#[derive(Debug)]
pub(crate) struct FlushJob {
    mem: Arc<MemTable>,
    iter: MemTableIter,
    pub(crate) out: OutputTable,
}

impl DbInner {
    /// One bounded step: flush the oldest immutable memtable if there is one, else advance
    /// (or start) a compaction by about `budget.bytes`. A failure poisons the database.
    pub(crate) fn maintain(&self, budget: Budget) -> Result<MaintainOutcome> {
        self.check_not_read_only()?;
        self.check_writable()?;
        let _guard = self
            .maintenance
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.poison_on_error(self.maintain_locked(budget))
    }

    fn maintain_locked(&self, budget: Budget) -> Result<MaintainOutcome> {
        if let Some(written) = self.flush_oldest(budget.bytes)? {
            return Ok(MaintainOutcome {
                bytes_written: written,
                more: true,
            });
        }
        self.compaction_step(budget.bytes, None)
    }

    /// Advances the flush of the oldest immutable memtable to an L0 table by about `budget`
    /// bytes of table output (starting it if none is in progress), installing the table once
    /// the memtable is written out. `None` if there is nothing to flush. Requires the
    /// maintenance lock.
    pub(crate) fn flush_oldest(&self, budget: u64) -> Result<Option<u64>> {
        let in_progress = self.state().flush.take();
        let mut job = match in_progress {
            Some(job) => job,
            None => {
                let (mem, number) = {
                    let mut st = self.state();
                    let Some(imm) = st.imms.first() else {
                        return Ok(None);
                    };
                    let mem = imm.mem.clone();
                    (mem, st.versions.new_file_number())
                };
                let mut iter = mem.iter();
                iter.seek_to_first()?;
                let out = OutputTable::create(&*self.storage, number, &self.table_options)?;
                FlushJob { mem, iter, out }
            }
        };
        let start = job.out.file_size();
        while job.iter.valid() {
            let it = &job.iter;
            job.out.add(it.key(), it.seq(), it.kind(), it.value())?;
            job.iter.next()?;
            let written = job.out.file_size() - start;
            if written >= budget && job.iter.valid() {
                self.state().flush = Some(job);
                self.counters
                    .table_bytes
                    .fetch_add(written, Ordering::Relaxed);
                return Ok(Some(written));
            }
        }
        let FlushJob { mem, out, .. } = job;
        let meta = out.finish(&*self.storage)?;
        if meta.is_some() {
            // The table is synced; its directory entry must be durable before an edit names it.
            self.storage.sync_dir()?;
        }
        let written = meta.as_ref().map_or(0, |m| m.size);
        // Bytes of this step: the table's tail (and index, filter, footer) since `start`.
        let written_now = written.saturating_sub(start);
        {
            let mut st = self.state();
            // WALs before the next memtable still waiting (or the live one) are obsolete.
            let log_number = st.imms.get(1).map_or(st.mem_wal, |i| i.wal);
            let edit = VersionEdit {
                log_number: Some(log_number),
                files_added: meta.into_iter().map(|m| (0, m)).collect(),
                ..VersionEdit::default()
            };
            // The table holds these sequence numbers now; the WAL that held them goes away.
            let last = st.versions.last_sequence().max(mem.max_seq().unwrap_or(0));
            let edit = VersionEdit {
                last_sequence: Some(last),
                ..edit
            };
            self.log_edit(&mut st, edit)?;
            st.versions.set_last_sequence(last);
            st.imms.remove(0);
            let view = self.view();
            self.set_view(View {
                mem: view.mem.clone(),
                imms: st.imms.iter().rev().map(|i| i.mem.clone()).collect(),
                version: st.versions.current(),
            });
        }
        self.counters
            .table_bytes
            .fetch_add(written_now, Ordering::Relaxed);
        self.delete_obsolete_files()?;
        Ok(Some(written_now))
    }

    /// Advances the compaction in progress, or starts the one the tree needs most (or, with
    /// `forced`, the given plan). Requires the maintenance lock.
    pub(crate) fn compaction_step(
        &self,
        budget: u64,
        forced: Option<CompactionPlan>,
    ) -> Result<MaintainOutcome> {
        let job = {
            let mut st = self.state();
            match st.job.take() {
                Some(job) => Some(job),
                None => {
                    let version = st.versions.current();
                    let plan = match forced {
                        Some(p) => Some(p),
                        None => {
                            let st = &mut *st;
                            st.picker.pick(&version, &self.compaction_options)
                        }
                    };
                    match plan {
                        Some(plan) => {
                            drop(st);
                            Some(self.start_job(plan)?)
                        }
                        None => None,
                    }
                }
            }
        };
        let Some(mut job) = job else {
            return Ok(MaintainOutcome::default());
        };
        let before = job.stats().bytes_written;
        let outcome = job.step(budget.max(1), &mut || {
            self.state().versions.new_file_number()
        })?;
        let written = job.stats().bytes_written - before;
        self.counters
            .table_bytes
            .fetch_add(written, Ordering::Relaxed);
        match outcome {
            StepOutcome::Pending => {
                self.state().job = Some(job);
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
                {
                    let mut st = self.state();
                    self.log_edit(&mut st, edit)?;
                    let view = self.view();
                    self.set_view(View {
                        mem: view.mem.clone(),
                        imms: view.imms.clone(),
                        version: st.versions.current(),
                    });
                }
                self.delete_obsolete_files()?;
                let more = self.needs_compaction();
                Ok(MaintainOutcome {
                    bytes_written: written,
                    more,
                })
            }
        }
    }

    fn start_job(&self, plan: CompactionPlan) -> Result<CompactionJob> {
        let version = self.state().versions.current();
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
            self.compaction_options.clone(),
        )
    }

    /// Whether some level is over its target.
    pub(crate) fn needs_compaction(&self) -> bool {
        let version = self.state().versions.current();
        crate::compaction::picker::CompactionPicker::scores(&version, &self.compaction_options)
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
        self.check_not_read_only()?;
        self.flush_all()?;
        self.poison_on_error(self.compact_range_flushed(start, end, progress))
    }

    fn compact_range_flushed(
        &self,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        progress: &mut dyn FnMut(CompactProgress),
    ) -> Result<()> {
        let _guard = self
            .maintenance
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Finish whatever compaction is in progress first.
        while self.state().job.is_some() {
            self.compaction_step(u64::MAX, None)?;
        }
        for level in 0..NUM_LEVELS - 1 {
            // The version is dropped before the compaction runs: holding it would keep the
            // compaction's input tables alive (undeletable) after it.
            let plan = {
                let version = self.state().versions.current();
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
                self.compaction_step(COMPACT_RANGE_STEP_BYTES, Some(plan))?;
                loop {
                    let Some(read) = self.state().job.as_ref().map(|j| j.stats().entries_read)
                    else {
                        break;
                    };
                    done.entries_done = read.min(done.entries_total);
                    progress(done);
                    self.compaction_step(COMPACT_RANGE_STEP_BYTES, None)?;
                }
                done.entries_done = done.entries_total;
                progress(done);
            }
        }
        self.delete_obsolete_files()
    }

    /// Makes the live memtable immutable (if it holds anything) and flushes every immutable
    /// memtable. A failure poisons the database.
    pub(crate) fn flush_all(&self) -> Result<()> {
        self.check_not_read_only()?;
        self.switch_memtable(true)?;
        let _guard = self
            .maintenance
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.poison_on_error((|| {
            while self.flush_oldest(u64::MAX)?.is_some() {}
            Ok(())
        })())
    }
}

/// How much a level's pass of [`DbInner::compact_range`] does between two progress reports.
const COMPACT_RANGE_STEP_BYTES: u64 = 4 << 20;

/// How far a whole-range compaction got ([`crate::Db::compact_range_with_progress`]): it runs
/// level by level, each pass merging level `level` into `output_level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactProgress {
    /// The level compacted in this pass.
    pub level: usize,
    /// The level it is merged into.
    pub output_level: usize,
    /// Entries of this pass's input tables read so far.
    pub entries_done: u64,
    /// Entries of this pass's input tables.
    pub entries_total: u64,
}
