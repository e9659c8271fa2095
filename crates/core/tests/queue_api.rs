//! Queue behaviours through the public API: FIFO, reliable reads, leases, dead letters,
//! groups, limits, batches, waits, reopen.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use shaledb::queue::{GroupStart, PushOptions, QueueOptions, ReserveOptions, WhenFull};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Batch, Clock, Db, Error, Options, WriteOptions};

fn options() -> Options {
    let mut o = Options::default();
    o.background_thread = false;
    o.memtable_size = 64 * 1024;
    o
}

/// A database with a clock the test moves.
fn db_with_clock(storage: &Arc<MemoryStorage>) -> (Db, Arc<AtomicU64>) {
    let clock = Arc::new(AtomicU64::new(1_000_000));
    let c = clock.clone();
    let mut o = options();
    o.clock = Clock::from_fn(move || c.load(Ordering::SeqCst));
    let db = Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap();
    (db, clock)
}

fn push(q: &shaledb::queue::Queue, v: &[u8]) -> u64 {
    q.push(v, PushOptions::default()).unwrap()
}

fn value(item: Option<shaledb::queue::QueueItem>) -> Option<Vec<u8>> {
    item.map(|i| i.value)
}

#[test]
fn take_returns_items_in_push_order_and_peek_leaves_them() {
    let db = Db::open_in_memory(options()).unwrap();
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let ids = q
        .push_many(&[b"a", b"b", b"c"], PushOptions::default())
        .unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(value(q.peek().unwrap()), Some(b"a".to_vec()));
    assert_eq!(value(q.take(None).unwrap()), Some(b"a".to_vec()));
    assert_eq!(value(q.take(None).unwrap()), Some(b"b".to_vec()));
    assert_eq!(value(q.take(None).unwrap()), Some(b"c".to_vec()));
    assert_eq!(q.take(None).unwrap(), None);
    assert_eq!(q.stats().unwrap().items, 0);
    assert_eq!(db.queues().unwrap(), vec!["jobs".to_string()]);
}

#[test]
fn a_reservation_its_holder_released_is_unknown_to_a_second_release_or_an_ack_even_after_reopen() {
    // Issue 22: both gave LEASE_EXPIRED ("ran out or the item went back"), where README says an
    // item already acked or released is UNKNOWN_RESERVATION.
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    push(&q, b"one");
    let lease = Some(Duration::from_secs(10));
    let reserve = |q: &shaledb::queue::Queue| {
        q.reserve(ReserveOptions { lease, wait: None })
            .unwrap()
            .unwrap()
    };
    let a = reserve(&q);
    q.release(a.lease(), Some(Duration::from_secs(5))).unwrap();
    let code = |r: shaledb::Result<()>| r.unwrap_err().code();
    assert_eq!(code(q.release(a.lease(), None)), "UNKNOWN_RESERVATION");
    assert_eq!(code(q.ack(a.lease())), "UNKNOWN_RESERVATION");
    assert_eq!(
        q.extend(a.lease(), Duration::from_secs(1))
            .unwrap_err()
            .code(),
        "UNKNOWN_RESERVATION"
    );
    // The rule is stored with the item: it holds across a reopen.
    drop(q);
    db.close().unwrap();
    let mut o = options();
    let c = clock.clone();
    o.clock = Clock::from_fn(move || c.load(Ordering::SeqCst));
    let db = Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap();
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    assert_eq!(code(q.ack(a.lease())), "UNKNOWN_RESERVATION");
    // Its next delivery's lease runs out: that one is LEASE_EXPIRED.
    clock.fetch_add(5_001, Ordering::SeqCst);
    let b = reserve(&q);
    assert_eq!(b.deliveries, 2);
    clock.fetch_add(10_001, Ordering::SeqCst);
    assert_eq!(code(q.ack(b.lease())), "LEASE_EXPIRED");
    assert_eq!(code(q.release(b.lease(), None)), "LEASE_EXPIRED");
}

#[test]
fn a_reserved_item_is_invisible_until_acked_released_or_its_lease_runs_out() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    push(&q, b"one");
    push(&q, b"two");
    let lease = Some(Duration::from_secs(10));
    let a = q
        .reserve(ReserveOptions { lease, wait: None })
        .unwrap()
        .unwrap();
    assert_eq!((a.value.as_slice(), a.deliveries), (&b"one"[..], 1));
    let b = q
        .reserve(ReserveOptions { lease, wait: None })
        .unwrap()
        .unwrap();
    assert_eq!(b.value, b"two");
    assert_eq!(q.reserve(ReserveOptions::default()).unwrap(), None);
    q.release(b.lease(), None).unwrap();
    let b2 = q
        .reserve(ReserveOptions { lease, wait: None })
        .unwrap()
        .unwrap();
    assert_eq!((b2.value.as_slice(), b2.deliveries), (&b"two"[..], 2));
    assert!(matches!(q.ack(b.lease()), Err(Error::LeaseExpired { .. })));
    q.ack(b2.lease()).unwrap();
    assert!(matches!(
        q.ack(b2.lease()),
        Err(Error::UnknownReservation { .. })
    ));
    // `one`'s lease runs out: it comes back by itself.
    clock.fetch_add(10_001, Ordering::SeqCst);
    let a2 = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    assert_eq!((a2.value.as_slice(), a2.deliveries), (&b"one"[..], 2));
    assert_eq!(q.ack(a.lease()).unwrap_err().code(), "LEASE_EXPIRED");
    let until = q.extend(a2.lease(), Duration::from_secs(60)).unwrap();
    assert_eq!(until, clock.load(Ordering::SeqCst) + 60_000);
    q.ack(a2.lease()).unwrap();
    assert_eq!(q.stats().unwrap().items, 0);
}

#[test]
fn reservations_open_when_the_process_died_are_delivered_again_after_reopen() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = db_with_clock(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    push(&q, b"acked");
    push(&q, b"open");
    push(&q, b"new");
    let acked = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    q.ack(acked.lease()).unwrap();
    let open = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    assert_eq!(open.value, b"open");
    drop((q, db)); // no close: like a killed process (the writes reached the OS)
    let (db, _) = db_with_clock(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let again = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    assert_eq!(
        (again.value.as_slice(), again.deliveries),
        (&b"open"[..], 2)
    );
    assert_eq!(value(q.take(None).unwrap()), Some(b"new".to_vec()));
    assert_eq!(q.take(None).unwrap(), None);
}

#[test]
fn an_item_delivered_max_deliveries_times_moves_to_the_dead_letter_queue() {
    let db = Db::open_in_memory(options()).unwrap();
    let opts = QueueOptions {
        max_deliveries: Some(2),
        ..QueueOptions::default()
    };
    let q = db.queue("jobs", opts).unwrap();
    push(&q, b"poison");
    push(&q, b"fine");
    for _ in 0..2 {
        let item = q.reserve(ReserveOptions::default()).unwrap().unwrap();
        assert_eq!(item.value, b"poison");
        q.release(item.lease(), None).unwrap();
    }
    let next = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    assert_eq!(next.value, b"fine");
    let dead = db.queue("jobs.dead", QueueOptions::default()).unwrap();
    assert_eq!(value(dead.take(None).unwrap()), Some(b"poison".to_vec()));
    assert_eq!(q.stats().unwrap().dead_lettered, 1);
}

#[test]
fn every_group_sees_every_item_and_an_item_goes_when_all_are_done() {
    let db = Db::open_in_memory(options()).unwrap();
    let q = db.queue("events", QueueOptions::default()).unwrap();
    let audit = q.group("audit", GroupStart::Tail).unwrap();
    push(&q, b"e1");
    push(&q, b"e2");
    assert_eq!(value(q.take(None).unwrap()), Some(b"e1".to_vec()));
    assert_eq!(q.stats().unwrap().items, 2, "audit still needs both");
    assert_eq!(value(audit.take(None).unwrap()), Some(b"e1".to_vec()));
    assert_eq!(q.stats().unwrap().items, 1);
    let late = q.group("late", GroupStart::Head).unwrap();
    assert_eq!(value(late.peek().unwrap()), Some(b"e2".to_vec()));
    assert!(q.remove_group("late").unwrap());
    assert_eq!(
        q.groups().unwrap(),
        vec!["".to_string(), "audit".to_string()]
    );
    let stats = q.stats().unwrap();
    assert_eq!(
        stats.groups.iter().map(|g| g.lag).collect::<Vec<_>>(),
        vec![1, 1]
    );
}

#[test]
fn a_full_queue_rejects_or_discards_its_oldest_items() {
    let db = Db::open_in_memory(options()).unwrap();
    let reject = QueueOptions {
        max_items: Some(2),
        ..QueueOptions::default()
    };
    let q = db.queue("small", reject).unwrap();
    push(&q, b"1");
    push(&q, b"2");
    let err = q.push(b"3", PushOptions::default()).unwrap_err();
    assert_eq!(err.code(), "QUEUE_FULL");
    let discard = QueueOptions {
        max_bytes: Some(4),
        when_full: WhenFull::DiscardOldest,
        ..QueueOptions::default()
    };
    let q = db.queue("ring", discard).unwrap();
    for v in [b"aa", b"bb", b"cc"] {
        push(&q, v);
    }
    assert_eq!(value(q.take(None).unwrap()), Some(b"bb".to_vec()));
    assert_eq!(value(q.take(None).unwrap()), Some(b"cc".to_vec()));
    assert!(q.push(b"too big", PushOptions::default()).is_err());
}

#[test]
fn delayed_and_expiring_items_follow_the_clock() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let q = db.queue("timed", QueueOptions::default()).unwrap();
    let later = PushOptions {
        delay: Some(Duration::from_secs(5)),
        ..PushOptions::default()
    };
    let short = PushOptions {
        ttl: Some(Duration::from_secs(1)),
        ..PushOptions::default()
    };
    q.push(b"later", later).unwrap();
    q.push(b"short-lived", short).unwrap();
    push(&q, b"now");
    assert_eq!(value(q.take(None).unwrap()), Some(b"short-lived".to_vec()));
    q.push(b"expires", short).unwrap();
    clock.fetch_add(2_000, Ordering::SeqCst);
    assert_eq!(value(q.take(None).unwrap()), Some(b"now".to_vec()));
    assert_eq!(
        q.take(None).unwrap(),
        None,
        "expired, and `later` is not due"
    );
    clock.fetch_add(3_000, Ordering::SeqCst);
    assert_eq!(value(q.take(None).unwrap()), Some(b"later".to_vec()));
    assert_eq!(q.stats().unwrap().items, 0);
}

#[test]
fn a_push_in_a_batch_commits_with_the_batch_and_an_ack_with_a_result() {
    let db = Db::open_in_memory(options()).unwrap();
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let mut batch = Batch::new();
    batch
        .put(&db.default_keyspace(), b"photo:1", b"raw")
        .unwrap()
        .push(&q, b"resize photo:1", PushOptions::default())
        .unwrap();
    let ids = db.write_with_ids(&batch, WriteOptions::default()).unwrap();
    assert_eq!(ids.len(), 1);
    let job = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    assert_eq!(job.id, ids[0]);
    let mut done = Batch::new();
    done.put(&db.default_keyspace(), b"photo:1", b"resized")
        .unwrap()
        .ack(&q, job.lease())
        .unwrap();
    db.write(&done, WriteOptions::default()).unwrap();
    assert_eq!(db.get(b"photo:1").unwrap(), Some(b"resized".to_vec()));
    assert_eq!(q.stats().unwrap().items, 0);
    // An ack of a lease no longer held fails the whole batch: the put is not written.
    let mut stale = Batch::new();
    stale
        .put(&db.default_keyspace(), b"photo:1", b"twice")
        .unwrap()
        .ack(&q, job.lease())
        .unwrap();
    assert!(db.write(&stale, WriteOptions::default()).is_err());
    assert_eq!(db.get(b"photo:1").unwrap(), Some(b"resized".to_vec()));
}

#[test]
fn a_conflicting_transaction_pushes_nothing() {
    let db = Db::open_in_memory(options()).unwrap();
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let ks = db.default_keyspace();
    let mut tx = db.transaction();
    tx.get(&ks, b"k").unwrap();
    tx.push(&q, b"job", PushOptions::default()).unwrap();
    db.put(b"k", b"changed").unwrap();
    assert!(matches!(
        tx.commit(WriteOptions::default()),
        Err(Error::Conflict)
    ));
    assert_eq!(q.take(None).unwrap(), None);
    assert_eq!(push(&q, b"next"), 1, "the failed push took no id");
}

#[test]
fn a_waiting_reserve_wakes_when_another_thread_pushes() {
    let db = Db::open_in_memory(options()).unwrap();
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let pusher = {
        let q = q.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            q.push(b"hello", PushOptions::default()).unwrap();
        })
    };
    let wait = Some(Duration::from_secs(30));
    let item = q.reserve(ReserveOptions { lease: None, wait }).unwrap();
    assert_eq!(value(item), Some(b"hello".to_vec()));
    pusher.join().unwrap();
    assert_eq!(q.take(Some(Duration::from_millis(20))).unwrap(), None);
}

#[test]
fn concurrent_consumers_never_get_the_same_item() {
    let db = Db::open_in_memory(options()).unwrap();
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let n = 2_000u32;
    for i in 0..n {
        push(&q, &i.to_be_bytes());
    }
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                while let Some(item) = q.reserve(ReserveOptions::default()).unwrap() {
                    got.push(item.id);
                    q.ack(item.lease()).unwrap();
                }
                got
            })
        })
        .collect();
    let mut all: Vec<u64> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    all.sort_unstable();
    let before = all.len();
    all.dedup();
    assert_eq!((before, all.len()), (n as usize, n as usize));
}

#[test]
fn a_deleted_queue_is_gone_and_its_handles_fail() {
    let db = Db::open_in_memory(options()).unwrap();
    let q = db.queue("tmp", QueueOptions::default()).unwrap();
    push(&q, b"x");
    assert!(db.delete_queue("tmp").unwrap());
    assert!(!db.delete_queue("tmp").unwrap());
    assert_eq!(
        q.push(b"y", PushOptions::default()).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    let q = db.queue("tmp", QueueOptions::default()).unwrap();
    assert_eq!(q.take(None).unwrap(), None);
    assert!(db.queues().unwrap().contains(&"tmp".to_string()));
}

#[test]
fn bad_queue_arguments_are_invalid_argument() {
    let db = Db::open_in_memory(options()).unwrap();
    for name in ["", "a\0b", &"x".repeat(201)] {
        assert_eq!(
            db.queue(name, QueueOptions::default()).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
    }
    let bad = QueueOptions {
        max_deliveries: Some(0),
        ..QueueOptions::default()
    };
    assert!(db.queue("q", bad).is_err());
    let q = db.queue("q", QueueOptions::default()).unwrap();
    assert!(q.group("g\0", GroupStart::Head).is_err());
    let lease = ReserveOptions {
        lease: Some(Duration::ZERO),
        wait: None,
    };
    assert!(q.reserve(lease).is_err());
}

#[test]
fn a_reservation_back_from_a_reopen_keeps_its_place_across_a_second_reopen() {
    // Found by the model test: reservations that came back at a reopen were ready in memory
    // but still leased on disk, so a second reopen reordered them.
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    push(&q, b"1");
    push(&q, b"2");
    let lease = Some(Duration::from_millis(1));
    q.reserve(ReserveOptions { lease, wait: None })
        .unwrap()
        .unwrap();
    q.reserve(ReserveOptions { lease, wait: None })
        .unwrap()
        .unwrap();
    drop((q, db));
    let (db, _) = db_with_clock(&storage);
    clock.store(1_000_001, Ordering::SeqCst);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let first = q
        .reserve(ReserveOptions { lease, wait: None })
        .unwrap()
        .unwrap();
    assert_eq!(first.value, b"1");
    drop((q, db));
    let (db, c2) = db_with_clock(&storage);
    c2.store(1_000_001, Ordering::SeqCst);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    let next = q.take(None).unwrap().unwrap();
    assert_eq!((next.value.as_slice(), next.deliveries), (&b"2"[..], 2));
}

#[test]
fn consumed_items_are_reclaimed_by_compaction_and_the_head_stays_a_seek() {
    let mut o = options();
    o.memtable_size = 1 << 20;
    let db = Db::open_in_memory(o).unwrap();
    let q = db.queue("big", QueueOptions::default()).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..20 {
        let values: Vec<Vec<u8>> = (0..1000)
            .map(|_| {
                (0..128)
                    .flat_map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x.to_le_bytes()
                    })
                    .collect()
            })
            .collect();
        q.push_many(&values, PushOptions::default()).unwrap();
    }
    db.flush().unwrap();
    assert!(db.stats().table_bytes > 10 << 20);
    while !q.take_many(1000, None).unwrap().is_empty() {}
    push(&q, b"last");
    db.compact_range(None, None).unwrap();
    let bytes = db.stats().table_bytes;
    assert!(
        bytes < 256 << 10,
        "{bytes} bytes of tables after consuming everything"
    );
    assert_eq!(value(q.take(None).unwrap()), Some(b"last".to_vec()));
}

#[test]
fn open_queue_keeps_the_stored_options_and_next_wake_names_the_first_lease_end() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let options = QueueOptions {
        max_items: Some(3),
        default_lease: Duration::from_millis(500),
        ..QueueOptions::default()
    };
    let q = db.queue("q", options.clone()).unwrap();
    assert_eq!(db.open_queue("q").unwrap().options(), options);
    assert_eq!(
        db.open_queue("new").unwrap().options(),
        QueueOptions::default()
    );

    assert_eq!(q.next_wake_ms(), None);
    push(&q, b"a");
    let now = clock.load(Ordering::SeqCst);
    let item = q.reserve(ReserveOptions::default()).unwrap().unwrap();
    assert_eq!(item.lease_until_ms, Some(now + 500));
    assert_eq!(q.next_wake_ms(), Some(now + 500));
    q.release(item.lease(), Some(Duration::from_millis(200)))
        .unwrap();
    assert_eq!(q.next_wake_ms(), Some(now + 200));
}

#[test]
fn push_many_past_a_discard_oldest_limit_keeps_the_newest_items() {
    // Found by the JS bindings' tests: the items a push_many had pushed were not in the database
    // yet, so discarding the oldest found nothing and the push failed with QueueFull.
    let db = Db::open_in_memory(options()).unwrap();
    let ring = QueueOptions {
        max_items: Some(2),
        when_full: WhenFull::DiscardOldest,
        ..QueueOptions::default()
    };
    let q = db.queue("ring", ring).unwrap();
    push(&q, b"old");
    q.push_many(&[b"a", b"b", b"c"], PushOptions::default())
        .unwrap();
    assert_eq!(q.stats().unwrap().items, 2);
    assert_eq!(value(q.take(None).unwrap()), Some(b"b".to_vec()));
    assert_eq!(value(q.take(None).unwrap()), Some(b"c".to_vec()));
    assert_eq!(q.take(None).unwrap(), None);
}

#[test]
fn peek_many_shows_the_next_items_in_delivery_order_and_changes_nothing() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, clock) = db_with_clock(&storage);
    let q = db.queue("jobs", QueueOptions::default()).unwrap();
    for v in [b"a", b"b", b"c", b"d"] {
        push(&q, v);
    }
    let lease = Some(Duration::from_secs(10));
    let a = q
        .reserve(ReserveOptions { lease, wait: None })
        .unwrap()
        .unwrap();
    let b = q
        .reserve(ReserveOptions { lease, wait: None })
        .unwrap()
        .unwrap();
    q.release(b.lease(), None).unwrap();
    let values = |items: Vec<shaledb::queue::QueueItem>| -> Vec<(Vec<u8>, u32)> {
        items.into_iter().map(|i| (i.value, i.deliveries)).collect()
    };
    // The released one first (delivered once), then the stream; the reserved one is not there.
    let seen = values(q.peek_many(10).unwrap());
    assert_eq!(
        seen,
        vec![(b"b".to_vec(), 1), (b"c".to_vec(), 0), (b"d".to_vec(), 0)]
    );
    assert_eq!(values(q.peek_many(2).unwrap()), seen[..2].to_vec());
    assert!(q.peek_many(0).unwrap().is_empty());
    assert!(q
        .peek_many(10)
        .unwrap()
        .iter()
        .all(|i| i.lease_until_ms.is_none()));
    // Nothing changed: the same items are delivered, in that order, and a's lease still holds.
    let taken = values(q.take_many(10, None).unwrap());
    assert_eq!(
        taken.iter().map(|(v, _)| v.clone()).collect::<Vec<_>>(),
        vec![b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]
    );
    q.ack(a.lease()).unwrap();
    clock.fetch_add(1, Ordering::SeqCst);
    assert!(q.peek_many(10).unwrap().is_empty());
}
