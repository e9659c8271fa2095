//! Change feed behaviours through the public API: batches in commit order with keyspace names
//! and annotations, retention past flushes, cursors, truncation, waiting, and a follower that
//! applies a leader's feed (idempotent, gap-refusing, continuing from a checkpoint).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::Arc;
use std::time::Duration;

use shaledb::queue::QueueOptions;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{
    Applied, Batch, Change, ChangeOp, ChangeRetention, Clock, Db, Error, IterOptions, Options,
    WriteOptions,
};

fn options() -> Options {
    let mut o = Options::default();
    o.background_thread = false;
    o.memtable_size = 64 * 1024;
    o.wal_preallocation = 0;
    o
}

fn keeping() -> Options {
    let mut o = options();
    o.change_retention = Some(ChangeRetention::bytes(u64::MAX));
    o
}

/// [`keeping`] with logs preallocated (as Node's are): a reader at the tip meets zeros.
fn keeping_preallocated() -> Options {
    let mut o = keeping();
    o.wal_preallocation = 256 * 1024;
    o
}

fn follower_options() -> Options {
    let mut o = options();
    o.follower = true;
    o
}

fn open(storage: &Arc<MemoryStorage>, o: Options) -> Db {
    Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap()
}

fn all(db: &Db, since: u64) -> Vec<Change> {
    db.changes(since).unwrap().map(Result::unwrap).collect()
}

/// Every key and value of every keyspace, in order: what two replicas must agree on.
fn contents(db: &Db) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for name in ["default", "users", "orders"] {
        let ks = db.keyspace(name).unwrap();
        for e in ks.iter(IterOptions::default()).unwrap() {
            let (k, v) = e.unwrap();
            out.push((name.to_owned(), k, v));
        }
    }
    out
}

#[test]
fn the_feed_yields_every_committed_batch_in_order_with_keyspace_names_and_meta() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, options());
    let users = db.keyspace("users").unwrap();
    db.put(b"a", b"1").unwrap();
    let mut batch = Batch::new();
    batch.put(&users, b"u1", b"ann").unwrap();
    batch.delete(&db.default_keyspace(), b"a").unwrap();
    batch.delete_range(&users, b"x", b"z").unwrap();
    batch.set_meta(b"origin-7").unwrap();
    db.write(&batch, WriteOptions::default()).unwrap();

    let changes = all(&db, 1);
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0].seq(), 1);
    assert_eq!(
        changes[0].ops().collect::<Vec<_>>(),
        vec![ChangeOp::Put {
            keyspace: "default",
            key: b"a",
            value: b"1"
        }]
    );
    assert_eq!(changes[1].seq(), changes[0].last_seq() + 1);
    assert_eq!(changes[1].meta(), Some(&b"origin-7"[..]));
    assert_eq!(
        changes[1].time(),
        None,
        "no retention: batches carry no time"
    );
    assert_eq!(
        changes[1].ops().collect::<Vec<_>>(),
        vec![
            ChangeOp::Put {
                keyspace: "users",
                key: b"u1",
                value: b"ann"
            },
            ChangeOp::Delete {
                keyspace: "default",
                key: b"a"
            },
            ChangeOp::DeleteRange {
                keyspace: "users",
                start: b"x",
                end: b"z"
            },
        ]
    );
    assert_eq!(db.sequence(), changes[1].last_seq());
    // From the middle: only batches starting at or after `since`.
    assert_eq!(all(&db, changes[1].seq()).len(), 1);
    assert!(all(&db, db.sequence() + 1).is_empty());
}

#[test]
fn a_change_round_trips_through_its_bytes_and_garbage_is_a_typed_error() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, keeping());
    db.keyspace("users").unwrap().put(b"k", b"v").unwrap();
    let change = all(&db, 1).remove(0);
    assert!(change.time().is_some(), "retention stamps batches");
    let bytes = change.to_bytes();
    assert_eq!(Change::from_bytes(&bytes).unwrap(), change);
    for bad in [
        &b""[..],
        &b"SHLC"[..],
        &bytes[..bytes.len() - 1],
        &[&bytes[..10], b"x", &bytes[11..]].concat(),
    ] {
        let e = Change::from_bytes(bad).unwrap_err();
        assert_eq!(e.code(), "CORRUPTION", "{e}");
    }
}

#[test]
fn retention_keeps_batches_past_flushes_and_without_it_reading_below_is_changes_truncated() {
    for keep in [true, false] {
        let storage = Arc::new(MemoryStorage::new());
        let db = open(&storage, if keep { keeping() } else { options() });
        for i in 0..2_000u32 {
            db.put(format!("k{i:05}").as_bytes(), &[7u8; 64]).unwrap();
        }
        db.flush().unwrap();
        if keep {
            let changes = all(&db, 1);
            assert_eq!(changes.len(), 2_000);
            for w in changes.windows(2) {
                assert_eq!(w[1].seq(), w[0].last_seq() + 1, "dense");
            }
        } else {
            match db.changes(1) {
                Err(Error::ChangesTruncated { since, oldest }) => {
                    assert_eq!(since, 1);
                    assert!(oldest > 1);
                    assert_eq!(all(&db, oldest).len() as u64, db.sequence() + 1 - oldest);
                }
                other => panic!("expected ChangesTruncated, got {other:?}"),
            }
        }
    }
}

#[test]
fn a_change_cursor_holds_logs_until_acknowledged_and_survives_reopen() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, options());
    db.ack_changes("nats", 0).unwrap();
    for i in 0..1_000u32 {
        db.put(format!("k{i:05}").as_bytes(), &[1u8; 64]).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(all(&db, 1).len(), 1_000, "the cursor at 0 holds every log");
    db.close().unwrap();

    let db = open(&storage, options());
    assert_eq!(db.change_cursor("nats"), Some(0));
    assert_eq!(all(&db, 1).len(), 1_000, "still held after reopen");
    let last = db.sequence();
    db.ack_changes("nats", last).unwrap();
    assert!(matches!(db.changes(1), Err(Error::ChangesTruncated { .. })));
    assert!(db.remove_change_cursor("nats").unwrap());
    assert!(!db.remove_change_cursor("nats").unwrap());
    assert_eq!(db.change_cursors(), vec![]);
    // Bad input.
    assert_eq!(
        db.ack_changes("", 1).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        db.ack_changes("c", last + 1).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn the_feed_goes_on_across_a_reopen_from_the_recovered_log_to_the_new_one() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, keeping());
    db.put(b"a", b"1").unwrap();
    drop(db); // no close: the log is left unsealed, as after a crash
    let db = open(&storage, keeping());
    db.put(b"b", b"2").unwrap();
    let changes = all(&db, 1);
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[1].seq(), changes[0].last_seq() + 1);
}

#[test]
fn a_waiting_reader_wakes_on_a_commit_from_another_thread() {
    let storage = Arc::new(MemoryStorage::new());
    let db = Arc::new(open(&storage, options()));
    let mut feed = db.changes(1).unwrap();
    assert!(feed
        .next_timeout(Duration::from_millis(10))
        .unwrap()
        .is_none());
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            db.put(b"k", b"v").unwrap();
        })
    };
    let got = feed.next_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(got.map(|c| c.seq()), Some(1));
    writer.join().unwrap();
}

#[test]
fn a_follower_applies_its_leaders_changes_idempotently_and_refuses_gaps_and_writes() {
    let leader_storage = Arc::new(MemoryStorage::new());
    let leader = open(&leader_storage, keeping());
    let users = leader.keyspace("users").unwrap();
    let orders = leader.keyspace("orders").unwrap();
    for i in 0..300u32 {
        let mut b = Batch::new();
        b.put(&users, format!("u{i}").as_bytes(), b"x").unwrap();
        b.put(&orders, format!("o{i}").as_bytes(), &i.to_le_bytes())
            .unwrap();
        if i % 7 == 0 {
            b.delete(&users, format!("u{}", i / 2).as_bytes()).unwrap();
        }
        if i == 200 {
            b.delete_range(&orders, b"o1", b"o2").unwrap();
        }
        leader.write(&b, WriteOptions::default()).unwrap();
    }
    leader
        .queue("jobs", QueueOptions::default())
        .unwrap()
        .push(b"j", shaledb::queue::PushOptions::default())
        .unwrap();
    let changes = all(&leader, 1);

    let follower_storage = Arc::new(MemoryStorage::new());
    let follower = open(&follower_storage, follower_options());
    // A gap: the first change is missing.
    match follower.apply_change(&changes[1], None) {
        Err(Error::ChangeGap { expected, got }) => {
            assert_eq!((expected, got), (1, changes[1].seq()))
        }
        other => panic!("expected ChangeGap, got {other:?}"),
    }
    for (i, c) in changes.iter().enumerate() {
        let wire = Change::from_bytes(&c.to_bytes()).unwrap();
        assert_eq!(
            follower.apply_change(&wire, Some(wire.seq())).unwrap(),
            Applied::Applied {
                last_seq: c.last_seq()
            }
        );
        if i == 100 {
            // Redelivered: skipped.
            assert_eq!(
                follower.apply_change(&changes[50], None).unwrap(),
                Applied::AlreadyApplied {
                    last_seq: c.last_seq()
                }
            );
        }
    }
    assert_eq!(follower.sequence(), leader.sequence());
    assert_eq!(contents(&follower), contents(&leader));
    // The follower's own feed continues the leader's, seq for seq.
    let mirrored = all(&follower, 1);
    assert_eq!(
        mirrored.iter().map(Change::seq).collect::<Vec<_>>(),
        changes.iter().map(Change::seq).collect::<Vec<_>>()
    );
    assert_eq!(follower.put(b"k", b"v").unwrap_err().code(), "READ_ONLY");
    let mut batch = Batch::new();
    batch.put(&follower.default_keyspace(), b"k", b"v").unwrap();
    let sync = WriteOptions::default();
    assert_eq!(
        follower.write(&batch, sync).unwrap_err().code(),
        "READ_ONLY"
    );
    // An empty batch writes nothing: committed on a follower as an empty write is.
    follower.write(&Batch::new(), sync).unwrap();
    assert_eq!(
        leader.apply_change(&changes[0], None).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    // Reopened, the follower still knows where it is.
    follower.close().unwrap();
    let follower = open(&follower_storage, follower_options());
    assert_eq!(follower.sequence(), leader.sequence());
    assert_eq!(contents(&follower), contents(&leader));
}

#[test]
fn a_follower_opened_from_a_checkpoint_continues_with_the_next_change() {
    let leader_storage = Arc::new(MemoryStorage::new());
    let leader = open(&leader_storage, keeping());
    let users = leader.keyspace("users").unwrap();
    for i in 0..500u32 {
        users.put(format!("u{i:04}").as_bytes(), b"before").unwrap();
    }
    leader.ack_changes("nats", 0).unwrap();
    let copy = Arc::new(MemoryStorage::new());
    let at = leader.checkpoint_to(copy.clone()).unwrap();
    assert_eq!(at, leader.sequence());
    for i in 0..500u32 {
        users.put(format!("u{i:04}").as_bytes(), b"after").unwrap();
    }
    let follower = open(&copy, follower_options());
    assert_eq!(follower.sequence(), at);
    assert_eq!(
        follower.change_cursors(),
        vec![],
        "cursors stay with the leader"
    );
    for c in all(&leader, at + 1) {
        follower.apply_change(&c, None).unwrap();
    }
    assert_eq!(contents(&follower), contents(&leader));
}

/// Regression: a cursor acknowledged past unsynced batches survived a power loss that took
/// them; the database then reused their sequence numbers and the cursor's reader skipped the
/// new batches. Acknowledging now syncs the log first.
#[test]
fn a_cursor_never_passes_a_batch_that_a_power_loss_takes() {
    use shaledb::storage::faulty::FaultyStorage;
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    for i in 0..10u32 {
        db.put(format!("k{i}").as_bytes(), b"unsynced").unwrap();
    }
    let last = all(&db, 1).last().unwrap().last_seq();
    db.ack_changes("fwd", last).unwrap();
    // The process dies at its next I/O call (the close's sync), then the power goes.
    storage.arm(1, shaledb::storage::faulty::Fault::Crash);
    drop(db);
    storage.reset_faults();
    storage.crash().unwrap();
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    assert_eq!(db.change_cursor("fwd"), Some(last));
    assert!(
        db.sequence() >= last,
        "the acknowledged batches are durable"
    );
    assert_eq!(db.get(b"k9").unwrap(), Some(b"unsynced".to_vec()));
}

#[test]
fn retention_by_age_keeps_flushed_batches_until_they_are_old_enough() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let storage = Arc::new(MemoryStorage::new());
    let mut o = options();
    o.change_retention = Some(ChangeRetention::age_ms(60_000));
    let now = Arc::new(AtomicU64::new(1_000_000));
    let clock = now.clone();
    o.clock = Clock::from_fn(move || clock.load(Ordering::SeqCst));
    let db = open(&storage, o);
    for i in 0..1_000u32 {
        db.put(format!("k{i:05}").as_bytes(), &[3u8; 64]).unwrap();
    }
    db.flush().unwrap();
    let changes = all(&db, 1);
    assert_eq!(changes.len(), 1_000, "sealed under a minute ago: kept");
    assert_eq!(changes[0].time(), Some(1_000_000));
    now.fetch_add(61_000, Ordering::SeqCst);
    db.put(b"later", b"x").unwrap();
    db.flush().unwrap();
    assert!(matches!(db.changes(1), Err(Error::ChangesTruncated { .. })));
}

#[test]
fn retention_by_age_keeps_every_batch_through_reopens_flushes_and_compactions() {
    // Issue 22: an hour's retention lost the first rounds' logs after four reopens (the
    // WebAssembly clock was given after the open, so the open's deletion pass measured logs
    // sealed before it from time 0).
    use std::sync::atomic::{AtomicU64, Ordering};
    let storage = Arc::new(MemoryStorage::new());
    let now = Arc::new(AtomicU64::new(1_700_000_000_000));
    let mut written = 0u64;
    for round in 0..8u32 {
        let mut o = options();
        o.l0_compaction_trigger = 2;
        o.change_retention = Some(ChangeRetention::age_ms(3_600_000));
        let clock = now.clone();
        o.clock = Clock::from_fn(move || clock.load(Ordering::SeqCst));
        let db = open(&storage, o);
        for i in 0..5u32 {
            db.put(format!("k{i}").as_bytes(), format!("v{round}").as_bytes())
                .unwrap();
            written += 1;
        }
        db.flush().unwrap();
        while db
            .maintain(shaledb::db::Budget { bytes: 1 << 20 })
            .unwrap()
            .more
        {}
        now.fetch_add(300, Ordering::SeqCst);
        let changes = all(&db, 1);
        let ops: usize = changes.iter().map(|c| c.ops().count()).sum();
        assert_eq!(
            ops as u64, written,
            "round {round}: every put is in the feed"
        );
        db.close().unwrap();
    }
}

/// A feed read at its tip after every commit (as a watch reads it), over preallocated logs
/// that switch many times, yields every batch exactly once and in order: its reader, kept
/// between reads, sees what was written since.
#[test]
fn a_feed_read_at_the_tip_after_every_commit_yields_every_batch_once_in_order() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, keeping_preallocated());
    let mut feed = db.changes(1).unwrap();
    let mut next = 1;
    for i in 0..3000u32 {
        db.put(format!("k{i:05}").as_bytes(), &[7; 100]).unwrap();
        let mut read = 0;
        while let Some(change) = feed.try_next().unwrap() {
            assert_eq!(change.seq(), next, "put {i}: the next batch, in order");
            next = change.last_seq() + 1;
            read += 1;
        }
        assert_eq!(read, 1, "put {i}: its commit, read once");
    }
    assert_eq!(next, db.sequence() + 1);
    let logs = storage
        .list()
        .unwrap()
        .iter()
        .filter(|n| n.starts_with("wal-"))
        .count();
    assert!(logs > 3, "the logs switched ({logs} kept)");
}

/// A new feed made at the position where another feed waits at the tip (as a second reader at
/// the same position does through the WebAssembly bindings) yields the same batches, starting
/// where that feed stood, across log switches.
#[test]
fn a_new_feed_at_a_waiting_feeds_position_yields_the_same_batches() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, keeping_preallocated());
    let mut first = db.changes(1).unwrap();
    assert!(first.try_next().unwrap().is_none());
    for i in 0..2000u32 {
        let position = first.position();
        db.put(format!("k{i:05}").as_bytes(), &[7; 100]).unwrap();
        let seen: Vec<u64> = first.by_ref().map(|c| c.unwrap().seq()).collect();
        let again: Vec<u64> = db
            .changes(position)
            .unwrap()
            .map(|c| c.unwrap().seq())
            .collect();
        assert_eq!(again, seen, "put {i}: a feed made at position {position}");
        assert_eq!(seen.len(), 1, "put {i}: its commit");
    }
}
