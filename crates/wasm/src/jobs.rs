//! Exports of maintenance as jobs (`shaledb::jobs`): the database hands out jobs as bytes and
//! installs their outputs; `runJob` runs one over a storage of the same directory in another
//! instance (a worker's), with no database open there.

use std::sync::Arc;

use shaledb::jobs::{run_job, JobOutput, MaintenanceJob};
use wasm_bindgen::prelude::*;

use crate::db_entry::with_db;
use crate::errors::{js_result, JsResult};
use crate::js_storage::{JsStorage, StorageHost};

/// Leaves maintenance of `db` to jobs (`true`): its writes do no inline step any more.
#[wasm_bindgen(js_name = dbUseJobs)]
pub fn db_use_jobs(db: u32, on: bool) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        entry.jobs.set(on);
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

/// Runs an encoded job over the directory behind `host`; returns its encoded output.
#[wasm_bindgen(js_name = runJob)]
pub fn run_job_export(host: StorageHost, job: &[u8]) -> JsResult<Vec<u8>> {
    js_result((|| {
        let job = MaintenanceJob::decode(job)?;
        Ok(run_job(Arc::new(JsStorage::new(host)), &job)?.encode())
    })())
}
