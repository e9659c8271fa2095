//! Topic behaviours through the public API: dense offsets, reads from an offset, a time or the
//! end, subscriptions that wait, consumer groups, retention, batches, reopen.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use shaledb::queue::{PushOptions, QueueOptions};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::topic::{AppendOptions, From, NewRecord, ReadLimits, TopicOptions};
use shaledb::{Batch, Clock, Db, Error, Options, WriteOptions};

fn options() -> Options {
    let mut o = Options::default();
    o.background_thread = false;
    o.memtable_size = 64 * 1024;
    o
}

fn rec(v: &str) -> NewRecord {
    NewRecord::value(v.as_bytes().to_vec())
}

fn values(records: &[shaledb::topic::Record]) -> Vec<String> {
    records
        .iter()
        .map(|r| String::from_utf8(r.value.clone()).unwrap())
        .collect()
}

fn db_with_clock(storage: &Arc<MemoryStorage>) -> (Db, Arc<AtomicU64>) {
    let clock = Arc::new(AtomicU64::new(5_000_000));
    let c = clock.clone();
    let mut o = options();
    o.clock = Clock::from_fn(move || c.load(Ordering::SeqCst));
    let db = Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap();
    (db, clock)
}

#[test]
fn offsets_are_dense_from_zero_and_reads_start_anywhere() {
    let db = Db::open_in_memory(options()).unwrap();
    let t = db.topic("events", TopicOptions::default()).unwrap();
    let opts = AppendOptions::default();
    assert_eq!(t.append(rec("a"), &opts).unwrap(), 0);
    assert_eq!(
        t.append_many(&[rec("b"), rec("c"), rec("d")], &opts)
            .unwrap(),
        vec![1, 2, 3]
    );
    let all = t.read(&From::Earliest, ReadLimits::default()).unwrap();
    assert_eq!(values(&all), ["a", "b", "c", "d"]);
    assert_eq!(
        all.iter().map(|r| r.offset).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    let two = ReadLimits {
        limit: 2,
        ..ReadLimits::default()
    };
    assert_eq!(values(&t.read(&From::Offset(1), two).unwrap()), ["b", "c"]);
    assert_eq!(values(&t.latest(2).unwrap()), ["c", "d"]);
    assert!(t
        .read(&From::Latest, ReadLimits::default())
        .unwrap()
        .is_empty());
    let past = t.read(&From::Offset(9), ReadLimits::default()).unwrap_err();
    assert!(matches!(past, Error::OffsetOutOfRange { next: 4, .. }));
    let keyed = NewRecord {
        value: b"v".to_vec(),
        key: Some(b"user:1".to_vec()),
        headers: vec![("trace".into(), b"abc".to_vec())],
    };
    t.append(keyed.clone(), &opts).unwrap();
    let back = &t.latest(1).unwrap()[0];
    assert_eq!((&back.key, &back.headers), (&keyed.key, &keyed.headers));
    assert_eq!(db.topics().unwrap(), vec!["events".to_string()]);
}

#[test]
fn a_read_from_a_time_starts_at_the_first_record_appended_then() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let t = db.topic("events", TopicOptions::default()).unwrap();
    for i in 0..10 {
        clock.store(5_000_000 + i * 100, Ordering::SeqCst);
        t.append(rec(&i.to_string()), &AppendOptions::default())
            .unwrap();
    }
    let from = t
        .read(&From::Time(5_000_450), ReadLimits::default())
        .unwrap();
    assert_eq!(from[0].offset, 5);
    assert_eq!(from[0].time_ms, 5_000_500);
    // A clock going back does not reorder append times.
    clock.store(1, Ordering::SeqCst);
    t.append(rec("late"), &AppendOptions::default()).unwrap();
    assert_eq!(t.latest(1).unwrap()[0].time_ms, 5_000_900);
}

#[test]
fn a_subscription_yields_what_is_there_then_wakes_on_an_append_from_another_thread() {
    let db = Db::open_in_memory(options()).unwrap();
    let t = db.topic("events", TopicOptions::default()).unwrap();
    t.append(rec("old"), &AppendOptions::default()).unwrap();
    let mut sub = t.subscribe(&From::Earliest).unwrap();
    assert_eq!(sub.next().unwrap().unwrap().value, b"old");
    let writer = {
        let t = t.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            t.append(rec("new"), &AppendOptions::default()).unwrap();
        })
    };
    let got = sub.next_timeout(Duration::from_secs(30)).unwrap().unwrap();
    assert_eq!((got.offset, got.value.as_slice()), (1, &b"new"[..]));
    writer.join().unwrap();
    assert_eq!(sub.next_timeout(Duration::from_millis(20)).unwrap(), None);
    let mut latest = t.subscribe(&From::Latest).unwrap();
    assert_eq!(latest.try_next().unwrap(), None);
    t.append(rec("after"), &AppendOptions::default()).unwrap();
    assert_eq!(latest.try_next().unwrap().unwrap().offset, 2);
}

#[test]
fn retention_drops_the_oldest_but_not_what_a_group_still_needs() {
    let db = Db::open_in_memory(options()).unwrap();
    let opts = TopicOptions {
        max_records: Some(3),
        ..TopicOptions::default()
    };
    let t = db.topic("log", opts).unwrap();
    t.commit("slow", 0).unwrap();
    for i in 0..5 {
        t.append(rec(&i.to_string()), &AppendOptions::default())
            .unwrap();
    }
    assert_eq!(
        t.stats().unwrap().first,
        0,
        "the group holds retention back"
    );
    t.commit("slow", 4).unwrap();
    t.apply_retention().unwrap();
    let s = t.stats().unwrap();
    assert_eq!((s.first, s.next), (2, 5));
    let err = t.read(&From::Offset(0), ReadLimits::default()).unwrap_err();
    assert_eq!(err.code(), "OFFSET_OUT_OF_RANGE");
    assert!(matches!(err, Error::OffsetOutOfRange { first: 2, .. }));
    assert_eq!(
        values(&t.read(&From::Earliest, ReadLimits::default()).unwrap()),
        ["2", "3", "4"]
    );
    let by_bytes = TopicOptions {
        max_bytes: Some(1),
        retention_passes_groups: true,
        ..TopicOptions::default()
    };
    let t = db.topic("log", by_bytes).unwrap();
    t.append(rec("x"), &AppendOptions::default()).unwrap();
    let s = t.stats().unwrap();
    assert_eq!((s.first, s.next, s.bytes), (6, 6, 0));
}

#[test]
fn retention_by_age_follows_the_clock() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let opts = TopicOptions {
        max_age: Some(Duration::from_secs(10)),
        ..TopicOptions::default()
    };
    let t = db.topic("log", opts).unwrap();
    t.append(rec("old"), &AppendOptions::default()).unwrap();
    clock.fetch_add(11_000, Ordering::SeqCst);
    t.append(rec("new"), &AppendOptions::default()).unwrap();
    assert_eq!(
        values(&t.read(&From::Earliest, ReadLimits::default()).unwrap()),
        ["new"]
    );
}

#[test]
fn an_outbox_batch_appends_pushes_and_puts_atomically_and_a_consumer_commits_with_its_output() {
    let db = Db::open_in_memory(options()).unwrap();
    let t = db.topic("events", TopicOptions::default()).unwrap();
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let mut b = Batch::new();
    b.put(&db.default_keyspace(), b"order:1", b"paid").unwrap();
    b.append(&t, rec("order:1 paid")).unwrap();
    b.push(&q, b"ship order:1", PushOptions::default()).unwrap();
    b.append(&t, rec("order:1 queued")).unwrap();
    let ids = db.write_with_ids(&b, WriteOptions::default()).unwrap();
    assert_eq!(
        ids,
        vec![0, 1, 1],
        "offset 0, queue id 1, offset 1: in the order added"
    );
    // Consume, transform, produce, commit: in one write.
    let records = t
        .read(&From::Committed("indexer".into()), ReadLimits::default())
        .unwrap();
    let mut out = Batch::new();
    for r in &records {
        out.put(
            &db.default_keyspace(),
            format!("index:{}", r.offset).as_bytes(),
            &r.value,
        )
        .unwrap();
    }
    out.commit_offset(&t, "indexer", 2).unwrap();
    db.write(&out, WriteOptions::default()).unwrap();
    assert_eq!(t.committed("indexer").unwrap(), Some(2));
    assert_eq!(
        t.stats().unwrap().groups,
        vec![("indexer".to_string(), 2, 0)]
    );
    // A commit past the end fails the whole batch.
    let mut bad = Batch::new();
    bad.put(&db.default_keyspace(), b"x", b"y")
        .unwrap()
        .commit_offset(&t, "indexer", 99)
        .unwrap();
    assert!(db.write(&bad, WriteOptions::default()).is_err());
    assert_eq!(db.get(b"x").unwrap(), None);
    assert_eq!(t.committed("indexer").unwrap(), Some(2));
}

#[test]
fn a_topic_reopens_with_its_offsets_groups_and_records() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = db_with_clock(&storage);
    let t = db.topic("log", TopicOptions::default()).unwrap();
    t.append_many(&[rec("a"), rec("b")], &AppendOptions::default())
        .unwrap();
    t.commit("g", 1).unwrap();
    drop((t, db)); // not closed: a killed process
    let (db, _) = db_with_clock(&storage);
    let t = db.existing_topic("log").unwrap().unwrap();
    assert_eq!(t.append(rec("c"), &AppendOptions::default()).unwrap(), 2);
    let mut sub = t.subscribe(&From::Committed("g".into())).unwrap();
    assert_eq!(sub.try_next().unwrap().unwrap().value, b"b");
    assert!(db.existing_topic("nope").unwrap().is_none());
}

#[test]
fn a_deleted_topic_is_gone_and_bad_arguments_are_invalid_argument() {
    let db = Db::open_in_memory(options()).unwrap();
    let t = db.topic("tmp", TopicOptions::default()).unwrap();
    t.append(rec("x"), &AppendOptions::default()).unwrap();
    assert!(db.delete_topic("tmp").unwrap());
    assert!(!db.delete_topic("tmp").unwrap());
    assert_eq!(
        t.append(rec("y"), &AppendOptions::default())
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
    let t = db.topic("tmp", TopicOptions::default()).unwrap();
    assert_eq!(t.stats().unwrap().next, 0);
    for name in ["", "a\0b", &"x".repeat(201)] {
        assert_eq!(
            db.topic(name, TopicOptions::default()).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
    }
    assert!(t.commit("g\0", 0).is_err());
    assert_eq!(t.commit("g", 5).unwrap_err().code(), "OFFSET_OUT_OF_RANGE");
}

#[test]
fn records_read_at_the_tail_equal_the_records_read_back_from_storage() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let t = db.topic("tail", TopicOptions::default()).unwrap();
    let mut sub = t.subscribe(&From::Latest).unwrap();
    assert_eq!(sub.try_next().unwrap(), None); // a reader at the end: the tail keeps records
    let mut appended = Vec::new();
    for i in 0..40u64 {
        clock.fetch_add(7, Ordering::SeqCst);
        let record = NewRecord {
            value: format!("v{i}").into_bytes(),
            key: (i % 3 == 0).then(|| format!("k{i}").into_bytes()),
            headers: vec![("h".to_owned(), vec![i as u8; (i % 4) as usize])],
        };
        appended.push(record.clone());
        if i % 10 == 9 {
            let mut batch = Batch::new();
            batch.append(&t, record).unwrap();
            db.write(&batch, WriteOptions::default()).unwrap();
        } else {
            t.append(record, &AppendOptions::default()).unwrap();
        }
    }
    let from_tail: Vec<_> = std::iter::from_fn(|| sub.try_next().unwrap()).collect();
    assert_eq!(from_tail.len(), 40);
    let limits = ReadLimits {
        limit: 100,
        max_bytes: usize::MAX,
    };
    assert_eq!(t.read(&From::Earliest, limits).unwrap(), from_tail);
    drop((sub, t, db));
    let (db, _) = db_with_clock(&storage);
    let t = db.existing_topic("tail").unwrap().unwrap();
    let stored = t.read(&From::Earliest, limits).unwrap();
    assert_eq!(
        stored, from_tail,
        "the tail's copies are the stored records"
    );
    for (r, a) in stored.iter().zip(&appended) {
        assert_eq!(
            (&r.key, &r.headers, &r.value),
            (&a.key, &a.headers, &a.value)
        );
    }
}

#[test]
fn deleting_a_topic_wakes_its_waiting_subscriber_with_an_error() {
    let db = Db::open_in_memory(options()).unwrap();
    let t = db.topic("gone", TopicOptions::default()).unwrap();
    let mut sub = t.subscribe(&From::Latest).unwrap();
    let waiter = std::thread::spawn(move || sub.next_timeout(Duration::from_secs(600)));
    std::thread::sleep(Duration::from_millis(50));
    assert!(db.delete_topic("gone").unwrap());
    let err = waiter.join().unwrap().unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert_eq!(
        t.read(&From::Earliest, ReadLimits::default())
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn a_record_too_large_for_the_tail_is_read_back_whole_between_small_ones() {
    let db = Db::open_in_memory(options()).unwrap();
    let t = db.topic("big", TopicOptions::default()).unwrap();
    let mut sub = t.subscribe(&From::Latest).unwrap();
    assert_eq!(sub.try_next().unwrap(), None);
    let big = vec![9u8; (1 << 20) + 100];
    let none = AppendOptions::default();
    t.append(rec("before"), &none).unwrap();
    t.append(NewRecord::value(big.clone()), &none).unwrap();
    t.append(rec("after"), &none).unwrap();
    let got: Vec<_> = std::iter::from_fn(|| sub.try_next().unwrap()).collect();
    assert_eq!(got.len(), 3);
    assert_eq!(
        (got[0].value.as_slice(), got[2].value.as_slice()),
        (&b"before"[..], &b"after"[..])
    );
    assert_eq!(got[1].value, big);
}
