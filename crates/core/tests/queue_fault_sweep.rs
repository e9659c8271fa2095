//! The fault sweep for queues: pushes (some synced), takes and reserve+ack pairs across memtable
//! switches, flushes and compactions, run failing their 1st, 2nd, 3rd, ... I/O call (an I/O
//! error, or the process dying there), then reopened after a restart, a power loss and a torn
//! power loss. Checked: the database and the queue open; every push acknowledged (or, after a
//! power loss, every synced one and everything acknowledged before the last synced write) is
//! there unless its consumption was acknowledged; no consumption acknowledged before a write that
//! survived comes back; only pushed items are there; the queue's counters match its items.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod fault_driver;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use fault_driver::After;
use shaledb::queue::{PushOptions, QueueOptions, ReserveOptions};
use shaledb::storage::faulty::{Fault, FaultyStorage};
use shaledb::storage::memory::MemoryStorage;
use shaledb::Db;

use fault_driver::options;

const OPS: u32 = 400;

fn value(i: u32) -> Vec<u8> {
    let mut v = format!("item {i}:").into_bytes();
    v.resize(700, (i % 251) as u8);
    v
}

/// What the faulted run did, in order: acknowledged pushes and consumptions.
#[derive(Default)]
struct Log {
    /// Pushed id → (its operation's index, synced).
    pushed: BTreeMap<u64, (u32, bool)>,
    /// Consumed id → its operation's index.
    consumed: BTreeMap<u64, u32>,
    /// Index of the last acknowledged synced operation.
    last_synced: Option<u32>,
    /// Every value a push was attempted with (acknowledged or not).
    attempted: BTreeSet<Vec<u8>>,
}

/// Runs the operations until the first error.
fn run(db: &Db, log: &mut Log) {
    let Ok(q) = db.queue("jobs", QueueOptions::default()) else {
        return;
    };
    for i in 0..OPS {
        let ok = match i % 4 {
            0 | 1 => {
                let sync = i % 6 == 0;
                let v = value(i);
                log.attempted.insert(v.clone());
                q.push(
                    &v,
                    PushOptions {
                        sync,
                        ..PushOptions::default()
                    },
                )
                .map(|id| {
                    log.pushed.insert(id, (i, sync));
                    if sync {
                        log.last_synced = Some(i);
                    }
                })
            }
            2 => q.take(None).map(|item| {
                if let Some(item) = item {
                    log.consumed.insert(item.id, i);
                }
            }),
            _ => q
                .reserve(ReserveOptions::default())
                .and_then(|item| match item {
                    Some(item) => q.ack(item.lease()).map(|()| {
                        log.consumed.insert(item.id, i);
                    }),
                    None => Ok(()),
                }),
        };
        if ok.is_err() {
            return;
        }
    }
}

fn check(storage: &FaultyStorage, log: &Log, after: After) -> Result<(), String> {
    let db = Db::open_storage(Arc::new(storage.clone()), options())
        .map_err(|e| format!("the database does not open: {e}"))?;
    let q = db
        .queue("jobs", QueueOptions::default())
        .map_err(|e| format!("the queue does not open: {e}"))?;
    let stats = q.stats().map_err(|e| e.to_string())?;
    let mut present = BTreeMap::new();
    while let Some(item) = q.take(None).map_err(|e| e.to_string())? {
        present.insert(item.id, item.value);
    }
    if stats.items != present.len() as u64 {
        return Err(format!(
            "counters say {} items, {} are there",
            stats.items,
            present.len()
        ));
    }
    let bytes: u64 = present.values().map(|v| v.len() as u64).sum();
    if stats.bytes != bytes {
        return Err(format!(
            "counters say {} bytes, {bytes} are there",
            stats.bytes
        ));
    }
    for (id, v) in &present {
        if !log.attempted.contains(v) {
            return Err(format!("item {id} holds a value nobody pushed"));
        }
    }
    // Operations whose writes must have survived: all after a restart; after a power loss
    // those up to the last synced one (the log keeps its order).
    let durable = |index: u32| match after {
        After::Restart => true,
        _ => log.last_synced.is_some_and(|s| index <= s),
    };
    for (id, &(index, synced)) in &log.pushed {
        let consumed = log.consumed.contains_key(id);
        if (durable(index) || synced) && !consumed && !present.contains_key(id) {
            return Err(format!(
                "acknowledged push {id} (op {index}, synced {synced}) lost"
            ));
        }
    }
    for (id, &index) in &log.consumed {
        if durable(index) && present.contains_key(id) {
            return Err(format!("item {id} consumed at op {index} came back"));
        }
    }
    db.close().map_err(|e| format!("close: {e}"))?;
    Ok(())
}

fn run_one(fault: Fault, nth: u64, after: After) -> Result<bool, String> {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    db.queue("jobs", QueueOptions::default()).unwrap();
    storage.arm(nth, fault);
    let mut log = Log::default();
    run(&db, &mut log);
    drop(db);
    let fired = storage.fault_fired();
    storage.reset_faults();
    after.apply(&storage);
    check(&storage, &log, after)?;
    Ok(fired)
}

fn sweep_queue_operations(fault: Fault) {
    let faults = fault_driver::sweep(3, fault, run_one);
    eprintln!("queue fault sweep ({fault:?}): {faults} faults injected");
    assert!(faults > 5);
}

#[test]
fn every_io_error_during_queue_operations_loses_no_acknowledged_push_and_keeps_counters_true() {
    sweep_queue_operations(Fault::Error);
}

#[test]
fn every_crash_during_queue_operations_loses_no_acknowledged_push_and_keeps_counters_true() {
    sweep_queue_operations(Fault::Crash);
}
