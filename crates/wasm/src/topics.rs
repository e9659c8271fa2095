//! Exports of topic logs (`shaledb::topic`).
//!
//! A topic handle is a number per database (like queues: [`crate::db_entry::DbEntry`]).
//! Offsets cross as `f64` (exact up to 2^53 - 1; [`crate::wire::js_id`]), times as `f64`
//! milliseconds since the epoch, durations as `f64` milliseconds (negative: none). These calls
//! never wait: a subscription of the Promise API waits in TypeScript
//! (`packages/js/src/server/queue-waits.ts`), woken when an append commits.
//!
//! Records cross packed ([`crate::topic_records`]).

use shaledb::topic::{AppendOptions, From, ReadLimits, TopicOptions};
use shaledb::Error;
use wasm_bindgen::prelude::*;

use crate::db_entry::{forget_handles, insert_handle, with_db, DATABASES};
use crate::errors::{js_result, JsResult};
use crate::handles::with;
use crate::topic_records::{decode_records, pack_records};
use crate::wire::{
    js_id, js_ids, optional_count, optional_ms, FROM_EARLIEST, FROM_GROUP, FROM_LATEST,
    FROM_OFFSET, FROM_TIME,
};

/// Adds `topic` to database `db`'s handles (in place of an open handle of it); returns its
/// number.
fn insert(db: u32, topic: shaledb::topic::Topic) -> JsResult<u32> {
    js_result(with(&DATABASES, |t| {
        Ok(insert_handle(&mut t.get_mut(db)?.topics, topic, |a, b| {
            a.name() == b.name()
        }))
    }))
}

/// Opens topic `name` of `db`, creating it if missing; returns its handle number. `keep`: with
/// its stored options (a new topic: the defaults); else with these, which replace the stored
/// ones. Numbers below 0 mean "none".
#[wasm_bindgen(js_name = dbTopic)]
pub fn db_topic(
    db: u32,
    name: &str,
    keep: bool,
    max_age_ms: f64,
    max_bytes: f64,
    max_records: f64,
    retention_passes_groups: bool,
) -> JsResult<u32> {
    let topic = js_result(with_db(db, |entry| {
        if keep {
            if let Some(topic) = entry.db.existing_topic(name)? {
                return Ok(topic);
            }
            return entry.db.topic(name, TopicOptions::default());
        }
        let options = TopicOptions {
            max_age: optional_ms(max_age_ms),
            max_bytes: optional_count(max_bytes),
            max_records: optional_count(max_records),
            retention_passes_groups,
        };
        entry.db.topic(name, options)
    }))?;
    insert(db, topic)
}

/// The names of `db`'s topics, sorted.
#[wasm_bindgen(js_name = dbTopics)]
pub fn db_topics(db: u32) -> JsResult<Vec<String>> {
    js_result(with_db(db, |entry| entry.db.topics()))
}

/// Deletes topic `name` with its records and groups; false if there was none. Its handles stop
/// working.
#[wasm_bindgen(js_name = dbDeleteTopic)]
pub fn db_delete_topic(db: u32, name: &str) -> JsResult<bool> {
    js_result(with(&DATABASES, |t| {
        let entry = t.get_mut(db)?;
        let deleted = entry.db.delete_topic(name)?;
        forget_handles(&mut entry.topics, |t| t.name() == name);
        Ok(deleted)
    }))
}

/// Appends the records packed in `records` in one write; returns their offsets.
#[wasm_bindgen(js_name = topicAppend)]
pub fn topic_append(db: u32, t: u32, records: &[u8], sync: bool) -> JsResult<Vec<f64>> {
    let decoded = js_result(decode_records(records))?;
    js_result(with_db(db, |entry| {
        let offsets = entry
            .topic(t)?
            .append_many(&decoded, &AppendOptions { sync })?;
        entry.after_write(records.len());
        js_ids(offsets)
    }))
}

/// Where a read starts: `kind` is one of [`FROM_OFFSET`] and the kinds after it.
fn from(kind: u8, value: f64, group: Option<String>) -> Result<From, Error> {
    Ok(match kind {
        FROM_OFFSET => From::Offset(value as u64),
        FROM_EARLIEST => From::Earliest,
        FROM_LATEST => From::Latest,
        FROM_TIME => From::Time(value as u64),
        FROM_GROUP => From::Committed(group.unwrap_or_default()),
        other => {
            return Err(Error::InvalidArgument(format!(
                "unknown read start {other}"
            )))
        }
    })
}

/// Up to `limit` records (about `max_bytes`, at least one) from the start `kind`, `value`,
/// `group` ([`from`]), packed with their offsets and times. `OFFSET_OUT_OF_RANGE` below the
/// first record held or past the next offset.
#[wasm_bindgen(js_name = topicRead)]
pub fn topic_read(
    db: u32,
    t: u32,
    kind: u8,
    value: f64,
    group: Option<String>,
    limit: u32,
    max_bytes: f64,
) -> JsResult<Vec<u8>> {
    js_result(with_db(db, |entry| {
        let limits = ReadLimits {
            limit: limit as usize,
            max_bytes: max_bytes as usize,
        };
        let records = entry.topic(t)?.read(&from(kind, value, group)?, limits)?;
        pack_records(&records)
    }))
}

/// The last `n` records, packed.
#[wasm_bindgen(js_name = topicLatest)]
pub fn topic_latest(db: u32, t: u32, n: u32) -> JsResult<Vec<u8>> {
    js_result(with_db(db, |entry| {
        pack_records(&entry.topic(t)?.latest(n as usize)?)
    }))
}

/// The offset the start `kind`, `value`, `group` names now ([`from`]).
#[wasm_bindgen(js_name = topicResolve)]
pub fn topic_resolve(
    db: u32,
    t: u32,
    kind: u8,
    value: f64,
    group: Option<String>,
) -> JsResult<f64> {
    js_result(with_db(db, |entry| {
        js_id(entry.topic(t)?.resolve(&from(kind, value, group)?)?)
    }))
}

/// The next offset the topic will give (what a subscription that caught up waits for).
#[wasm_bindgen(js_name = topicNext)]
pub fn topic_next(db: u32, t: u32) -> JsResult<f64> {
    js_result(with_db(db, |entry| js_id(entry.topic(t)?.stats()?.next)))
}

/// Stores `offset` as group `group`'s committed offset (created if missing).
#[wasm_bindgen(js_name = topicCommit)]
pub fn topic_commit(db: u32, t: u32, group: &str, offset: f64) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        entry.topic(t)?.commit(group, offset as u64)?;
        entry.after_write(group.len() + 8);
        Ok(())
    }))
}

/// Group `group`'s committed offset, or -1 if it has none.
#[wasm_bindgen(js_name = topicCommitted)]
pub fn topic_committed(db: u32, t: u32, group: &str) -> JsResult<f64> {
    js_result(with_db(db, |entry| {
        entry.topic(t)?.committed(group)?.map_or(Ok(-1.0), js_id)
    }))
}

/// Removes group `group`; false if there was none.
#[wasm_bindgen(js_name = topicRemoveGroup)]
pub fn topic_remove_group(db: u32, t: u32, group: &str) -> JsResult<bool> {
    js_result(with_db(db, |entry| entry.topic(t)?.remove_group(group)))
}

/// Applies the topic's retention now (appends apply it too).
#[wasm_bindgen(js_name = topicApplyRetention)]
pub fn topic_apply_retention(db: u32, t: u32) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        entry.topic(t)?.apply_retention()?;
        entry.after_write(64);
        Ok(())
    }))
}

/// The topic's figures: `[first, next, bytes, [[group, committed, lag], ...]]`.
#[wasm_bindgen(js_name = topicStats)]
pub fn topic_stats(db: u32, t: u32) -> JsResult<js_sys::Array> {
    js_result(with_db(db, |entry| {
        let s = entry.topic(t)?.stats()?;
        let out = js_sys::Array::new();
        out.push(&JsValue::from_f64(js_id(s.first)?));
        out.push(&JsValue::from_f64(js_id(s.next)?));
        out.push(&JsValue::from_f64(s.bytes as f64));
        let groups = js_sys::Array::new();
        for (name, committed, lag) in &s.groups {
            let row = js_sys::Array::new();
            row.push(&JsValue::from_str(name));
            row.push(&JsValue::from_f64(js_id(*committed)?));
            row.push(&JsValue::from_f64(*lag as f64));
            groups.push(&row);
        }
        out.push(&groups);
        Ok(out)
    }))
}

/// The topic's options: `[maxAgeMs, maxBytes, maxRecords, retentionPassesGroups (0/1)]`
/// (-1: none).
#[wasm_bindgen(js_name = topicOptions)]
pub fn topic_options(db: u32, t: u32) -> JsResult<Vec<f64>> {
    js_result(with_db(db, |entry| {
        let o = entry.topic(t)?.options();
        let none = |v: Option<u64>| v.map_or(-1.0, |v| v as f64);
        Ok(vec![
            none(o.max_age.map(|d| d.as_millis() as u64)),
            none(o.max_bytes),
            none(o.max_records),
            f64::from(u8::from(o.retention_passes_groups)),
        ])
    }))
}
