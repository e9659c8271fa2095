//! Real-process crash test of topics: this test binary re-executes itself as a child (the
//! `topic_crash_child_entry` test, which does nothing unless `SHALEDB_TOPIC_CHILD_DIR` is set).
//! In the child a producer appends records (printing each acknowledged offset) and a consumer
//! subscribed from its group's committed offset processes each record into an output keyspace,
//! committing its offset in the same batch as its output. The parent kills the child with
//! SIGKILL at seeded random moments, several rounds on one directory, and checks: every
//! acknowledged append is there; every record below the committed offset was processed exactly
//! once (its output counter is 1), none above it was; none was skipped.
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly on unexpected errors"
)]

use std::path::Path;
use std::time::{Duration, Instant};

mod crash_child;

use crash_child::{run_and_kill, say};
use shaledb::topic::{AppendOptions, From, NewRecord, ReadLimits, TopicOptions};
use shaledb::{Batch, Db, IterOptions, Options, WriteOptions};

const CHILD_DIR: &str = "SHALEDB_TOPIC_CHILD_DIR";
const GROUP: &str = "processor";

fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o
}

fn run_child(dir: &Path) {
    let db = Db::open(dir, options()).unwrap();
    let topic = db.topic("events", TopicOptions::default()).unwrap();
    let out = db.keyspace("output").unwrap();
    let started = Instant::now();
    let producer = {
        let topic = topic.clone();
        std::thread::spawn(move || {
            for i in 0u64.. {
                let value = format!("event {i} ").repeat(1 + (i % 30) as usize);
                let offset = topic
                    .append(NewRecord::value(value), &AppendOptions::default())
                    .unwrap();
                say(&format!("appended {offset}"));
                if started.elapsed() > Duration::from_secs(30) {
                    return;
                }
            }
        })
    };
    let mut sub = topic.subscribe(&From::Committed(GROUP.into())).unwrap();
    while started.elapsed() < Duration::from_secs(30) {
        let Some(record) = sub.next_timeout(Duration::from_millis(100)).unwrap() else {
            continue;
        };
        let key = record.offset.to_be_bytes();
        let seen = out.get(&key).unwrap().map_or(0, |v| v[0]);
        let mut batch = Batch::new();
        batch.put(&out, &key, &[seen + 1]).unwrap();
        batch
            .commit_offset(&topic, GROUP, record.offset + 1)
            .unwrap();
        db.write(&batch, WriteOptions::default()).unwrap();
    }
    producer.join().unwrap();
}

#[test]
fn topic_crash_child_entry() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    run_child(Path::new(&dir));
    std::process::exit(0);
}

#[test]
fn a_killed_consumer_committing_with_its_output_processes_every_record_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let seed: u64 = std::env::var("SHALEDB_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(11);
    let mut acked_max = None;
    for round in 0..4u64 {
        let ms = 150 + (seed.wrapping_mul(round + 3).wrapping_mul(2_654_435_761) % 400);
        let env = [(CHILD_DIR, dir.path().display().to_string())];
        let appended: Vec<u64> = run_and_kill("topic_crash_child_entry", &env, ms)
            .iter()
            .filter_map(|l| l.strip_prefix("appended ")?.parse().ok())
            .collect();
        assert!(
            !appended.is_empty(),
            "round {round}: nothing appended in {ms} ms"
        );
        acked_max = appended.iter().copied().max().max(acked_max);
        let db = Db::open(dir.path(), options()).unwrap();
        let topic = db.topic("events", TopicOptions::default()).unwrap();
        let stats = topic.stats().unwrap();
        let acked = acked_max.unwrap();
        assert!(
            stats.next > acked,
            "round {round}: acknowledged offset {acked} lost (next {})",
            stats.next
        );
        let all = topic
            .read(
                &From::Earliest,
                ReadLimits {
                    limit: usize::MAX,
                    max_bytes: usize::MAX,
                },
            )
            .unwrap();
        assert_eq!(
            all.len() as u64,
            stats.next,
            "round {round}: offsets are not dense"
        );
        let committed = topic.committed(GROUP).unwrap().unwrap_or(0);
        let out = db.keyspace("output").unwrap();
        let outputs: Vec<(u64, u8)> = out
            .iter(IterOptions::default())
            .unwrap()
            .map(|e| {
                let (k, v) = e.unwrap();
                (u64::from_be_bytes(k.try_into().unwrap()), v[0])
            })
            .collect();
        assert_eq!(
            outputs.len() as u64,
            committed,
            "round {round}: outputs vs committed offset"
        );
        for (i, (offset, count)) in outputs.iter().enumerate() {
            assert_eq!(*offset, i as u64, "round {round}: record {i} skipped");
            assert_eq!(
                *count, 1,
                "round {round}: record {offset} processed {count} times"
            );
        }
        if round == 3 {
            assert!(committed > 0, "the consumer never committed");
        }
        db.close().unwrap();
    }
}
