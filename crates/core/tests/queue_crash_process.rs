//! Real-process crash test of queues: this test binary re-executes itself as a child (the
//! `queue_crash_child_entry` test, which does nothing unless `SHALEDB_QUEUE_CHILD_DIR` is set).
//! In the child, producer threads push and consumer threads reserve items, ack some and keep
//! others open, printing every acknowledged step; the parent kills the child with SIGKILL at a
//! seeded random moment, reopens the database and drains the queue. Then: nothing acknowledged
//! is lost (every pushed item was acked or is delivered by the drain), nothing acked is
//! delivered again, every reservation left open is delivered again with a higher delivery
//! count, and nothing is delivered twice. Rounds reuse the directory (recovery of a recovered
//! database).
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly on unexpected errors"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

mod crash_child;

use crash_child::{run_and_kill, say};
use shaledb::queue::{PushOptions, QueueOptions, ReserveOptions};
use shaledb::{Db, Options};

const CHILD_DIR: &str = "SHALEDB_QUEUE_CHILD_DIR";
const CHILD_ROUND: &str = "SHALEDB_QUEUE_CHILD_ROUND";
const PRODUCERS: u64 = 2;
const CONSUMERS: u64 = 2;
const CHILD_DEADLINE: Duration = Duration::from_secs(30);

fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024; // flushes and compactions on the background thread
    o
}

fn run_child(dir: &Path, round: u64) {
    let db = Db::open(dir, options()).unwrap();
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let started = Instant::now();
    let mut threads = Vec::new();
    for p in 0..PRODUCERS {
        let q = q.clone();
        threads.push(std::thread::spawn(move || {
            for i in 0.. {
                let value = format!("r{round}/p{p}/{i}/").repeat(1 + (i as usize % 40));
                let id = q.push(value.as_bytes(), PushOptions::default()).unwrap();
                say(&format!("pushed {id}"));
                if started.elapsed() > CHILD_DEADLINE {
                    return;
                }
            }
        }));
    }
    for c in 0..CONSUMERS {
        let q = q.clone();
        threads.push(std::thread::spawn(move || {
            let lease = Some(Duration::from_secs(3600));
            for n in 0u64.. {
                let wait = Some(Duration::from_millis(50));
                let Some(item) = q.reserve(ReserveOptions { lease, wait }).unwrap() else {
                    continue;
                };
                say(&format!("reserved {} {}", item.id, item.deliveries));
                if (n + c) % 3 != 0 {
                    say(&format!("acking {}", item.id));
                    q.ack(item.lease()).unwrap();
                    say(&format!("acked {}", item.id));
                }
                if started.elapsed() > CHILD_DEADLINE {
                    return;
                }
            }
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn queue_crash_child_entry() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let round = std::env::var(CHILD_ROUND)
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    run_child(Path::new(&dir), round);
    std::process::exit(0);
}

#[test]
fn a_killed_process_loses_no_pushed_item_redelivers_open_reservations_and_never_acked_ones() {
    let dir = tempfile::tempdir().unwrap();
    let seed: u64 = std::env::var("SHALEDB_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    for round in 0..4u64 {
        let ms = 150 + (seed.wrapping_mul(round + 1).wrapping_mul(2_654_435_761) % 400);
        let env = [
            (CHILD_DIR, dir.path().display().to_string()),
            (CHILD_ROUND, round.to_string()),
        ];
        let lines = run_and_kill("queue_crash_child_entry", &env, ms);
        let mut pushed = BTreeSet::new();
        let mut open: BTreeMap<u64, u32> = BTreeMap::new();
        let mut acking = BTreeSet::new();
        let mut acked = BTreeSet::new();
        for l in &lines {
            let parts: Vec<&str> = l.split(' ').collect();
            let id: u64 = parts[1].parse().unwrap();
            match parts[0] {
                "pushed" => {
                    pushed.insert(id);
                }
                "reserved" => {
                    open.insert(id, parts[2].parse().unwrap());
                }
                "acking" => {
                    acking.insert(id);
                }
                "acked" => {
                    acked.insert(id);
                    open.remove(&id);
                }
                other => panic!("unknown line {other}"),
            }
        }
        assert!(
            !pushed.is_empty(),
            "round {round}: the child pushed nothing in {ms} ms"
        );
        let db = Db::open(dir.path(), options()).unwrap();
        let q = db.queue("jobs", QueueOptions::default()).unwrap();
        let mut drained: BTreeMap<u64, u32> = BTreeMap::new();
        while let Some(item) = q.reserve(ReserveOptions::default()).unwrap() {
            assert!(
                drained.insert(item.id, item.deliveries).is_none(),
                "round {round}: item {} delivered twice",
                item.id
            );
            q.ack(item.lease()).unwrap();
        }
        for id in &acked {
            assert!(
                !drained.contains_key(id),
                "round {round}: acked item {id} came back"
            );
        }
        for (id, deliveries) in &open {
            // An ack in flight at the kill may or may not have landed.
            if acking.contains(id) {
                continue;
            }
            let again = drained.get(id).copied();
            assert!(
                again.is_some_and(|d| d > *deliveries),
                "round {round}: open reservation {id} (delivery {deliveries}) came back as {again:?}"
            );
        }
        for id in &pushed {
            assert!(
                acked.contains(id) || acking.contains(id) || drained.contains_key(id),
                "round {round}: pushed item {id} lost"
            );
        }
        let unknown = drained.keys().filter(|id| !pushed.contains(id)).count() as u64;
        assert!(
            unknown <= PRODUCERS,
            "round {round}: {unknown} items nobody pushed (at most one push in flight per producer)"
        );
        assert_eq!(q.stats().unwrap().items, 0);
        db.close().unwrap();
    }
}
