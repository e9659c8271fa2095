//! The fault sweep for the change feed: batches across keyspaces (some synced, some with meta)
//! through memtable switches, flushes and compactions, while a forwarder reads the feed and
//! acknowledges its cursor, run failing their 1st, 4th, 7th, ... I/O call (an I/O error, or the
//! process dying there), then reopened after a restart, a power loss and a torn power loss.
//! Checked: the database opens; its feed from the first batch (every log is retained) is dense,
//! ends at the database's sequence number, and applied to an empty follower gives exactly the
//! leader's contents; an acknowledged cursor survives; the cursor never passes the database.
//!
//! A second sweep holds retention by age to its word: rounds of open, writes, flush,
//! compaction and close under an hour's retention (the clock moving minutes), faulted the same
//! way; after any fault and reopen the feed from the first batch is still whole.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod fault_driver;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fault_driver::After;
use shaledb::db::Budget;
use shaledb::storage::faulty::{Fault, FaultyStorage};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Batch, ChangeRetention, Clock, Db, IterOptions, Options, WriteOptions};

/// The sweep's options, with every change kept (the check reads the feed from 1).
fn options() -> Options {
    let mut o = fault_driver::options();
    o.change_retention = Some(ChangeRetention::bytes(u64::MAX));
    o
}

const OPS: u32 = 240;
const KEYSPACES: [&str; 2] = ["users", "orders"];

fn value(i: u32) -> Vec<u8> {
    let mut v = format!("v{i}:").into_bytes();
    v.resize(600, (i % 251) as u8);
    v
}

/// What the faulted run acknowledged.
#[derive(Default)]
struct Log {
    /// The last cursor position acknowledged.
    acked: Option<u64>,
}

fn run(db: &Db, log: &mut Log) {
    let Ok(ks) = KEYSPACES
        .iter()
        .map(|n| db.keyspace(n))
        .collect::<Result<Vec<_>, _>>()
    else {
        return;
    };
    let mut forwarded = 0u64;
    for i in 0..OPS {
        let ok = match i % 5 {
            0..=2 => {
                let mut b = Batch::new();
                let k = &ks[(i % 2) as usize];
                let built = b
                    .put(k, format!("k{:03}", i % 97).as_bytes(), &value(i))
                    .and_then(|b| {
                        b.delete(
                            &ks[1 - (i % 2) as usize],
                            format!("k{:03}", i % 89).as_bytes(),
                        )
                    })
                    .and_then(|b| if i % 3 == 0 { b.set_meta(b"m") } else { Ok(b) })
                    .map(|_| ());
                built.and_then(|()| db.write(&b, WriteOptions { sync: i % 7 == 0 }))
            }
            3 => db.keyspace("users").and_then(|k| {
                k.delete_range(
                    format!("k{:03}", i % 50).as_bytes(),
                    format!("k{:03}", i % 50 + 5).as_bytes(),
                )
            }),
            _ => db.changes(forwarded + 1).and_then(|feed| {
                for c in feed {
                    forwarded = c?.last_seq();
                }
                db.ack_changes("fwd", forwarded).map(|()| {
                    log.acked = Some(forwarded);
                })
            }),
        };
        if ok.is_err() {
            return;
        }
    }
}

/// (keyspace, key, value) of every entry.
type Contents = Vec<(String, Vec<u8>, Vec<u8>)>;

fn contents(db: &Db) -> Result<Contents, String> {
    let mut out = Vec::new();
    for name in KEYSPACES {
        let ks = db.keyspace(name).map_err(|e| e.to_string())?;
        for e in ks.iter(IterOptions::default()).map_err(|e| e.to_string())? {
            let (k, v) = e.map_err(|e| e.to_string())?;
            out.push((name.to_owned(), k, v));
        }
    }
    Ok(out)
}

fn check(storage: &FaultyStorage, log: &Log, options: Options) -> Result<(), String> {
    let db = Db::open_storage(Arc::new(storage.clone()), options.clone())
        .map_err(|e| format!("the database does not open: {e}"))?;
    let cursor = db.change_cursor("fwd");
    if let Some(acked) = log.acked {
        match cursor {
            Some(c) if c >= acked => {}
            other => return Err(format!("cursor acknowledged at {acked}, found {other:?}")),
        }
    }
    if cursor.is_some_and(|c| c > db.sequence()) {
        return Err(format!(
            "cursor {cursor:?} past the database's sequence {}",
            db.sequence()
        ));
    }
    let mut follower_options = options;
    follower_options.change_retention = Some(ChangeRetention::bytes(u64::MAX));
    follower_options.follower = true;
    let follower = Db::open_storage(
        Arc::new(MemoryStorage::new()) as Arc<dyn Storage>,
        follower_options,
    )
    .map_err(|e| e.to_string())?;
    let feed = db
        .changes(1)
        .map_err(|e| format!("the feed does not open: {e}"))?;
    let mut next = 1;
    for c in feed {
        let c = c.map_err(|e| format!("the feed fails at {next}: {e}"))?;
        if c.seq() != next {
            return Err(format!("the feed jumps from {next} to {}", c.seq()));
        }
        next = c.last_seq() + 1;
        follower
            .apply_change(&c, Some(c.seq()))
            .map_err(|e| format!("apply {}: {e}", c.seq()))?;
    }
    if next != db.sequence() + 1 {
        return Err(format!(
            "the feed ends at {}, the database is at {}",
            next - 1,
            db.sequence()
        ));
    }
    if contents(&follower)? != contents(&db)? {
        return Err("the follower's contents differ from the leader's".into());
    }
    db.close().map_err(|e| format!("close: {e}"))?;
    Ok(())
}

fn run_one(fault: Fault, nth: u64, after: After) -> Result<bool, String> {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    storage.arm(nth, fault);
    let mut log = Log::default();
    run(&db, &mut log);
    drop(db);
    let fired = storage.fault_fired();
    storage.reset_faults();
    after.apply(&storage);
    check(&storage, &log, options())?;
    Ok(fired)
}

/// An hour's retention by age, on a clock the test moves.
fn keeping_an_hour(now: &Arc<AtomicU64>) -> Options {
    let mut o = fault_driver::options();
    o.change_retention = Some(ChangeRetention::age_ms(3_600_000));
    let now = now.clone();
    o.clock = Clock::from_fn(move || now.load(Ordering::SeqCst));
    o
}

/// Rounds of open, writes (some synced), flush, compaction and close, a few minutes apart;
/// stops at the first error.
fn run_reopening(storage: &FaultyStorage, now: &Arc<AtomicU64>) {
    for round in 0..5u32 {
        let Ok(db) = Db::open_storage(Arc::new(storage.clone()), keeping_an_hour(now)) else {
            return;
        };
        for i in 0..40u32 {
            let key = format!("k{:03}", (round * 40 + i) % 97);
            let sync = WriteOptions { sync: i % 13 == 0 };
            if db.put_opt(key.as_bytes(), &value(i), sync).is_err() {
                return;
            }
        }
        let maintained = db.flush().and_then(|()| {
            while db.maintain(Budget { bytes: 1 << 20 })?.more {}
            Ok(())
        });
        if maintained.is_err() || db.close().is_err() {
            return;
        }
        now.fetch_add(180_000, Ordering::SeqCst);
    }
}

fn run_one_reopening(fault: Fault, nth: u64, after: After) -> Result<bool, String> {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let now = Arc::new(AtomicU64::new(1_700_000_000_000));
    storage.arm(nth, fault);
    run_reopening(&storage, &now);
    let fired = storage.fault_fired();
    storage.reset_faults();
    after.apply(&storage);
    check(&storage, &Log::default(), keeping_an_hour(&now))?;
    Ok(fired)
}

fn sweep_feed(fault: Fault) {
    let faults = fault_driver::sweep(3, fault, run_one);
    eprintln!("change feed fault sweep ({fault:?}): {faults} faults injected");
    assert!(faults > 5);
}

fn sweep_retention_by_age(fault: Fault) {
    let faults = fault_driver::sweep(4, fault, run_one_reopening);
    eprintln!("retention by age fault sweep ({fault:?}): {faults} faults injected");
    assert!(faults > 5);
}

#[test]
fn every_io_error_leaves_a_feed_that_rebuilds_the_database_and_a_cursor_that_held() {
    sweep_feed(Fault::Error);
}

#[test]
fn every_crash_leaves_a_feed_that_rebuilds_the_database_and_a_cursor_that_held() {
    sweep_feed(Fault::Crash);
}

#[test]
fn every_io_error_leaves_what_retention_by_age_promises_readable_across_reopens() {
    sweep_retention_by_age(Fault::Error);
}

#[test]
fn every_crash_leaves_what_retention_by_age_promises_readable_across_reopens() {
    sweep_retention_by_age(Fault::Crash);
}
