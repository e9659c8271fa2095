//! A log sealed at a memtable switch is not synced there: the next log's syncs sync it first.
//! After a power loss, writes that follow a sealed log's lost tail were never synced and are
//! dropped with it (recovery keeps a prefix of the writes); a synced write after a switch
//! survives with every write before it; a synced byte past a torn log is corruption.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::Arc;

use shaledb::file_names::wal_numbers;
use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::{Db, Error, Options, WriteOptions};

fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.max_immutable_memtables = 4;
    o.background_thread = false;
    o.wal_preallocation = 16 * 1024;
    o
}

fn key(i: u64) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    vec![(i % 251) as u8; 200]
}

/// Unsynced puts of keys `from..` until the memtable has switched `switches` more times (each
/// switch creates a log); returns the next key.
fn write_until_switched(db: &Db, storage: &dyn Storage, from: u64, switches: usize) -> u64 {
    let target = logs(storage).len() + switches;
    let mut i = from;
    while logs(storage).len() < target {
        db.put(&key(i), &value(i)).unwrap();
        i += 1;
    }
    i
}

/// The numbers of the logs in `storage`, ascending.
fn logs(storage: &dyn Storage) -> Vec<u64> {
    wal_numbers(&storage.list().unwrap())
}

fn read_all(storage: &dyn Storage, name: &str) -> Vec<u8> {
    let f = storage.open(name, OpenMode::Read).unwrap();
    let mut buf = vec![0u8; f.size().unwrap() as usize];
    f.read_exact_at(0, &mut buf).unwrap();
    buf
}

fn write_all(storage: &dyn Storage, name: &str, bytes: &[u8]) {
    let f = storage.open(name, OpenMode::Create).unwrap();
    f.write_at(0, bytes).unwrap();
    f.sync().unwrap();
}

/// The keys `0..n` the reopened database holds, as a count of the leading ones; panics if a
/// later key is present after a missing one (not a prefix).
fn prefix_len(db: &Db, n: u64) -> u64 {
    let held: Vec<bool> = (0..n).map(|i| db.get(&key(i)).unwrap().is_some()).collect();
    let len = held.iter().take_while(|&&h| h).count();
    assert!(
        held.iter().skip(len).all(|&h| !h),
        "not a prefix: key {len} is missing but a later one survived"
    );
    len as u64
}

#[test]
fn a_memtable_switch_syncs_no_sealed_log() {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    let syncs = storage.syncs();
    write_until_switched(&db, &storage, 0, 1);
    // The only file sync is the new log's creation (its header).
    assert_eq!(storage.syncs() - syncs, 1);
}

#[test]
fn a_synced_write_after_switches_makes_the_sealed_logs_durable_first() {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    let next = write_until_switched(&db, &storage, 0, 2);
    db.put_opt(&key(next), &value(next), WriteOptions { sync: true })
        .unwrap();
    storage.crash().unwrap();
    drop(db);
    storage.reset_faults();
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    assert_eq!(
        prefix_len(&db, next + 1),
        next + 1,
        "every write up to the synced one"
    );
}

#[test]
fn writes_after_a_sealed_logs_lost_tail_are_dropped_with_it() {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    let next = write_until_switched(&db, &storage, 0, 1);
    let more = next + 100;
    for i in next..more {
        db.put(&key(i), &value(i)).unwrap();
    }
    let numbers = logs(&storage);
    let [sealed, live] = numbers[..] else {
        panic!("two logs expected: {numbers:?}")
    };
    let names = [sealed, live].map(shaledb::write::wal::wal_file_name);
    let [old, new] = names.clone().map(|n| read_all(&storage, &n));
    storage.crash().unwrap();
    drop(db);
    storage.reset_faults();
    // The power loss kept the live log's pages whole but only the first half of the sealed
    // log's: never-synced writes after lost ones.
    write_all(&storage, &names[0], &old[..old.len() / 2]);
    write_all(&storage, &names[1], &new);
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    let kept = prefix_len(&db, more);
    assert!(
        kept > 0 && kept < next,
        "kept {kept} of the sealed log's {next}"
    );
    assert!(
        !storage.exists(&names[1]).unwrap(),
        "the log whose writes were dropped is deleted"
    );
    drop(db);
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    assert_eq!(prefix_len(&db, more), kept, "the next open agrees");
}

/// Regression (found by the JavaScript fault sweep): a power loss may keep a sealed log's
/// records but not its last size change, cutting it at a record boundary before its sealed
/// record: it then ends cleanly without a seal, and the next log's writes, never synced, were
/// taken for a lost link (corruption) instead of being dropped with the lost tail.
#[test]
fn writes_after_a_sealed_log_cut_before_its_seal_are_dropped_with_it() {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let mut o = options();
    o.wal_preallocation = 0;
    let db = Db::open_storage(Arc::new(storage.clone()), o.clone()).unwrap();
    let first = shaledb::write::wal::wal_file_name(logs(&storage)[0]);
    // The first log as it was before the put that switched: whole records, no sealed one.
    let mut before_seal = Vec::new();
    let mut i = 0;
    while logs(&storage).len() < 2 {
        before_seal = read_all(&storage, &first);
        db.put(&key(i), &value(i)).unwrap();
        i += 1;
    }
    let more = i + 100;
    for i in i..more {
        db.put(&key(i), &value(i)).unwrap();
    }
    let live = shaledb::write::wal::wal_file_name(logs(&storage)[1]);
    let new = read_all(&storage, &live);
    storage.crash().unwrap();
    drop(db);
    storage.reset_faults();
    write_all(&storage, &first, &before_seal);
    write_all(&storage, &live, &new);
    let db = Db::open_storage(Arc::new(storage.clone()), o).unwrap();
    assert_eq!(
        prefix_len(&db, more),
        i - 1,
        "the first log's writes, none after"
    );
}

#[test]
fn a_synced_write_past_a_torn_sealed_log_is_corruption() {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    let next = write_until_switched(&db, &storage, 0, 1);
    // Two synced writes: the second's record says the first one's bytes were synced.
    for i in next..next + 2 {
        db.put_opt(&key(i), &value(i), WriteOptions { sync: true })
            .unwrap();
    }
    let numbers = logs(&storage);
    let sealed = shaledb::write::wal::wal_file_name(numbers[0]);
    let old = read_all(&storage, &sealed);
    drop(db);
    // Synced data of the sealed log damaged (cut short) afterwards.
    write_all(&storage, &sealed, &old[..old.len() / 2]);
    match Db::open_storage(Arc::new(storage.clone()), options()) {
        Err(Error::Corruption { .. }) => {}
        other => panic!("expected corruption, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_log_kept_for_the_change_feed_is_synced_whole_before_it_is_let_go() {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let mut o = options();
    o.change_retention = Some(shaledb::ChangeRetention::age_ms(3_600_000));
    let db = Db::open_storage(Arc::new(storage.clone()), o.clone()).unwrap();
    for i in 0..300 {
        db.put(&key(i), &value(i)).unwrap();
    }
    // Sealed (no sync) and flushed: its writes are in a table, the log is kept for the feed.
    db.flush().unwrap();
    storage.crash().unwrap();
    drop(db);
    storage.reset_faults();
    let db = Db::open_storage(Arc::new(storage.clone()), o).unwrap();
    let seqs: Vec<u64> = db.changes(1).unwrap().map(|c| c.unwrap().seq()).collect();
    assert_eq!(seqs.len(), 300, "every change");
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order");
}
