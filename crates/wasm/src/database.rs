//! Exports of the database API: open/close, reads and writes, keyspaces, maintenance, stats.
//!
//! Every object crosses the boundary as a numeric handle ([`crate::handles`]); keyspaces are
//! numbered per database (0 = the default keyspace). Keys and values cross as byte arrays:
//! one copy into WebAssembly memory on the way in, one copy out.

use std::sync::Arc;

use shaledb::db::{Budget, Options};
#[cfg(feature = "full")]
use shaledb::queue::{Lease, PushOptions};
use shaledb::{Batch, ChangeRetention, Clock, Db, Error, WriteOptions};
use wasm_bindgen::prelude::*;

use crate::db_entry::{with_db, DbEntry, DATABASES};
use crate::errors::{invalid, js_number, js_result, JsResult};
use crate::handles::with;
use crate::js_storage::{JsStorage, StorageHost};
use crate::scratch;
use crate::snapshots::SNAPSHOTS;
#[cfg(feature = "full")]
use crate::wire::{optional_ms, LEASE_LEN, PUSH_OPTIONS_LEN};
use crate::wire::{
    Reader, OP_ACK, OP_APPEND, OP_COMMIT_OFFSET, OP_DELETE, OP_DELETE_RANGE, OP_META, OP_PUSH,
    OP_PUT,
};

fn size_option(name: &str, value: f64, min: u64, max: u64) -> JsResult<usize> {
    if !(value.fract() == 0.0 && (min as f64..=max as f64).contains(&value)) {
        return Err(invalid(format!(
            "{name} must be a whole number from {min} to {max}, got {}",
            js_number(value)
        )));
    }
    Ok(value as usize)
}

/// Opens the database stored through `host`. Sizes of 0 keep the defaults. `follower`: see
/// [`Options::follower`]; `read_only`: see [`Options::read_only`] (no lock, nothing written,
/// [`db_catch_up`] reads the writer's progress). `retain_changes`: keep changes ([`Options::change_retention`]) for
/// `retain_ms` and `retain_bytes` (below 0: no such limit).
#[wasm_bindgen(js_name = dbOpen)]
#[allow(
    clippy::too_many_arguments,
    reason = "a flat signature is cheapest to cross"
)]
pub fn db_open(
    host: StorageHost,
    create_if_missing: bool,
    error_if_exists: bool,
    memtable_size: f64,
    block_cache_size: f64,
    compression: bool,
    bloom_bits_per_key: u32,
    follower: bool,
    read_only: bool,
    retain_changes: bool,
    retain_ms: f64,
    retain_bytes: f64,
) -> JsResult<u32> {
    let mut options = Options::default();
    options.background_thread = false;
    options.create_if_missing = create_if_missing;
    options.error_if_exists = error_if_exists;
    options.memtable_size = size_option("memtableSize", memtable_size, 64 * 1024, 1_000_000_000)?;
    options.block_cache_size =
        size_option("blockCacheSize", block_cache_size, 0, 4_000_000_000)? as u64;
    options.compression = compression;
    options.bloom_bits_per_key = bloom_bits_per_key;
    options.follower = follower;
    options.read_only = read_only;
    if retain_changes {
        let mut retention = ChangeRetention::cursors_only();
        retention.age_ms = (retain_ms >= 0.0).then_some(retain_ms as u64);
        retention.bytes = (retain_bytes >= 0.0).then_some(retain_bytes as u64);
        options.change_retention = Some(retention);
    }
    // wasm32 has no clock of its own: JavaScript's, from the first step of the open on
    // (retention by age measures from it).
    options.clock = Clock::from_fn(|| js_sys::Date::now() as u64);
    let db = js_result(Db::open_storage(Arc::new(JsStorage::new(host)), options))?;
    Ok(with(&DATABASES, |t| t.insert(DbEntry::new(db))))
}

/// On a database opened read-only: reads what its writer did since the open or the last
/// catch-up ([`Db::catch_up`]). `InvalidArgument` on a database not opened read-only.
#[wasm_bindgen(js_name = dbCatchUp)]
pub fn db_catch_up(db: u32) -> JsResult<()> {
    js_result(with_db(db, |entry| entry.db.catch_up()))
}

/// The sequence number of the last committed batch's last operation (0: none yet).
#[wasm_bindgen(js_name = dbSequence)]
pub fn db_sequence(db: u32) -> JsResult<f64> {
    js_result(with_db(db, |entry| crate::wire::js_id(entry.db.sequence())))
}

/// Closes database `db` (its iterators, snapshots and transactions must be closed first).
#[wasm_bindgen(js_name = dbClose)]
pub fn db_close(db: u32) -> JsResult<()> {
    let Some(entry) = with(&DATABASES, |t| t.remove(db)) else {
        return Ok(());
    };
    #[cfg(feature = "full")]
    entry.feeds.borrow_mut().clear();
    js_result(entry.db.close())
}

/// Opens (creating it durably if missing) keyspace `name`; returns its number in `db`.
/// `reserved`: one of ShaleDB's own keyspaces (its name starts with a NUL character); an
/// application's names must not.
#[wasm_bindgen(js_name = dbKeyspace)]
pub fn db_keyspace(db: u32, name: &str, reserved: bool) -> JsResult<u32> {
    js_result(with(&DATABASES, |t| {
        let entry = t.get_mut(db)?;
        if let Some(i) = entry.keyspaces.iter().position(|k| k.name() == name) {
            return Ok(i as u32);
        }
        let keyspace = if reserved {
            entry.db.reserved_keyspace(name)?
        } else {
            entry.db.keyspace(name)?
        };
        entry.keyspaces.push(keyspace);
        Ok((entry.keyspaces.len() - 1) as u32)
    }))
}

/// The value of the key in the scratch buffer ([`crate::scratch`]) in keyspace `ks`, at
/// snapshot `snapshot` (0: the latest state): returns the address of the value (its length in
/// the scratch buffer's first 4 bytes), or 0 if the key is absent.
#[wasm_bindgen(js_name = dbGetScratch)]
pub fn db_get_scratch(db: u32, ks: u32, key_len: u32, snapshot: u32) -> JsResult<u32> {
    let value = js_result(scratch::with_input(key_len, |key| {
        with_db(db, |entry| {
            let keyspace = entry.keyspace(ks)?;
            if snapshot == 0 {
                keyspace.get(key)
            } else {
                with(&SNAPSHOTS, |t| t.get(snapshot)?.get(keyspace, key))
            }
        })
    }))?;
    js_result(scratch::output(value))
}

/// Puts the key and value that lie one after the other in the scratch buffer.
#[wasm_bindgen(js_name = dbPutScratch)]
pub fn db_put_scratch(db: u32, ks: u32, key_len: u32, value_len: u32, sync: bool) -> JsResult<()> {
    let total = key_len
        .checked_add(value_len)
        .ok_or_else(|| invalid("key and value too large".into()))?;
    js_result(scratch::with_input(total, |input| {
        let (key, value) = input.split_at(key_len as usize);
        with_db(db, |entry| {
            entry
                .keyspace(ks)?
                .put_opt(key, value, WriteOptions { sync })?;
            entry.after_write(input.len());
            Ok(())
        })
    }))
}

/// Deletes the key in the scratch buffer.
#[wasm_bindgen(js_name = dbDeleteScratch)]
pub fn db_delete_scratch(db: u32, ks: u32, key_len: u32, sync: bool) -> JsResult<()> {
    js_result(scratch::with_input(key_len, |key| {
        with_db(db, |entry| {
            entry.keyspace(ks)?.delete_opt(key, WriteOptions { sync })?;
            entry.after_write(key.len());
            Ok(())
        })
    }))
}

/// Applies a packed batch atomically (layout: [`crate::wire::OP_PUT`] and the op codes after
/// it; docs/FORMAT.md, "JavaScript ↔ WebAssembly").
#[wasm_bindgen(js_name = dbWrite)]
pub fn db_write(db: u32, ops: &[u8], sync: bool) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        let batch = decode_batch(entry, ops)?;
        entry.db.write_owned(batch, WriteOptions { sync })?;
        entry.after_write(ops.len());
        Ok(())
    }))
}

/// [`db_write`], returning the ids of the batch's queue pushes and the offsets of its topic
/// appends, in the order they were packed.
#[wasm_bindgen(js_name = dbWriteIds)]
pub fn db_write_ids(db: u32, ops: &[u8], sync: bool) -> JsResult<Vec<f64>> {
    js_result(with_db(db, |entry| {
        let batch = decode_batch(entry, ops)?;
        let ids = entry.db.write_with_ids(&batch, WriteOptions { sync })?;
        entry.after_write(ops.len());
        crate::wire::js_ids(ids)
    }))
}

#[cfg(feature = "full")]
fn decode_push_options(bytes: &[u8]) -> Result<PushOptions, Error> {
    exact_len(bytes, PUSH_OPTIONS_LEN, "push options")?;
    let mut r = Reader::new(bytes, "push options");
    Ok(PushOptions {
        sync: false,
        delay: optional_ms(r.f64()?),
        ttl: optional_ms(r.f64()?),
    })
}

#[cfg(feature = "full")]
fn decode_lease(bytes: &[u8]) -> Result<Lease, Error> {
    exact_len(bytes, LEASE_LEN, "lease")?;
    let mut r = Reader::new(bytes, "lease");
    Ok(Lease {
        id: r.u64()?,
        delivery: r.u32()?,
    })
}

/// `InvalidArgument` unless `bytes` is a field of `len` bytes.
#[cfg(feature = "full")]
fn exact_len(bytes: &[u8], len: u32, what: &str) -> Result<(), Error> {
    if bytes.len() != len as usize {
        return Err(Error::InvalidArgument(format!(
            "{what} of {} bytes, not {len}",
            bytes.len()
        )));
    }
    Ok(())
}

fn decode_batch(entry: &DbEntry, ops: &[u8]) -> Result<Batch, Error> {
    let mut reader = Reader::new(ops, "batch");
    let mut batch = Batch::new();
    while !reader.is_empty() {
        let op = reader.u8()?;
        let number = reader.u32()?;
        match op {
            #[cfg(feature = "full")]
            OP_PUSH => {
                let value = reader.field()?;
                let options = decode_push_options(reader.field()?)?;
                batch.push(entry.queue(number)?, value, options)?;
            }
            #[cfg(feature = "full")]
            OP_ACK => {
                let lease = decode_lease(reader.field()?)?;
                batch.ack(entry.queue(number)?, lease)?;
            }
            #[cfg(feature = "full")]
            OP_APPEND => {
                let record = crate::topic_records::decode_one_record(reader.field()?)?;
                batch.append(entry.topic(number)?, record)?;
            }
            OP_META => {
                batch.set_meta(reader.field()?)?;
            }
            #[cfg(feature = "full")]
            OP_COMMIT_OFFSET => {
                let group = std::str::from_utf8(reader.field()?)
                    .map_err(|_| Error::InvalidArgument("a group name must be UTF-8".into()))?;
                let offset = Reader::new(reader.field()?, "offset").u64()?;
                batch.commit_offset(entry.topic(number)?, group, offset)?;
            }
            #[cfg(not(feature = "full"))]
            OP_PUSH | OP_ACK | OP_APPEND | OP_COMMIT_OFFSET => {
                return Err(Error::InvalidArgument(
                    "queues and topics are not in the key-value module".into(),
                ));
            }
            OP_PUT => {
                let keyspace = entry.keyspace(number)?;
                batch.put(keyspace, reader.field()?, reader.field()?)?;
            }
            OP_DELETE => {
                batch.delete(entry.keyspace(number)?, reader.field()?)?;
            }
            OP_DELETE_RANGE => {
                let keyspace = entry.keyspace(number)?;
                batch.delete_range(keyspace, reader.field()?, reader.field()?)?;
            }
            other => return Err(Error::InvalidArgument(format!("unknown batch op {other}"))),
        }
    }
    Ok(batch)
}

/// Writes the memtable to a table.
#[wasm_bindgen(js_name = dbFlush)]
pub fn db_flush(db: u32) -> JsResult<()> {
    js_result(with_db(db, |entry| entry.db.flush()))
}

/// Makes the memtable of `db` immutable, for later maintenance steps to flush (before idling).
#[wasm_bindgen(js_name = dbSealMemtable)]
pub fn db_seal_memtable(db: u32) -> JsResult<()> {
    js_result(with_db(db, |entry| entry.db.seal_memtable()))
}

/// Compacts keys in `[start, end]` of keyspace `ks` (missing bound: the keyspace's end).
#[wasm_bindgen(js_name = dbCompact)]
pub fn db_compact(db: u32, ks: u32, start: Option<Vec<u8>>, end: Option<Vec<u8>>) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        entry
            .keyspace(ks)?
            .compact_range(start.as_deref(), end.as_deref())
    }))
}

/// One bounded step of flush or compaction (about `budget` bytes); whether more is pending.
#[wasm_bindgen(js_name = dbMaintain)]
pub fn db_maintain(db: u32, budget: f64) -> JsResult<bool> {
    // `as` saturates: Infinity is "no limit"; NaN and anything below 1 byte is the smallest step.
    let bytes = if budget >= 1.0 { budget as u64 } else { 1 };
    js_result(with_db(db, |entry| {
        Ok(entry.db.maintain(Budget { bytes })?.more)
    }))
}

/// Writes a consistent copy of `db` into the (empty) storage behind `host`; returns the
/// sequence number the copy is consistent at.
#[wasm_bindgen(js_name = dbCheckpoint)]
pub fn db_checkpoint(db: u32, host: StorageHost) -> JsResult<f64> {
    js_result(with_db(db, |entry| {
        let seq = entry.db.checkpoint_to(Arc::new(JsStorage::new(host)))?;
        crate::wire::js_id(seq)
    }))
}

/// Figures: `[entries, writeAmplification, userBytesWritten, memtableBytes, cacheBytes,
/// tableBytes, levels, files0, bytes0, files1, bytes1, ...]`.
#[wasm_bindgen(js_name = dbStats)]
pub fn db_stats(db: u32) -> JsResult<Vec<f64>> {
    js_result(with_db(db, |entry| {
        let s = entry.db.stats();
        let mut out = vec![
            s.entries as f64,
            s.write_amplification,
            s.user_bytes_written as f64,
            s.memtable_bytes as f64,
            s.cache_bytes as f64,
            s.table_bytes as f64,
            s.level_files.len() as f64,
        ];
        for (files, bytes) in s.level_files.iter().zip(&s.level_bytes) {
            out.push(*files as f64);
            out.push(*bytes as f64);
        }
        out.push(s.jobs_installed as f64);
        Ok(out)
    }))
}
