//! Exports of snapshots and optimistic transactions.

use std::cell::RefCell;

use shaledb::{Snapshot, Transaction, WriteOptions};
use wasm_bindgen::prelude::*;

use crate::database::with_db;
use crate::errors::{js_result, JsResult};
use crate::handles::{with, Table};

thread_local! {
    pub static SNAPSHOTS: RefCell<Table<Snapshot>> = RefCell::new(Table::new("snapshot"));
    static TRANSACTIONS: RefCell<Table<Transaction>> = RefCell::new(Table::new("transaction"));
}

/// A snapshot of database `db` now; reads given its handle see exactly this state.
#[wasm_bindgen(js_name = snapshotOpen)]
pub fn snapshot_open(db: u32) -> JsResult<u32> {
    let snapshot = js_result(with_db(db, |entry| Ok(entry.db.snapshot())))?;
    Ok(with(&SNAPSHOTS, |t| t.insert(snapshot)))
}

/// Releases a snapshot (idempotent).
#[wasm_bindgen(js_name = snapshotClose)]
pub fn snapshot_close(snapshot: u32) {
    drop(with(&SNAPSHOTS, |t| t.remove(snapshot)));
}

/// Starts a transaction on `db`.
#[wasm_bindgen(js_name = txOpen)]
pub fn tx_open(db: u32) -> JsResult<u32> {
    let tx = js_result(with_db(db, |entry| Ok(entry.db.transaction())))?;
    Ok(with(&TRANSACTIONS, |t| t.insert(tx)))
}

/// Reads `key` of keyspace `ks` in transaction `tx` (its own writes, else its snapshot).
#[wasm_bindgen(js_name = txGet)]
pub fn tx_get(tx: u32, db: u32, ks: u32, key: &[u8]) -> JsResult<Option<Vec<u8>>> {
    js_result(with_db(db, |entry| {
        let keyspace = entry.keyspace(ks)?;
        with(&TRANSACTIONS, |t| t.get_mut(tx)?.get(keyspace, key))
    }))
}

#[wasm_bindgen(js_name = txPut)]
pub fn tx_put(tx: u32, db: u32, ks: u32, key: &[u8], value: &[u8]) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        let keyspace = entry.keyspace(ks)?;
        with(&TRANSACTIONS, |t| t.get_mut(tx)?.put(keyspace, key, value))
    }))
}

#[wasm_bindgen(js_name = txDelete)]
pub fn tx_delete(tx: u32, db: u32, ks: u32, key: &[u8]) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        let keyspace = entry.keyspace(ks)?;
        with(&TRANSACTIONS, |t| t.get_mut(tx)?.delete(keyspace, key))
    }))
}

/// Commits and ends transaction `tx`; `CONFLICT` if a key it read changed meanwhile.
#[wasm_bindgen(js_name = txCommit)]
pub fn tx_commit(tx: u32, sync: bool) -> JsResult<()> {
    let tx = js_result(with(&TRANSACTIONS, |t| {
        t.remove(tx)
            .ok_or_else(|| shaledb::Error::Closed(format!("transaction {tx} has ended")))
    }))?;
    js_result(tx.commit(WriteOptions { sync }))
}

/// Ends transaction `tx` without writing (idempotent).
#[wasm_bindgen(js_name = txRollback)]
pub fn tx_rollback(tx: u32) {
    drop(with(&TRANSACTIONS, |t| t.remove(tx)));
}
