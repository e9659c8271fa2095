//! Deferred WAL syncs, for a host that syncs the log off its thread (Node's Promise API with
//! the engine in the caller's thread: `fs.fdatasync` in libuv's pool). With them on, a write
//! returns once it is in the WAL and the memtable; it is visible (and durable if it asked)
//! once `dbCommitSeqs`' visible number reaches the last number assigned when it returned. The
//! host starts the sync the waiting writes need (`dbBeginWalSync`: the storage host's id of
//! the file to sync), syncs that file, and reports the outcome (`dbFinishWalSync`); nothing
//! else may run on the database in between. `shaledb::Db::begin_wal_sync` has the contract.

use wasm_bindgen::prelude::*;

use crate::db_entry::with_db;
use crate::errors::{js_result, JsResult};
use crate::js_storage::host_error;

/// Turns deferred syncs on or off (off runs a waiting sync first).
#[wasm_bindgen(js_name = dbSetDeferredSync)]
pub fn db_set_deferred_sync(db: u32, on: bool) -> JsResult<()> {
    js_result(with_db(db, |entry| entry.db.set_deferred_sync(on)))
}

/// `[visible, last assigned]` sequence numbers.
#[wasm_bindgen(js_name = dbCommitSeqs)]
pub fn db_commit_seqs(db: u32) -> JsResult<Vec<f64>> {
    js_result(with_db(db, |entry| {
        let (visible, last) = entry.db.commit_seqs();
        Ok(vec![visible as f64, last as f64])
    }))
}

/// Starts the sync that waiting writes need: the storage host's id of the file to sync, or
/// `-1` if none is needed (writes a sync covered already are visible now). The file may be an
/// older log that must be durable first: the host calls this again until `-1`. Errors: the
/// poisoning error.
#[wasm_bindgen(js_name = dbBeginWalSync)]
pub fn db_begin_wal_sync(db: u32) -> JsResult<f64> {
    js_result(with_db(db, |entry| {
        let Some(file) = entry.db.begin_wal_sync()? else {
            return Ok(-1.0);
        };
        match file.host_id() {
            Some(id) => Ok(id as f64),
            // Not a JavaScript file (cannot happen in these bindings): sync it here.
            None => {
                let result = file.sync();
                entry.db.finish_wal_sync(result).map(|()| -1.0)
            }
        }
    }))
}

/// Reports the outcome of the host's sync: `error` is `undefined` (or `null`) on success,
/// else what the storage host threw (its `code` and `message` read as for a failed `sync`).
/// A failure poisons the database and is thrown as the error every later write gets.
#[wasm_bindgen(js_name = dbFinishWalSync)]
pub fn db_finish_wal_sync(db: u32, error: JsValue) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        let result = if error.is_undefined() || error.is_null() {
            Ok(())
        } else {
            Err(host_error("sync", "the write-ahead log", &error))
        };
        entry.db.finish_wal_sync(result)
    }))
}
