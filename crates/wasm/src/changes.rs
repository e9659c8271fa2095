//! Exports of the change feed ([`shaledb::Db::changes`]), change cursors and a follower's
//! [`shaledb::Db::apply_change`].
//!
//! Sequence numbers cross as `f64` (exact up to 2^53 - 1; [`crate::wire::js_id`]). These
//! calls never wait: `changes({ follow: true })` of the Promise API waits in TypeScript
//! (`packages/js/src/server/queue-waits.ts`), woken after every commit of its server.
//!
//! Changes read back cross packed, one after another, each:
//! `seq f64 LE, lastSeq f64 LE, time f64 LE (-1: none), meta length u32 LE ([`crate::wire::NO_FIELD`]: none),
//! meta, op count u32 LE`, per op `kind u8 ([`crate::wire::CHANGE_PUT`], `CHANGE_DELETE`, `CHANGE_DELETE_RANGE`), keyspace name
//! length u32 LE, name UTF-8, key (start) length u32 LE, key`, for a put or a delete range
//! `value (end) length u32 LE, value`, and last `bytes length u32 LE, bytes`
//! ([`shaledb::Change::to_bytes`]). `packages/js/src/encoding/changes.ts` decodes them.

use shaledb::{Applied, Change, ChangeOp, Changes, Error};
use wasm_bindgen::prelude::*;

use crate::db_entry::{with_db, DbEntry};
use crate::errors::{js_result, JsResult};
use crate::wire::js_id;
use crate::wire::{
    put_field, CHANGE_DELETE, CHANGE_DELETE_RANGE, CHANGE_HEAD_LEN, CHANGE_PUT, NO_FIELD,
};

/// How many feeds a database keeps open for a next read to continue where one stopped (the
/// newest ones): a read at a feed's position goes on from its log offset instead of reading
/// the log again from its start.
const KEPT_FEEDS: usize = 4;

/// Appends `change` packed (layout: the module doc).
fn pack_change(out: &mut Vec<u8>, change: &Change) -> Result<(), Error> {
    out.reserve(CHANGE_HEAD_LEN as usize);
    out.extend_from_slice(&js_id(change.seq())?.to_le_bytes());
    out.extend_from_slice(&js_id(change.last_seq())?.to_le_bytes());
    let time = change.time().map_or(-1.0, |t| t as f64);
    out.extend_from_slice(&time.to_le_bytes());
    match change.meta() {
        Some(meta) => put_field(out, meta),
        None => out.extend_from_slice(&NO_FIELD.to_le_bytes()),
    }
    let count_at = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    let mut count: u32 = 0;
    for op in change.ops() {
        count += 1;
        match op {
            ChangeOp::Put {
                keyspace,
                key,
                value,
            } => {
                out.push(CHANGE_PUT);
                put_field(out, keyspace.as_bytes());
                put_field(out, key);
                put_field(out, value);
            }
            ChangeOp::Delete { keyspace, key } => {
                out.push(CHANGE_DELETE);
                put_field(out, keyspace.as_bytes());
                put_field(out, key);
            }
            ChangeOp::DeleteRange {
                keyspace,
                start,
                end,
            } => {
                out.push(CHANGE_DELETE_RANGE);
                put_field(out, keyspace.as_bytes());
                put_field(out, start);
                put_field(out, end);
            }
        }
    }
    if let Some(slot) = out.get_mut(count_at..count_at + 4) {
        slot.copy_from_slice(&count.to_le_bytes());
    }
    put_field(out, &change.to_bytes());
    Ok(())
}

/// A feed of `entry` at `since`: a kept one standing there, or a new one.
fn feed_at(entry: &DbEntry, since: u64) -> Result<Changes, Error> {
    let mut feeds = entry.feeds.borrow_mut();
    match feeds.iter().position(|f| f.position() == since) {
        Some(i) => Ok(feeds.remove(i)),
        None => {
            drop(feeds);
            entry.db.changes(since)
        }
    }
}

/// Keeps `feed` for a next read (dropping the oldest kept one past [`KEPT_FEEDS`]).
fn keep(entry: &DbEntry, feed: Changes) {
    let mut feeds = entry.feeds.borrow_mut();
    if feeds.len() >= KEPT_FEEDS {
        feeds.remove(0);
    }
    feeds.push(feed);
}

/// The changes of `db` committed so far from sequence number `since` on (a batch starting at
/// or after it): up to `limit` of them, stopping once about `max_bytes` are packed (at least
/// one), packed (layout: the module doc); empty when none is newer yet.
/// `CHANGES_TRUNCATED` if batches from `since` are no longer kept.
#[wasm_bindgen(js_name = dbChangesRead)]
pub fn db_changes_read(db: u32, since: f64, limit: u32, max_bytes: f64) -> JsResult<Vec<u8>> {
    js_result(with_db(db, |entry| {
        let mut feed = feed_at(entry, since as u64)?;
        let mut out = Vec::new();
        let mut count = 0;
        while count < limit && (count == 0 || (out.len() as f64) < max_bytes) {
            match feed.try_next()? {
                Some(change) => pack_change(&mut out, &change)?,
                None => break,
            }
            count += 1;
        }
        keep(entry, feed);
        Ok(out)
    }))
}

/// Moves durable change cursor `name` to `seq`.
#[wasm_bindgen(js_name = dbAckChanges)]
pub fn db_ack_changes(db: u32, name: &str, seq: f64) -> JsResult<()> {
    js_result(with_db(db, |entry| entry.db.ack_changes(name, seq as u64)))
}

/// Where change cursor `name` stands, or -1 if there is none.
#[wasm_bindgen(js_name = dbChangeCursor)]
pub fn db_change_cursor(db: u32, name: &str) -> JsResult<f64> {
    js_result(with_db(db, |entry| {
        entry.db.change_cursor(name).map_or(Ok(-1.0), js_id)
    }))
}

/// Removes change cursor `name`; false if there was none.
#[wasm_bindgen(js_name = dbRemoveChangeCursor)]
pub fn db_remove_change_cursor(db: u32, name: &str) -> JsResult<bool> {
    js_result(with_db(db, |entry| entry.db.remove_change_cursor(name)))
}

/// Applies the change encoded in `bytes` ([`Change::from_bytes`]) to follower `db`; `expected`
/// below 0: any. Returns `[applied (1) or already applied (0), lastSeq]`.
#[wasm_bindgen(js_name = dbApplyChange)]
pub fn db_apply_change(db: u32, bytes: &[u8], expected: f64) -> JsResult<Vec<f64>> {
    js_result(with_db(db, |entry| {
        let change = Change::from_bytes(bytes)?;
        let expected = (expected >= 0.0).then_some(expected as u64);
        let outcome = entry.db.apply_change(&change, expected)?;
        Ok(match outcome {
            Applied::Applied { last_seq } => {
                entry.after_write(bytes.len());
                vec![1.0, js_id(last_seq)?]
            }
            Applied::AlreadyApplied { last_seq } => vec![0.0, js_id(last_seq)?],
        })
    }))
}
