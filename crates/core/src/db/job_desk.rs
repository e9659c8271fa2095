//! The database's side of maintenance jobs (`crate::jobs`): handing them out with the file
//! numbers they may create, installing what runners made of them with one manifest edit (or
//! refusing it when its inputs changed meanwhile), and taking back abandoned ones; the
//! sync-log jobs, which make the next write-ahead log durable ([`DbInner::next_log_job`]); and
//! the deletion jobs, which remove obsolete tables and logs (`obsolete.rs` notes them).
//!
//! Invariants: at most one flush job, one compaction job, one sync-log job and one deletion
//! job are out at a time, and none while a step of `maintain.rs` holds the same work in
//! progress; an issued job's numbers are in `pending_outputs` (never deleted as obsolete while
//! it runs) and were persisted in the manifest as used before the job was handed out, so no
//! later open reissues them, even to a runner that outlived this process. A sync-log job's log
//! number is not persisted: the database creates that file itself, and the runner only opens
//! and syncs it (a late runner that finds a later open's file of that number syncs it,
//! harmlessly). A deletion job names only files no version, memtable or feed reader needs;
//! numbers are never reused, so a late runner removes nothing of a later open.

use crate::compaction::CompactionPlan;
use crate::db::core::DbInner;
use crate::db::maintenance::{Claim, IssuedJob, MaintenanceGuard};
use crate::db::range_jobs::RangeStep;
use crate::file_names::{table_file_name, wal_file_name};
use crate::jobs::{CompactionWork, FlushWork, JobOutput, JobWork, MaintenanceJob, SyncLogWork};
use crate::storage::OpenMode;
use crate::version::edit::VersionEdit;
use crate::version::FileMeta;
use crate::write::wal::PreparedLog;
use crate::{Error, Result};

/// File numbers reserved at once for jobs (one manifest edit persists them).
const RESERVE_BLOCK: u64 = 256;

impl DbInner {
    /// The next maintenance job, if one is due: the flush of the oldest memtable waiting
    /// (unless one is out), else the compaction the tree needs most (unless one is out).
    /// Trivial moves are made here at once (a manifest edit, no file written). A failure
    /// poisons the database.
    pub(crate) fn next_job(&self) -> Result<Option<MaintenanceJob>> {
        self.options.check_not_read_only()?;
        self.health.check_writable()?;
        let mut work = self.maintenance.lock();
        self.health.poison_on_error(self.next_job_locked(&mut work))
    }

    fn next_job_locked(&self, work: &mut MaintenanceGuard<'_>) -> Result<Option<MaintenanceJob>> {
        self.maintenance.mark_jobs_used();
        let table = self.maintenance.table_options().clone();
        if !work.flush_issued() && !work.has_flush() && !self.flush_waits_for_compaction(work) {
            let oldest = self.versions.lock().oldest_immutable_with_wal();
            if let Some((mem, wal)) = oldest {
                let outputs = self.reserve(work, 1)?;
                let job = MaintenanceJob {
                    id: outputs[0],
                    work: JobWork::Flush(FlushWork {
                        wal,
                        entries: mem.len() as u64,
                    }),
                    table,
                    outputs: outputs.clone(),
                };
                work.issue(IssuedJob {
                    id: job.id,
                    claim: Claim::Flush(mem),
                    outputs,
                });
                return Ok(Some(job));
            }
        }
        if !work.deletion_issued() {
            if let Some(doomed) = work.take_doomed() {
                let id = self.reserve(work, 1)?[0];
                work.issue(IssuedJob {
                    id,
                    claim: Claim::Delete(doomed.clone()),
                    outputs: Vec::new(),
                });
                return Ok(Some(MaintenanceJob {
                    id,
                    work: JobWork::Delete(doomed),
                    table,
                    outputs: Vec::new(),
                }));
            }
        }
        if work.compaction_issued() {
            return Ok(None);
        }
        if work.has_compaction() {
            // A compaction a writer started here (too many L0 tables, before jobs took over)
            // and left between steps: jobs take over from it. Its partial outputs are orphans,
            // removed now.
            drop(work.take_compaction());
            self.delete_obsolete_files(work)?;
        }
        match self.next_range_plan(work)? {
            RangeStep::Plan(plan) => {
                let job = self.issue_compaction(work, plan)?;
                work.ranges().job_issued(job.id);
                return Ok(Some(job));
            }
            RangeStep::Wait => return Ok(None),
            RangeStep::Idle => {}
        }
        loop {
            let version = self.versions.lock().current();
            let options = self.maintenance.compaction_options();
            let Some(plan) = work.pick(&version, options) else {
                return Ok(None);
            };
            drop(version);
            if plan.is_trivial_move() {
                self.compact_here(work, plan)?;
                continue;
            }
            return self.issue_compaction(work, plan).map(Some);
        }
    }

    /// Whether the next flush waits for the compaction job out: L0 is one table short of the
    /// slowdown trigger. Flushes and compactions run in separate lanes, so without this a
    /// runner's flushes could pile up L0 tables faster than its compactions merge them; held
    /// back, memtables wait instead, and once too many do a writer flushes one itself.
    fn flush_waits_for_compaction(&self, work: &MaintenanceGuard<'_>) -> bool {
        work.compaction_issued()
            && self.versions.view().version.files(0).len() + 1 >= self.options.l0_slowdown_trigger
    }

    /// Hands out `plan` as a compaction job, with the file numbers its outputs may take.
    fn issue_compaction(
        &self,
        work: &mut MaintenanceGuard<'_>,
        plan: CompactionPlan,
    ) -> Result<MaintenanceJob> {
        let options = self.maintenance.compaction_options();
        let bottommost = plan.is_bottommost(&self.versions.lock().current());
        let input_bytes: u64 = plan.all_inputs().map(|(_, f)| f.size).sum();
        // Outputs are cut at the target size; twice the inputs' share, plus room for range
        // tombstone pieces and a different compression than the inputs had.
        let count = 2 * input_bytes.div_ceil(options.target_file_size.max(1)) + 4;
        let outputs = self.reserve(work, count)?;
        let job = MaintenanceJob {
            id: outputs[0],
            work: JobWork::Compaction(CompactionWork {
                level: plan.level,
                inputs: plan.inputs.iter().map(|f| FileMeta::clone(f)).collect(),
                next_inputs: plan
                    .next_inputs
                    .iter()
                    .map(|f| FileMeta::clone(f))
                    .collect(),
                snapshots: self.snapshots.sequences(),
                bottommost,
                target_file_size: options.target_file_size,
            }),
            table: options.table.clone(),
            outputs: outputs.clone(),
        };
        work.issue(IssuedJob {
            id: job.id,
            claim: Claim::Compaction(plan, bottommost),
            outputs,
        });
        Ok(job)
    }

    /// A job that makes the next write-ahead log durable, if none is ready or out and the live
    /// memtable is at least half full: the log is
    /// created here (its file header written, nothing synced: an open and a write), the job
    /// syncs it and its directory entry elsewhere, and its install hands it to the next memtable
    /// switch, which then creates no file and waits for no sync. The log's number is taken
    /// now, above every log in use; a switch before the install makes it unusable (refused at
    /// install, deleted). Its id is the log's number; it reserves no output. `None` also when
    /// the log cannot be created (the switch then creates one itself, as without jobs).
    pub(crate) fn next_log_job(&self) -> Result<Option<MaintenanceJob>> {
        self.options.check_not_read_only()?;
        self.health.check_writable()?;
        let mut work = self.maintenance.lock();
        if work.log_issued() {
            return Ok(None);
        }
        let Some(switches) = self.next_log.due() else {
            return Ok(None);
        };
        // Not before the live memtable is half full: a database that stays small never gets
        // one (nor starts a runner for it).
        if self.versions.view().mem.approximate_memory() < self.options.memtable_size / 2 {
            return Ok(None);
        }
        let number = self.versions.lock().new_file_number();
        let reserve = self.options.memtable_size as u64;
        let created = PreparedLog::create_unsynced(
            &*self.storage,
            number,
            self.options.wal_options(),
            reserve,
        );
        let log = match created {
            Ok(log) => log,
            // Not ours to delete (a number is never handed out twice: not expected).
            Err(Error::AlreadyExists { .. }) => return Ok(None),
            Err(_) => {
                // Whatever the failed creation left goes (else the next open removes it).
                let _ = self.storage.remove(&wal_file_name(number));
                return Ok(None);
            }
        };
        work.issue(IssuedJob {
            id: number,
            claim: Claim::SyncLog(Box::new(log), switches),
            outputs: Vec::new(),
        });
        Ok(Some(MaintenanceJob {
            id: number,
            work: JobWork::SyncLog(SyncLogWork { wal: number }),
            table: self.maintenance.table_options().clone(),
            outputs: Vec::new(),
        }))
    }

    /// Installs sync-log job output `output` of `log` (created when `switches` switches were
    /// counted): the log is kept for the next switch (`Ok(true)`), or deleted when a switch
    /// came first (`Ok(false)`). An output naming tables is `InvalidArgument` (the log goes).
    fn install_log(&self, log: PreparedLog, switches: u64, output: &JobOutput) -> Result<bool> {
        if !output.tables.is_empty() {
            let _ = log.discard(&*self.storage);
            return Err(Error::InvalidArgument(format!(
                "sync-log job {} names tables",
                output.id
            )));
        }
        match self.next_log.offer(switches, log) {
            None => Ok(true),
            Some(refused) => {
                let _ = refused.discard(&*self.storage);
                Ok(false)
            }
        }
    }

    /// `count` file numbers for a job, from the reserved block, reserving (and persisting) a
    /// new block first when it has too few.
    fn reserve(&self, work: &mut MaintenanceGuard<'_>, count: u64) -> Result<Vec<u64>> {
        if work.reserved_left() < count {
            let mut versions = self.versions.lock();
            let block = versions.reserve_file_numbers(count.max(RESERVE_BLOCK));
            // The edit records the next file number past the block.
            versions.log_edit(VersionEdit::default(), &self.health)?;
            work.set_reserved(block);
        }
        Ok(work.take_reserved(count))
    }

    /// Installs what a runner made of job `output.id`: `Ok(true)` once one manifest edit
    /// added its tables; `Ok(false)` when it is refused because its inputs changed meanwhile
    /// (the memtable was flushed here, an input table was compacted away) — its tables are
    /// then deleted. Errors: [`Error::InvalidArgument`] for a job not out, or tables it did
    /// not reserve or that are not on disk as described (they are deleted, the job is taken
    /// back); a storage failure poisons the database.
    pub(crate) fn install_job(&self, output: &JobOutput) -> Result<bool> {
        self.options.check_not_read_only()?;
        self.health.check_writable()?;
        let mut work = self.maintenance.lock();
        let installed = match work.take_issued(output.id) {
            Some(IssuedJob {
                claim: Claim::SyncLog(log, switches),
                ..
            }) => return self.install_log(*log, switches, output),
            Some(IssuedJob {
                claim: Claim::Delete(deleted),
                ..
            }) if output.tables.is_empty() => {
                for &n in &deleted.logs {
                    self.changes.logs().removed(n);
                }
                return Ok(true);
            }
            Some(issued) => {
                let installed = self.install_issued(&issued, output);
                work.ranges()
                    .job_ended(issued.id, matches!(installed, Ok(true)));
                installed
            }
            None => Err(Error::InvalidArgument(format!(
                "maintenance job {} is not out (installed, abandoned, or of another open)",
                output.id
            ))),
        };
        match &installed {
            // A failed manifest edit (it poisoned the database): whether the edit reached the
            // disk is unknown, so its tables must not be deleted.
            Err(e) if !matches!(e, Error::InvalidArgument(_)) => {
                return self.health.poison_on_error(installed);
            }
            Ok(true) => {
                self.maintenance.add_table_bytes(output.bytes_written());
                self.maintenance.job_installed();
            }
            _ => {}
        }
        // Tables no version names now (a refused or invalid job's, a late runner's) go.
        self.health
            .poison_on_error(self.delete_obsolete_files(&mut work))?;
        installed
    }

    fn install_issued(&self, issued: &IssuedJob, output: &JobOutput) -> Result<bool> {
        for (i, table) in output.tables.iter().enumerate() {
            if !issued.outputs.contains(&table.number)
                || output.tables[..i].iter().any(|t| t.number == table.number)
            {
                return Err(Error::InvalidArgument(format!(
                    "maintenance job {} did not reserve table {} (or names it twice)",
                    issued.id, table.number
                )));
            }
            let size = self
                .storage
                .open(&table_file_name(table.number), OpenMode::Read)
                .and_then(|f| f.size());
            if size.as_ref().ok() != Some(&table.size) {
                return Err(Error::InvalidArgument(format!(
                    "maintenance job {}'s table {} is not on disk as described ({size:?}, {} \
                     bytes expected)",
                    issued.id, table.number, table.size
                )));
            }
        }
        match &issued.claim {
            Claim::Flush(mem) => {
                let mut versions = self.versions.lock();
                let still_oldest = versions
                    .oldest_immutable()
                    .is_some_and(|m| std::sync::Arc::ptr_eq(&m, mem));
                if !still_oldest {
                    return Ok(false);
                }
                if output.tables.len() > 1 {
                    return Err(Error::InvalidArgument(format!(
                        "flush job {} wrote {} tables",
                        issued.id,
                        output.tables.len()
                    )));
                }
                versions.install_flush(mem, output.tables.first().cloned(), &self.health)?;
                Ok(true)
            }
            Claim::Compaction(plan, bottommost) => {
                let mut versions = self.versions.lock();
                let current = versions.current();
                let unchanged = plan.all_inputs().all(|(level, f)| {
                    current
                        .files(level)
                        .iter()
                        .any(|live| live.as_ref() == f.as_ref())
                });
                if !unchanged || (*bottommost && !plan.is_bottommost(&current)) {
                    return Ok(false);
                }
                drop(current);
                let edit = compaction_edit(plan, &output.tables);
                match versions.install_compaction(edit, &self.health) {
                    Ok(()) => Ok(true),
                    // An edit that does not apply (an overlap) changed nothing.
                    Err(Error::InvalidArgument(_)) => Ok(false),
                    Err(e) => Err(e),
                }
            }
            // Installed by `install_log`, before tables are looked at.
            Claim::SyncLog(..) => Ok(false),
            // A deletion's output names no table (one that does reserved none: refused above).
            Claim::Delete(_) => Ok(false),
        }
    }

    /// Takes back job `id` (its runner failed or went away): its tables are deleted and its
    /// work is handed out again later. `false` if it was not out.
    pub(crate) fn abandon_job(&self, id: u64) -> Result<bool> {
        self.options.check_not_read_only()?;
        let mut work = self.maintenance.lock();
        let Some(issued) = work.take_issued(id) else {
            return Ok(false);
        };
        work.ranges().job_ended(id, false);
        if let Claim::SyncLog(log, _) = issued.claim {
            // Never durable, never named by a sealed log: it just goes.
            let _ = (*log).discard(&*self.storage);
            return Ok(true);
        }
        if self.health.check_writable().is_ok() {
            self.health
                .poison_on_error(self.delete_obsolete_files(&mut work))?;
        }
        Ok(true)
    }
}

/// The edit of a compaction job: its inputs deleted, `tables` added at the output level.
fn compaction_edit(plan: &CompactionPlan, tables: &[FileMeta]) -> VersionEdit {
    VersionEdit {
        files_deleted: plan
            .all_inputs()
            .map(|(level, f)| (level as u8, f.number))
            .collect(),
        files_added: tables
            .iter()
            .map(|t| (plan.output_level as u8, t.clone()))
            .collect(),
        ..VersionEdit::default()
    }
}
