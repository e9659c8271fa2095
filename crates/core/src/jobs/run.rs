//! [`run_job`]: the runner's side of a maintenance job. Needs only a storage over the database's
//! directory: no open database, no lock, nothing shared with the issuer.

use std::sync::Arc;

use crate::compaction::output::OutputTable;
use crate::compaction::{CompactionJob, CompactionOptions, CompactionPlan, StepOutcome};
use crate::file_names::{table_file_name, wal_file_name};
use crate::jobs::spec::{
    CompactionWork, DeleteWork, FlushWork, JobOutput, JobWork, MaintenanceJob, SyncLogWork,
};
use crate::key::{compare_internal, ValueKind};
use crate::sstable::{TableOptions, TableReadOptions, TableReader};
use crate::storage::{OpenMode, Storage};
use crate::write::batch::{BatchOp, WriteBatch};
use crate::write::wal::{WalEnd, WalReader};
use crate::{Error, Result};

/// Runs `job` over `storage` (the database's directory) and returns the tables it wrote:
/// finished, synced, their directory entries synced. On error, the tables it created are
/// orphans (the database removes them); nothing else was changed.
///
/// Errors: a log that is not sealed or does not hold the entries the job names is a
/// corruption error; a compaction needing more output numbers than reserved is
/// [`Error::InvalidArgument`]; storage failures as they come.
pub fn run_job(storage: Arc<dyn Storage>, job: &MaintenanceJob) -> Result<JobOutput> {
    let mut table = job.table.clone();
    table.sync_on_finish = true;
    let mut numbers = job.outputs.iter().copied();
    let mut next_number = || {
        numbers.next().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "maintenance job {} needs more than its {} reserved file numbers",
                job.id,
                job.outputs.len()
            ))
        })
    };
    let tables = match &job.work {
        JobWork::Flush(work) => flush(&*storage, work, &table, &mut next_number)?
            .into_iter()
            .collect(),
        JobWork::Compaction(work) => compact(storage.clone(), work, table, &mut next_number)?,
        JobWork::SyncLog(work) => {
            sync_log(&*storage, work)?;
            Vec::new()
        }
        JobWork::Delete(work) => {
            delete(&*storage, work)?;
            Vec::new()
        }
    };
    if !tables.is_empty() {
        // The tables are synced; their entries must be durable before an edit names them.
        storage.sync_dir()?;
    }
    Ok(JobOutput { id: job.id, tables })
}

/// Removes the job's tables and logs; one already gone is skipped. Nothing is synced: a
/// removal that does not survive a crash leaves an obsolete file, which the next open removes.
fn delete(storage: &dyn Storage, work: &DeleteWork) -> Result<()> {
    let names = (work.tables.iter().map(|&n| table_file_name(n)))
        .chain(work.logs.iter().map(|&n| wal_file_name(n)));
    for name in names {
        match storage.remove(&name) {
            Ok(()) | Err(Error::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Syncs log `work.wal` (which must exist: the database created it) and the directory entry
/// naming it. Through a handle of its own: a sync makes the file's data durable whichever handle
/// wrote it.
fn sync_log(storage: &dyn Storage, work: &SyncLogWork) -> Result<()> {
    storage
        .open(&wal_file_name(work.wal), OpenMode::ReadWrite)?
        .sync()?;
    storage.sync_dir()
}

/// Replays sealed log `work.wal` and writes its entries, sorted in internal order (as the
/// frozen memtable held them: key ascending, newest first), to one level-0 table. The entries
/// point into the replayed batches: no per-entry allocation, no skiplist.
fn flush(
    storage: &dyn Storage,
    work: &FlushWork,
    table: &TableOptions,
    next_number: &mut dyn FnMut() -> Result<u64>,
) -> Result<Option<crate::version::FileMeta>> {
    let mut batches: Vec<(u64, WriteBatch)> = Vec::new();
    let replay = WalReader::replay(storage, work.wal, |first_seq, batch| {
        batches.push((first_seq, batch));
        Ok(())
    })?;
    let name = crate::file_names::wal_file_name(work.wal);
    if replay.sealed.is_none() || replay.end != WalEnd::Clean {
        return Err(Error::corruption(
            &name,
            replay.valid_up_to,
            "a flush job's log is not sealed: its memtable may hold writes it lacks",
        ));
    }
    // The log was sealed without a sync. Kept after the install for the change feed, it must
    // be durable whole: synced here, off the database's thread, its sync there finds nothing
    // left to write (a sync covers the file, whichever handle asks).
    storage.open(&name, OpenMode::ReadWrite)?.sync()?;
    let mut entries: Vec<(&[u8], u64, ValueKind, &[u8])> = Vec::new();
    for (first_seq, batch) in &batches {
        // Operation `i` has sequence number `first_seq + i`, annotations included (as
        // `MemTable::apply` numbers them).
        for (i, op) in batch.iter().enumerate() {
            let seq = first_seq + i as u64;
            match op {
                BatchOp::Put { key, value } => entries.push((key, seq, ValueKind::Value, value)),
                BatchOp::Delete { key } => entries.push((key, seq, ValueKind::Tombstone, &[])),
                BatchOp::DeleteRange { start, end } => {
                    entries.push((start, seq, ValueKind::RangeTombstone, end));
                }
                BatchOp::Annotation { .. } => {}
            }
        }
    }
    if entries.len() as u64 != work.entries {
        return Err(Error::corruption(
            &name,
            replay.valid_up_to,
            format!(
                "the log holds {} entries, its memtable held {}",
                entries.len(),
                work.entries
            ),
        ));
    }
    if entries.is_empty() {
        return Ok(None);
    }
    // The one hot sort (a whole memtable's entries): the standard library's own, not
    // `sorting::sort_by`, whose indirection costs twice the time on a million entries.
    entries.sort_unstable_by(|a, b| compare_internal(a.0, a.1, b.0, b.1));
    let mut out = OutputTable::create(storage, next_number()?, table)?;
    for (key, seq, kind, value) in entries {
        out.add(key, seq, kind, value)?;
    }
    out.finish(storage)
}

/// Merges the job's input tables into output tables.
fn compact(
    storage: Arc<dyn Storage>,
    work: &CompactionWork,
    table: TableOptions,
    next_number: &mut dyn FnMut() -> Result<u64>,
) -> Result<Vec<crate::version::FileMeta>> {
    let plan = CompactionPlan {
        level: work.level,
        output_level: work.level + 1,
        inputs: work.inputs.iter().cloned().map(Arc::new).collect(),
        next_inputs: work.next_inputs.iter().cloned().map(Arc::new).collect(),
        score: 0.0,
    };
    if plan.is_trivial_move() {
        return Err(Error::InvalidArgument(
            "a trivial move is not a job (the database makes it itself)".into(),
        ));
    }
    let mut tables = Vec::new();
    for (_, meta) in plan.all_inputs() {
        let file = storage.open(&table_file_name(meta.number), OpenMode::Read)?;
        let size = file.size()?;
        if size != meta.size {
            return Err(Error::corruption(
                file.name(),
                size,
                format!("table is {size} bytes, the job says {}", meta.size),
            ));
        }
        tables.push(TableReader::open(file, TableReadOptions::default())?);
    }
    let options = CompactionOptions {
        target_file_size: work.target_file_size,
        table,
        ..CompactionOptions::default()
    };
    let mut job = CompactionJob::new(
        storage,
        plan,
        tables,
        work.snapshots.clone(),
        work.bottommost,
        options,
    )?;
    while job.step(u64::MAX, next_number)? == StepOutcome::Pending {}
    let edit = job.finish()?;
    Ok(edit.files_added.into_iter().map(|(_, t)| t).collect())
}
