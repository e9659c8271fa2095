//! Deferred WAL syncs through the database (the host syncs the log itself: Node's event loop
//! hands `fdatasync` to libuv's pool): a synced write is visible only after the host's sync,
//! later writes queue behind it, and a failed sync poisons the database.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly on unexpected errors"
)]

use std::sync::Arc;

use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Db, Options, WriteOptions};

const SYNC: WriteOptions = WriteOptions { sync: true };

fn open(storage: &Arc<FaultyStorage>) -> Db {
    let db = Db::open_storage(storage.clone(), Options::default()).unwrap();
    db.set_deferred_sync(true).unwrap();
    db
}

#[test]
fn a_synced_write_is_visible_after_the_host_sync_and_later_writes_wait_behind_it() {
    let storage = Arc::new(FaultyStorage::new(Arc::new(MemoryStorage::new())));
    let db = open(&storage);
    let (visible, _) = db.commit_seqs();
    db.put_opt(b"a", b"1", SYNC).unwrap();
    db.put(b"b", b"2").unwrap();
    let (v, last) = db.commit_seqs();
    assert_eq!((v, last), (visible, visible + 2));
    assert_eq!(db.get(b"a").unwrap(), None, "not visible before its sync");
    assert_eq!(
        db.get(b"b").unwrap(),
        None,
        "queued behind the synced write"
    );
    let file = db
        .begin_wal_sync()
        .unwrap()
        .expect("the synced write waits for a sync");
    let result = file.sync();
    db.finish_wal_sync(result).unwrap();
    assert_eq!(db.commit_seqs(), (last, last));
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    assert!(db.begin_wal_sync().unwrap().is_none());
    db.close().unwrap();
}

#[test]
fn a_failed_host_sync_poisons_the_database_and_its_writes_never_become_visible() {
    let storage = Arc::new(FaultyStorage::new(Arc::new(MemoryStorage::new())));
    let db = open(&storage);
    db.put_opt(b"a", b"1", SYNC).unwrap();
    let file = db.begin_wal_sync().unwrap().unwrap();
    storage.fail_next_sync();
    let e = db.finish_wal_sync(file.sync()).unwrap_err();
    assert_eq!(e.code(), "POISONED");
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.put(b"c", b"3").unwrap_err().code(), "POISONED");
    assert_eq!(db.begin_wal_sync().unwrap_err().code(), "POISONED");
}

#[test]
fn closing_runs_a_waiting_deferred_sync_so_the_write_survives_a_power_loss() {
    let storage = Arc::new(FaultyStorage::new(Arc::new(MemoryStorage::new())));
    let db = open(&storage);
    db.put_opt(b"a", b"1", SYNC).unwrap();
    db.close().unwrap();
    storage.crash().unwrap();
    let db = Db::open_storage(storage.clone(), Options::default()).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn a_deferred_synced_write_after_a_switch_has_the_host_sync_the_sealed_log_first() {
    let storage = Arc::new(FaultyStorage::new(Arc::new(MemoryStorage::new())));
    let mut options = Options::default();
    options.memtable_size = 64 * 1024;
    options.background_thread = false;
    let db = Db::open_storage(storage.clone(), options.clone()).unwrap();
    db.set_deferred_sync(true).unwrap();
    let logs = |s: &FaultyStorage| {
        s.list()
            .unwrap()
            .into_iter()
            .filter(|n| n.starts_with("wal-"))
            .collect::<Vec<_>>()
    };
    let mut n = 0u32;
    while logs(&storage).len() < 2 {
        db.put(&n.to_be_bytes(), &[7; 200]).unwrap();
        n += 1;
    }
    db.put_opt(b"synced", b"1", SYNC).unwrap();
    let first = db.begin_wal_sync().unwrap().expect("the sealed log first");
    assert!(first.name().starts_with("wal-"));
    db.finish_wal_sync(first.sync()).unwrap();
    assert_eq!(
        db.get(b"synced").unwrap(),
        None,
        "its own log is not synced yet"
    );
    let second = db.begin_wal_sync().unwrap().expect("then the live log");
    assert_ne!(second.name(), first.name());
    db.finish_wal_sync(second.sync()).unwrap();
    assert_eq!(db.get(b"synced").unwrap().as_deref(), Some(&b"1"[..]));
    assert!(db.begin_wal_sync().unwrap().is_none());
    // Every write before the synced one survives a power loss.
    storage.crash().unwrap();
    drop(db);
    storage.reset_faults();
    let db = Db::open_storage(storage.clone(), options).unwrap();
    for i in 0..n {
        assert!(
            db.get(&i.to_be_bytes()).unwrap().is_some(),
            "write {i} lost"
        );
    }
    assert_eq!(db.get(b"synced").unwrap().as_deref(), Some(&b"1"[..]));
}
