//! The maintenance owner: the lock one maintainer holds while it flushes or compacts, the work
//! in progress between bounded steps (a flush, a compaction, the compaction picker's
//! pointers), the background thread's signal, the options tables are written with, and the
//! bytes written to tables. The steps themselves are in `maintain.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::compaction::picker::{CompactionOptions, CompactionPicker, CompactionPlan};
use crate::compaction::CompactionJob;
use crate::db::background::Background;
use crate::db::flush_job::FlushJob;
use crate::db::options::Options;
use crate::sstable::TableOptions;
use crate::version::Version;

/// What maintenance keeps between steps.
#[derive(Debug)]
pub(crate) struct Maintenance {
    work: Mutex<Work>,
    background: Background,
    /// Bytes written to tables since open (flushes and compactions).
    table_bytes: AtomicU64,
    table_options: TableOptions,
    compaction_options: CompactionOptions,
}

/// The work in progress, guarded by the maintenance lock.
#[derive(Debug)]
struct Work {
    picker: CompactionPicker,
    compaction: Option<CompactionJob>,
    flush: Option<FlushJob>,
}

impl Maintenance {
    /// No work in progress; tables written as `options` say.
    pub(crate) fn new(options: &Options) -> Maintenance {
        Maintenance {
            work: Mutex::new(Work {
                picker: CompactionPicker::new(),
                compaction: None,
                flush: None,
            }),
            background: Background::default(),
            table_bytes: AtomicU64::new(0),
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

    /// The tables the work in progress is writing: no live version names them yet, and they
    /// must not be deleted.
    pub(crate) fn pending_outputs(&self) -> Vec<u64> {
        self.0
            .compaction
            .as_ref()
            .map(|j| j.pending_outputs().to_vec())
            .unwrap_or_default()
            .into_iter()
            .chain(self.0.flush.as_ref().map(FlushJob::table_number))
            .collect()
    }
}
