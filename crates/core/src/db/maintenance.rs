//! The maintenance owner: the lock one maintainer holds while it flushes or compacts, the work
//! in progress between bounded steps (a flush, a compaction, the compaction picker's
//! pointers), the jobs handed out to runners (`job_desk.rs`) with the file numbers reserved
//! for them and the compactions of key ranges asked for as jobs (`range_compactions.rs`), the
//! background thread's signal, the options tables are written with, and the bytes written to
//! tables. The steps themselves are in `maintain.rs`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::compaction::picker::{CompactionOptions, CompactionPicker, CompactionPlan};
use crate::compaction::CompactionJob;
use crate::db::background::Background;
use crate::db::flush_job::FlushJob;
use crate::db::options::Options;
use crate::db::range_compactions::RangeCompactions;
use crate::jobs::DeleteWork;
use crate::memtable::MemTable;
use crate::sstable::TableOptions;
use crate::version::Version;
use crate::write::wal::PreparedLog;

/// What maintenance keeps between steps.
#[derive(Debug)]
pub(crate) struct Maintenance {
    work: Mutex<Work>,
    background: Background,
    /// Bytes written to tables since open (flushes and compactions).
    table_bytes: AtomicU64,
    /// Jobs installed since open.
    jobs_installed: AtomicU64,
    /// Whether jobs were asked for: then they do the compactions, not writers.
    jobs_used: AtomicBool,
    /// Whether obsolete tables and logs are left to deletion jobs.
    deletions_by_jobs: AtomicBool,
    table_options: TableOptions,
    compaction_options: CompactionOptions,
}

/// The work in progress, guarded by the maintenance lock.
#[derive(Debug)]
struct Work {
    picker: CompactionPicker,
    compaction: Option<CompactionJob>,
    flush: Option<FlushJob>,
    /// Jobs handed out and not yet installed or abandoned.
    issued: Vec<IssuedJob>,
    /// File numbers reserved for jobs, persisted in the manifest as used: `[next, end)`.
    numbers: std::ops::Range<u64>,
    /// Compactions of key ranges asked for, carried out as jobs.
    ranges: RangeCompactions,
    /// Obsolete tables and logs left for a deletion job (none out has them).
    doomed: DeleteWork,
}

/// A job handed out: what it claims and the file numbers it may create.
#[derive(Debug)]
pub(crate) struct IssuedJob {
    pub(crate) id: u64,
    pub(crate) claim: Claim,
    pub(crate) outputs: Vec<u64>,
}

/// What an issued job works on.
#[derive(Debug)]
pub(crate) enum Claim {
    /// The oldest immutable memtable when issued (its log is the job's).
    Flush(Arc<MemTable>),
    /// Obsolete files being removed (not handed out again while the job is out).
    Delete(DeleteWork),
    /// The plan's input tables, and whether the job may drop tombstones.
    Compaction(CompactionPlan, bool),
    /// The next log, created here and not yet durable, and the memtable switches counted
    /// when it was created (a switch since then makes it unusable: [`crate::db::next_log`]).
    SyncLog(Box<PreparedLog>, u64),
}

impl Maintenance {
    /// No work in progress; tables written as `options` say.
    pub(crate) fn new(options: &Options) -> Maintenance {
        Maintenance {
            work: Mutex::new(Work {
                picker: CompactionPicker::new(),
                compaction: None,
                flush: None,
                issued: Vec::new(),
                numbers: 0..0,
                ranges: RangeCompactions::default(),
                doomed: DeleteWork::default(),
            }),
            background: Background::default(),
            table_bytes: AtomicU64::new(0),
            jobs_installed: AtomicU64::new(0),
            jobs_used: AtomicBool::new(false),
            deletions_by_jobs: AtomicBool::new(false),
            table_options: options.table_options(),
            compaction_options: options.compaction_options(),
        }
    }

    /// Takes the maintenance lock: one maintainer at a time, and no file is deleted while a
    /// table is being written. Lock order: before the versions' lock, never while holding it.
    pub(crate) fn lock(&self) -> MaintenanceGuard<'_> {
        MaintenanceGuard(self.work.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The background thread's handle and signal.
    pub(crate) fn background(&self) -> &Background {
        &self.background
    }

    /// What a flush writes its table with.
    pub(crate) fn table_options(&self) -> &TableOptions {
        &self.table_options
    }

    /// What compactions are picked and written with.
    pub(crate) fn compaction_options(&self) -> &CompactionOptions {
        &self.compaction_options
    }

    /// Counts `bytes` written to tables.
    pub(crate) fn add_table_bytes(&self, bytes: u64) {
        self.table_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Bytes written to tables since open.
    pub(crate) fn table_bytes(&self) -> u64 {
        self.table_bytes.load(Ordering::Relaxed)
    }

    /// Counts a job installed.
    pub(crate) fn job_installed(&self) {
        self.jobs_installed.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes that maintenance runs as jobs (`Db::next_job` was called).
    pub(crate) fn mark_jobs_used(&self) {
        self.jobs_used.store(true, Ordering::Relaxed);
    }

    /// Whether maintenance runs as jobs: a writer then leaves compactions to them.
    pub(crate) fn jobs_used(&self) -> bool {
        self.jobs_used.load(Ordering::Relaxed)
    }

    /// Leaves obsolete tables and logs to deletion jobs (`true`), or deletes them here.
    pub(crate) fn set_deletions_by_jobs(&self, on: bool) {
        self.deletions_by_jobs.store(on, Ordering::Relaxed);
    }

    /// Whether obsolete tables and logs are left to deletion jobs.
    pub(crate) fn deletions_by_jobs(&self) -> bool {
        self.deletions_by_jobs.load(Ordering::Relaxed)
    }

    /// Jobs installed since open.
    pub(crate) fn jobs_installed(&self) -> u64 {
        self.jobs_installed.load(Ordering::Relaxed)
    }
}

/// The maintenance lock, held: the work in progress.
pub(crate) struct MaintenanceGuard<'a>(MutexGuard<'a, Work>);

impl MaintenanceGuard<'_> {
    /// The flush in progress, taken out to run a step (put it back with
    /// [`MaintenanceGuard::park_flush`] if it is not done).
    pub(crate) fn take_flush(&mut self) -> Option<FlushJob> {
        self.0.flush.take()
    }

    /// Keeps `job` for the next step.
    pub(crate) fn park_flush(&mut self, job: FlushJob) {
        self.0.flush = Some(job);
    }

    /// The compaction in progress, taken out to run a step (put it back with
    /// [`MaintenanceGuard::park_compaction`] if it is not done).
    pub(crate) fn take_compaction(&mut self) -> Option<CompactionJob> {
        self.0.compaction.take()
    }

    /// Keeps `job` for the next step.
    pub(crate) fn park_compaction(&mut self, job: CompactionJob) {
        self.0.compaction = Some(job);
    }

    /// Whether a compaction is in progress.
    pub(crate) fn has_compaction(&self) -> bool {
        self.0.compaction.is_some()
    }

    /// Entries the compaction in progress read so far; `None` when none is in progress.
    pub(crate) fn compaction_entries_read(&self) -> Option<u64> {
        self.0.compaction.as_ref().map(|j| j.stats().entries_read)
    }

    /// The compaction `version` needs most, if any (the picker moves its pointers).
    pub(crate) fn pick(
        &mut self,
        version: &Version,
        options: &CompactionOptions,
    ) -> Option<CompactionPlan> {
        self.0.picker.pick(version, options)
    }

    /// Whether a flush is in progress here (not a job's).
    pub(crate) fn has_flush(&self) -> bool {
        self.0.flush.is_some()
    }

    /// The tables the work in progress is writing, here or by issued jobs: no live version
    /// names them yet, and they must not be deleted.
    pub(crate) fn pending_outputs(&self) -> Vec<u64> {
        self.0
            .compaction
            .as_ref()
            .map(|j| j.pending_outputs().to_vec())
            .unwrap_or_default()
            .into_iter()
            .chain(self.0.flush.as_ref().map(FlushJob::table_number))
            .chain(self.0.issued.iter().flat_map(|j| j.outputs.iter().copied()))
            .collect()
    }

    /// Whether an issued job flushes a memtable.
    pub(crate) fn flush_issued(&self) -> bool {
        self.0
            .issued
            .iter()
            .any(|j| matches!(j.claim, Claim::Flush(_)))
    }

    /// Whether an issued job syncs the next log.
    pub(crate) fn log_issued(&self) -> bool {
        self.0
            .issued
            .iter()
            .any(|j| matches!(j.claim, Claim::SyncLog(..)))
    }

    /// Takes back every issued sync-log job (a close), returning their logs.
    pub(crate) fn take_log_jobs(&mut self) -> Vec<PreparedLog> {
        let (logs, others): (Vec<IssuedJob>, Vec<IssuedJob>) = std::mem::take(&mut self.0.issued)
            .into_iter()
            .partition(|j| matches!(j.claim, Claim::SyncLog(..)));
        self.0.issued = others;
        logs.into_iter()
            .filter_map(|j| match j.claim {
                Claim::SyncLog(log, _) => Some(*log),
                _ => None,
            })
            .collect()
    }

    /// Whether an issued job compacts.
    pub(crate) fn compaction_issued(&self) -> bool {
        self.0
            .issued
            .iter()
            .any(|j| matches!(j.claim, Claim::Compaction(..)))
    }

    /// Whether an issued job deletes files.
    pub(crate) fn deletion_issued(&self) -> bool {
        self.deletions().next().is_some()
    }

    /// Whether an issued deletion job removes table `number`.
    pub(crate) fn deleting_table(&self, number: u64) -> bool {
        self.deletions().any(|d| d.tables.contains(&number))
    }

    /// Whether an issued deletion job removes log `number`.
    pub(crate) fn deleting_log(&self, number: u64) -> bool {
        self.deletions().any(|d| d.logs.contains(&number))
    }

    fn deletions(&self) -> impl Iterator<Item = &DeleteWork> {
        self.0.issued.iter().filter_map(|j| match &j.claim {
            Claim::Delete(d) => Some(d),
            _ => None,
        })
    }

    /// Forgets the issued deletion jobs (a close: their runners are stopped, and what they
    /// did not remove is removed here).
    pub(crate) fn drop_deletion_jobs(&mut self) {
        self.0
            .issued
            .retain(|j| !matches!(j.claim, Claim::Delete(_)));
    }

    /// Replaces the files left for a deletion job.
    pub(crate) fn set_doomed(&mut self, doomed: DeleteWork) {
        self.0.doomed = doomed;
    }

    /// The files left for a deletion job, taken; `None` if there are none.
    pub(crate) fn take_doomed(&mut self) -> Option<DeleteWork> {
        let doomed = std::mem::take(&mut self.0.doomed);
        (!doomed.tables.is_empty() || !doomed.logs.is_empty()).then_some(doomed)
    }

    /// Records `job` as issued.
    pub(crate) fn issue(&mut self, job: IssuedJob) {
        self.0.issued.push(job);
    }

    /// Takes issued job `id` back (installed or abandoned).
    pub(crate) fn take_issued(&mut self, id: u64) -> Option<IssuedJob> {
        let at = self.0.issued.iter().position(|j| j.id == id)?;
        Some(self.0.issued.remove(at))
    }

    /// The compactions of key ranges asked for.
    pub(crate) fn ranges(&mut self) -> &mut RangeCompactions {
        &mut self.0.ranges
    }

    /// Reserved file numbers left.
    pub(crate) fn reserved_left(&self) -> u64 {
        self.0.numbers.end - self.0.numbers.start
    }

    /// A new block of reserved numbers, `[start, end)` (persisted as used by the caller).
    pub(crate) fn set_reserved(&mut self, numbers: std::ops::Range<u64>) {
        self.0.numbers = numbers;
    }

    /// `count` reserved numbers (at most [`MaintenanceGuard::reserved_left`]).
    pub(crate) fn take_reserved(&mut self, count: u64) -> Vec<u64> {
        let start = self.0.numbers.start;
        let end = (start + count).min(self.0.numbers.end);
        self.0.numbers.start = end;
        (start..end).collect()
    }
}
