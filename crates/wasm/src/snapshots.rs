//! Exports of snapshots and optimistic transactions.

use std::cell::RefCell;

#[cfg(feature = "full")]
use shaledb::queue::{Lease, PushOptions};
use shaledb::{Snapshot, Transaction, WriteOptions};
use wasm_bindgen::prelude::*;

use crate::db_entry::with_db;
use crate::errors::{js_result, JsResult};
use crate::handles::{with, Table};
#[cfg(feature = "full")]
use crate::wire::optional_ms;

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

/// Adds a push of `value` to queue handle `q` of `db` to transaction `tx` (delay and ttl in
/// ms, negative for none); its id comes with the commit.
#[cfg(feature = "full")]
#[wasm_bindgen(js_name = txPush)]
pub fn tx_push(tx: u32, db: u32, q: u32, value: &[u8], delay_ms: f64, ttl_ms: f64) -> JsResult<()> {
    let options = PushOptions {
        sync: false,
        delay: optional_ms(delay_ms),
        ttl: optional_ms(ttl_ms),
    };
    js_result(with_db(db, |entry| {
        let queue = entry.queue(q)?;
        with(&TRANSACTIONS, |t| {
            t.get_mut(tx)?.push(queue, value, options)
        })
    }))
}

/// Adds an ack of the lease `id`, `delivery` of queue handle `q` of `db` to transaction `tx`.
#[cfg(feature = "full")]
#[wasm_bindgen(js_name = txAck)]
pub fn tx_ack(tx: u32, db: u32, q: u32, id: f64, delivery: u32) -> JsResult<()> {
    let lease = Lease {
        id: id as u64,
        delivery,
    };
    js_result(with_db(db, |entry| {
        let queue = entry.queue(q)?;
        with(&TRANSACTIONS, |t| t.get_mut(tx)?.ack(queue, lease))
    }))
}

/// Adds an append of the record packed in `record` (`crate::topics`) to topic handle `t` of
/// `db` to transaction `tx`; its offset comes with the commit.
#[cfg(feature = "full")]
#[wasm_bindgen(js_name = txAppend)]
pub fn tx_append(tx: u32, db: u32, t: u32, record: &[u8]) -> JsResult<()> {
    let record = js_result(crate::topic_records::decode_one_record(record))?;
    js_result(with_db(db, |entry| {
        let topic = entry.topic(t)?;
        with(&TRANSACTIONS, |x| x.get_mut(tx)?.append(topic, record))
    }))
}

/// Adds the commit of `offset` for group `group` of topic handle `t` to transaction `tx`.
#[cfg(feature = "full")]
#[wasm_bindgen(js_name = txCommitOffset)]
pub fn tx_commit_offset(tx: u32, db: u32, t: u32, group: &str, offset: f64) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        let topic = entry.topic(t)?;
        with(&TRANSACTIONS, |x| {
            x.get_mut(tx)?.commit_offset(topic, group, offset as u64)
        })
    }))
}

/// Commits and ends transaction `tx`; `CONFLICT` if a key it read changed meanwhile. Returns
/// the ids of its queue pushes and the offsets of its topic appends, in order.
#[wasm_bindgen(js_name = txCommit)]
pub fn tx_commit(tx: u32, sync: bool) -> JsResult<Vec<f64>> {
    let tx = js_result(with(&TRANSACTIONS, |t| {
        t.remove(tx)
            .ok_or_else(|| shaledb::Error::Closed(format!("transaction {tx} has ended")))
    }))?;
    js_result(
        tx.commit_with_ids(WriteOptions { sync })
            .and_then(crate::wire::js_ids),
    )
}

/// Ends transaction `tx` without writing (idempotent).
#[wasm_bindgen(js_name = txRollback)]
pub fn tx_rollback(tx: u32) {
    drop(with(&TRANSACTIONS, |t| t.remove(tx)));
}
