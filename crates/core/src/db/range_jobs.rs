//! Compactions of key ranges carried out as jobs ([`crate::Db::request_compaction`]): the
//! request flushes what was written before it, then compacts the range level by level down
//! to the deepest level holding data, as [`crate::Db::compact_range`] does here, but each
//! level's pass is a compaction job run wherever the jobs run (`job_desk.rs` hands it out).
//! The request state is `range_compactions.rs`'s, under the maintenance lock.

use crate::compaction::picker::{plan_for_range, CompactionPlan};
use crate::db::core::DbInner;
use crate::db::maintenance::MaintenanceGuard;
use crate::Result;

/// What the range compaction in progress needs next.
pub(crate) enum RangeStep {
    /// None is asked for.
    Idle,
    /// It waits: for its pass's job, or for the flushes it comes after.
    Wait,
    /// This pass, to hand out as a job.
    Plan(CompactionPlan),
}

impl DbInner {
    /// Asks for `[start, end]` (internal keys; `None`: unbounded) to be compacted by jobs:
    /// seals the live memtable and queues the request; returns its ticket, done once
    /// [`DbInner::compactions_done`] reaches it.
    pub(crate) fn request_compaction(
        &self,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<u64> {
        self.options.check_not_read_only()?;
        self.health.check_writable()?;
        // What was written before the request is flushed before its first pass.
        self.switch_memtable(true)?;
        let flush_below = self.versions.lock().live_wal();
        let mut work = self.maintenance.lock();
        Ok(work.ranges().request(
            start.map(<[u8]>::to_vec),
            end.map(<[u8]>::to_vec),
            flush_below,
        ))
    }

    /// The last ticket of [`DbInner::request_compaction`] done (0 before any).
    pub(crate) fn compactions_done(&self) -> u64 {
        self.maintenance.lock().ranges().done()
    }

    /// The next pass of the range compaction in progress. Passes with nothing to compact are
    /// skipped and trivial moves made here; a request with no pass left is done.
    pub(crate) fn next_range_plan(&self, work: &mut MaintenanceGuard<'_>) -> Result<RangeStep> {
        loop {
            let Some(range) = work.ranges().current() else {
                return Ok(RangeStep::Idle);
            };
            if range.job.is_some() {
                return Ok(RangeStep::Wait);
            }
            let flushing = self
                .versions
                .lock()
                .oldest_immutable_with_wal()
                .is_some_and(|(_, wal)| wal < range.flush_below);
            if flushing {
                return Ok(RangeStep::Wait);
            }
            // Down to the deepest level holding data (out of L0 at least), where tombstones
            // can finally be dropped.
            let plan = {
                let version = self.versions.lock().current();
                match version.deepest_nonempty_level() {
                    Some(deepest) if range.level < deepest.max(1) => Some(plan_for_range(
                        &version,
                        range.level,
                        range.start.as_deref(),
                        range.end.as_deref(),
                    )),
                    _ => None,
                }
            };
            match plan {
                None => work.ranges().finish_current(),
                Some(None) => range.level += 1,
                Some(Some(plan)) if plan.is_trivial_move() => {
                    let level = range.level;
                    self.compact_here(work, plan)?;
                    if let Some(range) = work.ranges().current() {
                        range.level = level + 1;
                    }
                }
                Some(Some(plan)) => return Ok(RangeStep::Plan(plan)),
            }
        }
    }
}
