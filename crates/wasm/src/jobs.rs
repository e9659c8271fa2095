//! Exports of maintenance as jobs (`shaledb::jobs`): the database hands out jobs as bytes and
//! installs their outputs; `runJob` runs one over a storage of the same directory in another
//! instance (a worker's), with no database open there.

use std::sync::Arc;

use shaledb::jobs::{run_job, JobOutput, MaintenanceJob};
use wasm_bindgen::prelude::*;

use crate::db_entry::with_db;
use crate::errors::{js_result, JsResult};
use crate::js_storage::{JsStorage, StorageHost};

/// Leaves maintenance of `db` to jobs (`true`): its writes do no inline step any more, and
/// obsolete files are removed by deletion jobs.
#[wasm_bindgen(js_name = dbUseJobs)]
pub fn db_use_jobs(db: u32, on: bool) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        entry.jobs.set(on);
        entry.db.hand_out_deletions(on);
        Ok(())
    }))
}

/// The next job due on `db`, encoded; `undefined` if none ([`shaledb::Db::next_job`]).
#[wasm_bindgen(js_name = dbNextJob)]
pub fn db_next_job(db: u32) -> JsResult<Option<Vec<u8>>> {
    js_result(with_db(db, |entry| {
        Ok(entry.db.next_job()?.map(|job| job.encode()))
    }))
}

/// A job that makes the next write-ahead log durable, encoded; `undefined` if none is due
/// ([`shaledb::Db::next_log_job`]: the log is created now, the job syncs it elsewhere).
#[wasm_bindgen(js_name = dbNextLogJob)]
pub fn db_next_log_job(db: u32) -> JsResult<Option<Vec<u8>>> {
    js_result(with_db(db, |entry| {
        Ok(entry.db.next_log_job()?.map(|job| job.encode()))
    }))
}

/// Whether the next write to `db` would flush a memtable itself
/// ([`shaledb::Db::write_would_flush`]).
#[wasm_bindgen(js_name = dbWriteWouldFlush)]
pub fn db_write_would_flush(db: u32) -> JsResult<bool> {
    js_result(with_db(db, |entry| Ok(entry.db.write_would_flush())))
}

/// Asks for keyspace `ks`'s keys in `[start, end]` to be compacted by jobs; returns the
/// request's ticket ([`shaledb::Db::request_compaction`]).
#[wasm_bindgen(js_name = dbRequestCompaction)]
pub fn db_request_compaction(
    db: u32,
    ks: u32,
    start: Option<Vec<u8>>,
    end: Option<Vec<u8>>,
) -> JsResult<f64> {
    js_result(with_db(db, |entry| {
        let ticket = entry
            .keyspace(ks)?
            .request_compaction(start.as_deref(), end.as_deref())?;
        // A count of requests: far below 2^53.
        Ok(ticket as f64)
    }))
}

/// The last compaction request of `db` done ([`shaledb::Db::compactions_done`]).
#[wasm_bindgen(js_name = dbCompactionsDone)]
pub fn db_compactions_done(db: u32) -> JsResult<f64> {
    js_result(with_db(db, |entry| Ok(entry.db.compactions_done() as f64)))
}

/// Installs an encoded job output; whether it was installed (`false`: refused, its inputs
/// changed) ([`shaledb::Db::install_job`]).
#[wasm_bindgen(js_name = dbInstallJob)]
pub fn db_install_job(db: u32, output: &[u8]) -> JsResult<bool> {
    js_result(with_db(db, |entry| {
        entry.db.install_job(&JobOutput::decode(output)?)
    }))
}

/// Takes back encoded job `job` (its runner failed); whether it was out
/// ([`shaledb::Db::abandon_job`]).
#[wasm_bindgen(js_name = dbAbandonJob)]
pub fn db_abandon_job(db: u32, job: &[u8]) -> JsResult<bool> {
    js_result(with_db(db, |entry| {
        entry.db.abandon_job(MaintenanceJob::decode(job)?.id)
    }))
}

/// Whether encoded job `job` may run long (a compaction, or a deletion of big files): a
/// runner's lane, as flushes and log syncs must not wait behind such jobs.
#[wasm_bindgen(js_name = jobRunsLong)]
pub fn job_runs_long(job: &[u8]) -> JsResult<bool> {
    js_result(MaintenanceJob::decode(job).map(|job| {
        matches!(
            job.work,
            shaledb::jobs::JobWork::Compaction(_) | shaledb::jobs::JobWork::Delete(_)
        )
    }))
}

/// Runs an encoded job over the directory behind `host`; returns its encoded output.
#[wasm_bindgen(js_name = runJob)]
pub fn run_job_export(host: StorageHost, job: &[u8]) -> JsResult<Vec<u8>> {
    js_result((|| {
        let job = MaintenanceJob::decode(job)?;
        Ok(run_job(Arc::new(JsStorage::new(host)), &job)?.encode())
    })())
}
