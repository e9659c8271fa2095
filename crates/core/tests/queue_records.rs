//! Which records each queue operation writes (docs/FORMAT.md, "Queues"), read back through the
//! change feed, and that what is no longer written per operation (a lone group's position, the
//! counters after a push) is found again at reopen, after a crash too.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::Arc;

use shaledb::queue::{GroupStart, PushOptions, Queue, QueueOptions, ReserveOptions};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{ChangeOp, ChangeRetention, Db, Options};

fn open(storage: &Arc<MemoryStorage>) -> Db {
    let mut o = Options::default();
    o.background_thread = false;
    o.memtable_size = 64 * 1024;
    o.change_retention = Some(ChangeRetention::bytes(u64::MAX));
    Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap()
}

/// The records written by the batches committed after sequence `since`, as `+key` (put) or
/// `-key` (delete) with the key's first byte as a letter (`i`, `p`, `g`, `s`), per batch.
fn written(db: &Db, since: u64) -> Vec<Vec<String>> {
    db.changes(since)
        .unwrap()
        .map(Result::unwrap)
        .map(|c| {
            c.ops()
                .filter_map(|op| match op {
                    ChangeOp::Put { key, .. } => Some(format!("+{}", key[0] as char)),
                    ChangeOp::Delete { key, .. } => Some(format!("-{}", key[0] as char)),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

fn push(q: &Queue, v: &[u8]) -> u64 {
    q.push(v, PushOptions::default()).unwrap()
}

#[test]
fn a_push_writes_its_item_alone_and_reads_of_a_lone_group_write_no_group_position() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    push(&q, b"a");
    push(&q, b"b");
    let mut seq = db.sequence();
    push(&q, b"c");
    assert_eq!(written(&db, seq + 1), [["+i"]], "push");
    seq = db.sequence();
    q.take(None).unwrap().unwrap();
    assert_eq!(written(&db, seq + 1), [["-i", "+s"]], "take");
    seq = db.sequence();
    let item = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    assert_eq!(written(&db, seq + 1), [["+p"]], "reserve");
    seq = db.sequence();
    q.ack(item.lease()).unwrap();
    assert_eq!(written(&db, seq + 1), [["-p", "-i", "+s"]], "ack");
    // A take from an empty queue writes nothing.
    q.take(None).unwrap().unwrap();
    seq = db.sequence();
    assert_eq!(q.take(None).unwrap(), None);
    assert_eq!(db.sequence(), seq, "a take that finds nothing");
}

#[test]
fn a_lone_groups_position_is_found_again_after_a_crash_past_reservations_and_strides() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    // Past one stride of positions (4096), so that the stored position is a bound below.
    let n = 5000u64;
    for i in 0..n {
        push(&q, format!("item {i}").as_bytes());
    }
    let held = q.reserve(ReserveOptions::default()).unwrap().unwrap(); // id 1
    for _ in 0..4200 {
        q.take(None).unwrap().unwrap();
    }
    let open_read = q.reserve(ReserveOptions::default()).unwrap().unwrap(); // id 4202
    q.take(None).unwrap().unwrap(); // id 4203
    q.ack(held.lease()).unwrap();
    drop((q, db)); // no close: like a killed process
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    // The open read comes back first, then the stream goes on after the last take.
    let again = q.take(None).unwrap().unwrap();
    assert_eq!((again.id, again.deliveries), (open_read.id, 2));
    assert_eq!(q.take(None).unwrap().unwrap().id, 4204);
    let stats = q.stats().unwrap();
    assert_eq!(stats.items, n - 4204);
    assert_eq!(stats.groups[0].lag, n - 4204);
    let mut left = 0;
    while q.take(None).unwrap().is_some() {
        left += 1;
    }
    assert_eq!(left, n - 4204);
    assert_eq!(push(&q, b"after"), n + 1);
}

#[test]
fn a_second_group_made_after_reads_keeps_the_first_groups_exact_position_across_reopen() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    for i in 0..10 {
        push(&q, format!("item {i}").as_bytes());
    }
    for _ in 0..3 {
        q.take(None).unwrap().unwrap();
    }
    // With two groups, an item below one group's position may stay for the other: positions
    // are written exactly from here on.
    let audit = q.group("audit", GroupStart::Head).unwrap();
    assert_eq!(audit.take(None).unwrap().unwrap().id, 4);
    assert_eq!(q.take(None).unwrap().unwrap().id, 4);
    assert_eq!(audit.take(None).unwrap().unwrap().id, 5);
    drop((q, audit, db));
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let audit = q.group("audit", GroupStart::Head).unwrap();
    assert_eq!(q.take(None).unwrap().unwrap().id, 5);
    assert_eq!(audit.take(None).unwrap().unwrap().id, 6);
    // Back to one group: its position is derived again at the next open.
    assert!(q.remove_group("audit").unwrap());
    assert_eq!(q.take(None).unwrap().unwrap().id, 6);
    drop((q, audit, db));
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    assert_eq!(q.take(None).unwrap().unwrap().id, 7);
    assert_eq!(q.stats().unwrap().items, 3);
}

#[test]
fn pushes_the_stored_counters_do_not_count_yet_are_counted_at_open_after_a_crash() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let seq = db.sequence();
    // 1,500 pushes: the counters are written once, at the 1,024th.
    let n = 1500u64;
    for i in 0..n {
        push(&q, &[7; 10][..(i % 10) as usize]);
    }
    let counters_written = written(&db, seq + 1)
        .iter()
        .filter(|b| b.contains(&"+s".to_owned()))
        .count();
    assert_eq!(counters_written, 1);
    let before = q.stats().unwrap();
    drop((q, db)); // no close: like a killed process
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let after = q.stats().unwrap();
    assert_eq!((after.items, after.bytes), (before.items, before.bytes));
    assert_eq!(after.items, n);
    assert_eq!(push(&q, b"next"), n + 1);
    // A take writes the counters again; items pushed after it are counted at the next open.
    q.take(None).unwrap().unwrap();
    push(&q, b"late");
    drop((q, db));
    let db = open(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    assert_eq!(q.stats().unwrap().items, n + 1);
    assert_eq!(push(&q, b"last"), n + 3);
}
