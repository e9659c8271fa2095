//! Exports of durable queues (`shaledb::queue`).
//!
//! A queue handle is a number per database (like keyspaces: [`crate::db_entry::DbEntry`]),
//! bound to one consumer group. Ids cross as `f64` (exact up to 2^53: a queue would need a
//! million pushes a second for 285 years to pass it). Durations cross as `f64` milliseconds,
//! negative meaning "none". These calls never wait: on wasm32 the core makes one attempt, and
//! the TypeScript layer waits (`packages/js/src/server/queue-waits.ts`).

use shaledb::queue::{
    GroupStart, Lease, PushOptions, QueueItem, QueueOptions, ReserveOptions, WhenFull,
};
use shaledb::Error;
use wasm_bindgen::prelude::*;

use crate::db_entry::{forget_handles, insert_handle, with_db, DATABASES};
use crate::errors::{invalid, js_result, JsResult};
use crate::handles::with;
use crate::wire::{
    js_id, js_ids, optional_count, optional_ms, ITEM_HEADER_LEN, READ_PEEK, READ_RESERVE, READ_TAKE,
};

/// Adds `queue` to database `db`'s handles (in place of an open handle of the same queue and
/// group); returns its number.
fn insert(db: u32, queue: shaledb::queue::Queue) -> JsResult<u32> {
    js_result(with(&DATABASES, |t| {
        Ok(insert_handle(&mut t.get_mut(db)?.queues, queue, |a, b| {
            a.name() == b.name() && a.group_name() == b.group_name()
        }))
    }))
}

/// Opens queue `name` of `db` (its default group), creating it if missing; returns its handle
/// number. `keep`: with its stored options (the others are ignored); else with these, which
/// replace the stored ones. Counts and durations below 0 mean "none"; `lease_ms` 0: the default.
#[wasm_bindgen(js_name = dbQueue)]
#[allow(
    clippy::too_many_arguments,
    reason = "a flat signature is cheapest to cross"
)]
pub fn db_queue(
    db: u32,
    name: &str,
    keep: bool,
    max_items: f64,
    max_bytes: f64,
    discard_oldest: bool,
    max_deliveries: f64,
    dead_letter: Option<String>,
    lease_ms: f64,
    ttl_ms: f64,
) -> JsResult<u32> {
    let queue = js_result(with_db(db, |entry| {
        if keep {
            return entry.db.open_queue(name);
        }
        let defaults = QueueOptions::default();
        let options = QueueOptions {
            max_items: optional_count(max_items),
            max_bytes: optional_count(max_bytes),
            when_full: if discard_oldest {
                WhenFull::DiscardOldest
            } else {
                WhenFull::Reject
            },
            max_deliveries: optional_count(max_deliveries)
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            dead_letter,
            default_lease: optional_ms(lease_ms)
                .filter(|d| !d.is_zero())
                .unwrap_or(defaults.default_lease),
            default_ttl: optional_ms(ttl_ms),
        };
        entry.db.queue(name, options)
    }))?;
    insert(db, queue)
}

/// A handle of consumer group `group` of queue handle `q` (created if missing, starting at the
/// head or the tail).
#[wasm_bindgen(js_name = queueGroup)]
pub fn queue_group(db: u32, q: u32, group: &str, head: bool) -> JsResult<u32> {
    let start = if head {
        GroupStart::Head
    } else {
        GroupStart::Tail
    };
    let queue = js_result(with_db(db, |entry| entry.queue(q)?.group(group, start)))?;
    insert(db, queue)
}

/// The names of `db`'s queues, sorted.
#[wasm_bindgen(js_name = dbQueues)]
pub fn db_queues(db: u32) -> JsResult<Vec<String>> {
    js_result(with_db(db, |entry| entry.db.queues()))
}

/// Deletes queue `name` with its items; false if there was none. Its handles stop working.
#[wasm_bindgen(js_name = dbDeleteQueue)]
pub fn db_delete_queue(db: u32, name: &str) -> JsResult<bool> {
    js_result(with(&DATABASES, |t| {
        let entry = t.get_mut(db)?;
        let deleted = entry.db.delete_queue(name)?;
        forget_handles(&mut entry.queues, |q| q.name() == name);
        Ok(deleted)
    }))
}

/// Pushes the values packed in `values` (each: length u32 LE, bytes); returns their ids.
#[wasm_bindgen(js_name = queuePush)]
pub fn queue_push(
    db: u32,
    q: u32,
    values: &[u8],
    sync: bool,
    delay_ms: f64,
    ttl_ms: f64,
) -> JsResult<Vec<f64>> {
    let mut slices = Vec::new();
    let mut rest = values;
    while !rest.is_empty() {
        let (len, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| invalid("truncated values".into()))?;
        let len = u32::from_le_bytes(*len) as usize;
        if tail.len() < len {
            return Err(invalid("truncated values".into()));
        }
        let (value, tail) = tail.split_at(len);
        slices.push(value);
        rest = tail;
    }
    let options = PushOptions {
        sync,
        delay: optional_ms(delay_ms),
        ttl: optional_ms(ttl_ms),
    };
    js_result(with_db(db, |entry| {
        let ids = entry.queue(q)?.push_many(&slices, options)?;
        entry.after_write(values.len());
        js_ids(ids)
    }))
}

/// Reads up to `max` items: `mode` [`READ_TAKE`] takes them, [`READ_RESERVE`] reserves them
/// (lease `lease_ms`, below 1: the queue's default), [`READ_PEEK`] looks at them, leaving them.
/// Returns them packed, each [`ITEM_HEADER_LEN`] bytes of header, then the value.
#[wasm_bindgen(js_name = queueRead)]
pub fn queue_read(db: u32, q: u32, mode: u8, max: u32, lease_ms: f64) -> JsResult<Vec<u8>> {
    js_result(with_db(db, |entry| {
        let queue = entry.queue(q)?;
        let items = match mode {
            READ_TAKE => queue.take_many(max as usize, None)?,
            READ_RESERVE => queue.reserve_many(
                max as usize,
                ReserveOptions {
                    lease: optional_ms(lease_ms).filter(|d| !d.is_zero()),
                    wait: None,
                },
            )?,
            READ_PEEK => queue.peek_many(max as usize)?,
            other => return Err(Error::InvalidArgument(format!("unknown read mode {other}"))),
        };
        if mode != READ_PEEK {
            entry.after_write(items.len() * ITEM_HEADER_LEN as usize);
        }
        pack_items(&items)
    }))
}

fn pack_items(items: &[QueueItem]) -> Result<Vec<u8>, Error> {
    let total = items
        .iter()
        .map(|i| ITEM_HEADER_LEN as usize + i.value.len())
        .sum();
    let mut out = Vec::with_capacity(total);
    for item in items {
        out.extend_from_slice(&js_id(item.id)?.to_le_bytes());
        out.extend_from_slice(&(item.pushed_at_ms as f64).to_le_bytes());
        let until = item.lease_until_ms.map_or(-1.0, |t| t as f64);
        out.extend_from_slice(&until.to_le_bytes());
        out.extend_from_slice(&item.deliveries.to_le_bytes());
        let len = u32::try_from(item.value.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&item.value);
    }
    Ok(out)
}

fn lease(id: f64, delivery: u32) -> Lease {
    Lease {
        id: id as u64,
        delivery,
    }
}

/// Acks the leases in `leases` (pairs: id, delivery) in one write.
#[wasm_bindgen(js_name = queueAck)]
pub fn queue_ack(db: u32, q: u32, leases: &[f64]) -> JsResult<()> {
    let leases: Vec<Lease> = leases
        .chunks_exact(2)
        .map(|pair| match pair {
            [id, delivery] => lease(*id, *delivery as u32),
            _ => lease(0.0, 0),
        })
        .collect();
    js_result(with_db(db, |entry| {
        entry.queue(q)?.ack_many(&leases)?;
        entry.after_write(leases.len() * 16);
        Ok(())
    }))
}

/// Releases a reservation: the item goes back to the head, after `delay_ms` (below 0: none).
#[wasm_bindgen(js_name = queueRelease)]
pub fn queue_release(db: u32, q: u32, id: f64, delivery: u32, delay_ms: f64) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        entry
            .queue(q)?
            .release(lease(id, delivery), optional_ms(delay_ms))?;
        entry.after_write(16);
        Ok(())
    }))
}

/// Renews a lease for `lease_ms` from now; returns its new end (ms since the epoch).
#[wasm_bindgen(js_name = queueExtend)]
pub fn queue_extend(db: u32, q: u32, id: f64, delivery: u32, lease_ms: f64) -> JsResult<f64> {
    let lease_for = std::time::Duration::from_millis(lease_ms.max(1.0) as u64);
    js_result(with_db(db, |entry| {
        let until = entry.queue(q)?.extend(lease(id, delivery), lease_for)?;
        entry.after_write(16);
        Ok(until as f64)
    }))
}

/// When this handle's group next has an item come back by itself (ms since the epoch), or -1.
#[wasm_bindgen(js_name = queueNextWake)]
pub fn queue_next_wake(db: u32, q: u32) -> JsResult<f64> {
    js_result(with_db(db, |entry| {
        Ok(entry.queue(q)?.next_wake_ms().map_or(-1.0, |t| t as f64))
    }))
}

/// The queue's consumer groups (`""` is the default one), sorted.
#[wasm_bindgen(js_name = queueGroups)]
pub fn queue_groups(db: u32, q: u32) -> JsResult<Vec<String>> {
    js_result(with_db(db, |entry| entry.queue(q)?.groups()))
}

/// Removes consumer group `group`; false if there was none.
#[wasm_bindgen(js_name = queueRemoveGroup)]
pub fn queue_remove_group(db: u32, q: u32, group: &str) -> JsResult<bool> {
    js_result(with_db(db, |entry| entry.queue(q)?.remove_group(group)))
}

/// Drops every item of the queue.
#[wasm_bindgen(js_name = queueClear)]
pub fn queue_clear(db: u32, q: u32) -> JsResult<()> {
    js_result(with_db(db, |entry| entry.queue(q)?.clear()))
}

/// The queue's figures: `[items, bytes, oldestAgeMs (-1: none), reserved, deadLettered,
/// [[group, lag, reserved], ...]]`.
#[wasm_bindgen(js_name = queueStats)]
pub fn queue_stats(db: u32, q: u32) -> JsResult<js_sys::Array> {
    js_result(with_db(db, |entry| {
        let s = entry.queue(q)?.stats()?;
        let out = js_sys::Array::new();
        out.push(&JsValue::from_f64(s.items as f64));
        out.push(&JsValue::from_f64(s.bytes as f64));
        out.push(&JsValue::from_f64(
            s.oldest_age_ms.map_or(-1.0, |a| a as f64),
        ));
        out.push(&JsValue::from_f64(s.reserved as f64));
        out.push(&JsValue::from_f64(s.dead_lettered as f64));
        let groups = js_sys::Array::new();
        for g in &s.groups {
            let row = js_sys::Array::new();
            row.push(&JsValue::from_str(&g.name));
            row.push(&JsValue::from_f64(g.lag as f64));
            row.push(&JsValue::from_f64(g.reserved as f64));
            groups.push(&row);
        }
        out.push(&groups);
        Ok(out)
    }))
}

/// Turns on or off the log of woken queues and topics of `db` (`Db::record_wakes`): on while
/// the TypeScript side has waiting reads.
#[wasm_bindgen(js_name = dbRecordWakes)]
pub fn db_record_wakes(db: u32, on: bool) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        entry.db.record_wakes(on);
        Ok(())
    }))
}

/// The queues and topics woken since the last call (`Db::take_wakes`), flat: kind (`"queue"`
/// or `"topic"`), name, kind, name, ...
#[wasm_bindgen(js_name = dbTakeWakes)]
pub fn db_take_wakes(db: u32) -> JsResult<Vec<String>> {
    js_result(with_db(db, |entry| {
        Ok(entry
            .db
            .take_wakes()
            .into_iter()
            .flat_map(|(kind, name)| [kind.to_owned(), name])
            .collect())
    }))
}
