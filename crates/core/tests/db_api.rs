//! Behaviour of the public `Db` API: reads, writes, iterators, keyspaces, batches, snapshots,
//! transactions, persistence, flush and compaction, checkpoints, locking and closing.
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::sync::Arc;

use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Batch, Db, Error, IterOptions, Options, WriteOptions};

fn small() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.background_thread = false;
    o.target_file_size = 256 * 1024;
    o.base_level_size = 512 * 1024;
    o
}

fn open(storage: &Arc<dyn Storage>) -> Db {
    Db::open_storage(storage.clone(), small()).unwrap()
}

fn mem() -> Arc<dyn Storage> {
    Arc::new(MemoryStorage::new())
}

fn all(db: &Db, options: IterOptions) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iter(options)
        .unwrap()
        .collect::<shaledb::Result<Vec<_>>>()
        .unwrap()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

#[test]
fn seal_memtable_leaves_the_flush_to_maintain_and_the_wal_short() {
    let storage = mem();
    let mut options = small();
    options.memtable_size = 1 << 20;
    let db = Db::open_storage(storage.clone(), options.clone()).unwrap();
    for i in 0..2000 {
        db.put(&key(i), b"value").unwrap();
    }
    let before = db.stats().memtable_bytes;
    db.seal_memtable().unwrap();
    assert_eq!(
        db.get(&key(7)).unwrap(),
        Some(b"value".to_vec()),
        "sealed keys still read"
    );
    while db
        .maintain(shaledb::db::Budget { bytes: 1 << 20 })
        .unwrap()
        .more
    {}
    let stats = db.stats();
    assert!(
        stats.memtable_bytes < before / 10,
        "{} of {before} bytes left",
        stats.memtable_bytes
    );
    assert!(stats.level_files.iter().any(|&n| n > 0), "no table written");
    db.seal_memtable().unwrap(); // an empty memtable: nothing to do
    db.close().unwrap();
    let db = Db::open_storage(storage, options).unwrap();
    assert_eq!(all(&db, IterOptions::default()).len(), 2000);
    db.close().unwrap();
}

#[test]
fn put_get_delete_round_trip() {
    let db = open(&mem());
    assert_eq!(db.get(b"a").unwrap(), None);
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"").unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), Some(Vec::new()));
    db.put(b"a", b"2").unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"2".to_vec()));
    db.delete(b"a").unwrap();
    assert_eq!(db.get(b"a").unwrap(), None);
}

#[test]
fn data_survives_reopen_from_the_wal_and_from_tables() {
    let storage = mem();
    let db = open(&storage);
    for i in 0..3000 {
        db.put(&key(i), format!("v{i}").as_bytes()).unwrap();
    }
    db.delete(&key(7)).unwrap();
    db.close().unwrap();
    let db = open(&storage);
    assert_eq!(db.get(&key(7)).unwrap(), None);
    assert_eq!(db.get(&key(2999)).unwrap(), Some(b"v2999".to_vec()));
    db.flush().unwrap();
    db.put(&key(1), b"new").unwrap();
    drop(db);
    let db = open(&storage);
    assert_eq!(db.get(&key(1)).unwrap(), Some(b"new".to_vec()));
    assert_eq!(db.get(&key(2)).unwrap(), Some(b"v2".to_vec()));
    assert_eq!(all(&db, IterOptions::default()).len(), 2999);
}

#[test]
fn iterators_honour_bounds_prefix_and_direction() {
    let db = open(&mem());
    for k in ["a", "b", "ba", "bb", "c", "d"] {
        db.put(k.as_bytes(), k.as_bytes()).unwrap();
    }
    let keys = |o: IterOptions| -> Vec<String> {
        all(&db, o)
            .into_iter()
            .map(|(k, _)| String::from_utf8(k).unwrap())
            .collect()
    };
    assert_eq!(
        keys(IterOptions::default()),
        ["a", "b", "ba", "bb", "c", "d"]
    );
    assert_eq!(keys(IterOptions::range("b", "c")), ["b", "ba", "bb"]);
    assert_eq!(keys(IterOptions::prefix(b"b".to_vec())), ["b", "ba", "bb"]);
    assert_eq!(
        keys(IterOptions::prefix(b"b".to_vec()).reversed()),
        ["bb", "ba", "b"]
    );
    assert_eq!(
        keys(IterOptions::default().reversed()),
        ["d", "c", "bb", "ba", "b", "a"]
    );
    let mut it = db.iter(IterOptions::default()).unwrap();
    it.seek(b"bab").unwrap();
    assert_eq!(it.key(), b"bb");
    let mut it = db.iter(IterOptions::default().reversed()).unwrap();
    it.seek(b"bab").unwrap();
    assert_eq!(it.key(), b"ba");
}

#[test]
fn keyspaces_are_separate_and_a_batch_across_them_is_atomic() {
    let storage = mem();
    let db = open(&storage);
    let users = db.keyspace("users").unwrap();
    let events = db.keyspace("events").unwrap();
    let mut batch = Batch::new();
    batch.put(&users, b"1", b"ada").unwrap();
    batch.put(&events, b"1", b"signup").unwrap();
    db.write(&batch, WriteOptions::SYNC).unwrap();
    assert_eq!(users.get(b"1").unwrap(), Some(b"ada".to_vec()));
    assert_eq!(events.get(b"1").unwrap(), Some(b"signup".to_vec()));
    assert_eq!(db.get(b"1").unwrap(), None);
    assert_eq!(users.iter(IterOptions::default()).unwrap().count(), 1);
    drop((users, events));
    db.close().unwrap();
    let db = open(&storage);
    let users = db.keyspace("users").unwrap();
    assert_eq!(users.get(b"1").unwrap(), Some(b"ada".to_vec()));
    assert_eq!(
        db.keyspace("events").unwrap().get(b"1").unwrap(),
        Some(b"signup".to_vec())
    );
}

/// Regression: an application could open ShaleDB's own keyspaces (the browser's applied-write
/// records) by name; names starting with NUL are now reserved, in the core.
#[test]
fn reserved_keyspace_names_are_refused_to_applications_and_open_only_as_reserved() {
    let storage = mem();
    let db = open(&storage);
    let own = "\0shaledb:records";
    assert!(matches!(db.keyspace(own), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        db.reserved_keyspace("records"),
        Err(Error::InvalidArgument(_))
    ));
    db.reserved_keyspace(own).unwrap().put(b"k", b"v").unwrap();
    db.keyspace("a\0b").unwrap().put(b"k", b"user").unwrap(); // NUL elsewhere is fine
    db.close().unwrap();
    let db = open(&storage);
    assert!(matches!(db.keyspace(own), Err(Error::InvalidArgument(_))));
    let reserved = db.reserved_keyspace(own).unwrap();
    assert_eq!(reserved.get(b"k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(
        reserved.name().chars().next(),
        Some(shaledb::RESERVED_KEYSPACE_PREFIX)
    );
}

#[test]
fn delete_range_hides_older_keys_only() {
    let db = open(&mem());
    for i in 0..100 {
        db.put(&key(i), b"old").unwrap();
    }
    db.flush().unwrap();
    db.delete_range(&key(10), &key(20)).unwrap();
    db.put(&key(15), b"new").unwrap();
    assert_eq!(db.get(&key(9)).unwrap(), Some(b"old".to_vec()));
    assert_eq!(db.get(&key(10)).unwrap(), None);
    assert_eq!(db.get(&key(15)).unwrap(), Some(b"new".to_vec()));
    assert_eq!(db.get(&key(20)).unwrap(), Some(b"old".to_vec()));
    assert_eq!(all(&db, IterOptions::default()).len(), 91);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(&key(12)).unwrap(), None);
    assert_eq!(db.get(&key(15)).unwrap(), Some(b"new".to_vec()));
    assert_eq!(all(&db, IterOptions::default()).len(), 91);
}

#[test]
fn snapshots_see_the_past_across_flush_and_compaction() {
    let db = open(&mem());
    db.put(b"k", b"v1").unwrap();
    let snap = db.snapshot();
    db.put(b"k", b"v2").unwrap();
    db.delete(b"gone").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let ks = db.default_keyspace();
    assert_eq!(snap.get(&ks, b"k").unwrap(), Some(b"v1".to_vec()));
    assert_eq!(db.get(b"k").unwrap(), Some(b"v2".to_vec()));
    let seen: Vec<_> = snap
        .iter(&ks, IterOptions::default())
        .unwrap()
        .collect::<shaledb::Result<_>>()
        .unwrap();
    assert_eq!(seen, vec![(b"k".to_vec(), b"v1".to_vec())]);
}

#[test]
fn an_iterator_does_not_see_later_writes() {
    let db = open(&mem());
    db.put(b"a", b"1").unwrap();
    let it = db.iter(IterOptions::default()).unwrap();
    db.put(b"b", b"2").unwrap();
    assert_eq!(it.count(), 1);
}

#[test]
fn transactions_commit_or_fail_with_conflict() {
    let db = open(&mem());
    let ks = db.default_keyspace();
    db.put(b"counter", b"0").unwrap();
    let mut t1 = db.transaction();
    let mut t2 = db.transaction();
    let v1 = t1.get(&ks, b"counter").unwrap().unwrap();
    let v2 = t2.get(&ks, b"counter").unwrap().unwrap();
    assert_eq!(v1, v2);
    t1.put(&ks, b"counter", b"1").unwrap();
    assert_eq!(t1.get(&ks, b"counter").unwrap(), Some(b"1".to_vec()));
    t2.put(&ks, b"counter", b"1").unwrap();
    t1.commit(WriteOptions::default()).unwrap();
    assert!(matches!(
        t2.commit(WriteOptions::default()),
        Err(Error::Conflict)
    ));
    assert_eq!(db.get(b"counter").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn concurrent_read_modify_write_transactions_lose_no_increment() {
    let db = open(&mem());
    db.put(b"n", b"0").unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                let ks = db.default_keyspace();
                for _ in 0..50 {
                    loop {
                        let mut t = db.transaction();
                        let n: u32 = String::from_utf8(t.get(&ks, b"n").unwrap().unwrap())
                            .unwrap()
                            .parse()
                            .unwrap();
                        t.put(&ks, b"n", (n + 1).to_string().as_bytes()).unwrap();
                        match t.commit(WriteOptions::default()) {
                            Ok(()) => break,
                            Err(Error::Conflict) => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(db.get(b"n").unwrap(), Some(b"200".to_vec()));
}

#[test]
fn many_writes_flush_and_compact_into_levels() {
    let storage = mem();
    let db = open(&storage);
    for round in 0..4u32 {
        for i in 0..4000 {
            db.put(
                &key(i),
                format!("{round}-{i}-{}", "x".repeat(40)).as_bytes(),
            )
            .unwrap();
        }
        while db
            .maintain(shaledb::db::Budget { bytes: 1 << 20 })
            .unwrap()
            .more
        {}
    }
    let stats = db.stats();
    assert!(stats.level_files.iter().sum::<usize>() > 0, "{stats:?}");
    assert!(stats.write_amplification > 1.0, "{stats:?}");
    for i in (0..4000).step_by(97) {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(format!("3-{i}-{}", "x".repeat(40)).into_bytes())
        );
    }
    assert_eq!(all(&db, IterOptions::default()).len(), 4000);
    db.compact_range(None, None).unwrap();
    assert_eq!(all(&db, IterOptions::default().reversed()).len(), 4000);
    drop(db);
    let db = open(&storage);
    assert_eq!(all(&db, IterOptions::default()).len(), 4000);
}

#[test]
fn checkpoint_is_a_consistent_openable_copy() {
    let db = open(&mem());
    for i in 0..500 {
        db.put(&key(i), b"v").unwrap();
    }
    let dest = mem();
    db.checkpoint_to(dest.clone()).unwrap();
    db.put(&key(9999), b"after").unwrap();
    let copy = open(&dest);
    assert_eq!(all(&copy, IterOptions::default()).len(), 500);
    assert_eq!(copy.get(&key(9999)).unwrap(), None);
    assert!(matches!(
        db.checkpoint_to(dest.clone()),
        Err(Error::AlreadyExists { .. })
    ));
}

#[test]
fn a_second_open_of_one_directory_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    assert!(matches!(
        Db::open(dir.path(), small()),
        Err(Error::Locked { .. })
    ));
    db.close().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    drop(db);
    Db::open(dir.path(), small()).unwrap();
}

#[test]
fn a_closed_database_refuses_use() {
    let db = open(&mem());
    let ks = db.default_keyspace();
    db.clone().close().unwrap();
    assert!(matches!(ks.put(b"a", b"b"), Err(Error::Closed(_))));
    assert!(matches!(db.get(b"a"), Err(Error::Closed(_))));
}

#[test]
fn oversize_keys_and_values_are_invalid_arguments() {
    let mut o = small();
    o.max_value_size = 1000;
    let db = Db::open_storage(mem(), o).unwrap();
    assert!(matches!(
        db.put(&vec![0u8; 64 * 1024 + 1], b"v"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        db.put(b"k", &[0u8; 1001]),
        Err(Error::InvalidArgument(_))
    ));
    db.put(&vec![7u8; 64 * 1024], &[1u8; 1000]).unwrap();
    assert!(matches!(
        db.delete_range(b"b", b"a"),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn the_background_thread_flushes_and_compacts_by_itself() {
    let mut o = small();
    o.background_thread = true;
    let db = Db::open_storage(mem(), o).unwrap();
    for i in 0..20_000 {
        db.put(&key(i % 5000), &[b'x'; 64]).unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while db.stats().level_files.iter().skip(1).sum::<usize>() == 0 {
        assert!(std::time::Instant::now() < deadline, "{:?}", db.stats());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(all(&db, IterOptions::default()).len(), 5000);
}

#[test]
fn reads_never_miss_acknowledged_writes_while_memtables_switch_flush_and_compact() {
    // On a real disk a memtable switch spends milliseconds in fsync, between reading the view
    // and installing the next one: a flush finishing meanwhile must not be undone.
    let dir = tempfile::tempdir().unwrap();
    let mut o = small();
    o.background_thread = true;
    let db = Db::open(dir.path(), o).unwrap();
    let written = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let writer = {
        let (db, written) = (db.clone(), written.clone());
        std::thread::spawn(move || {
            for i in 0..30_000u32 {
                db.put(&key(i), &[b'v'; 48]).unwrap();
                written.store(i + 1, std::sync::atomic::Ordering::Release);
            }
        })
    };
    let flusher = {
        let db = db.clone();
        std::thread::spawn(move || {
            for _ in 0..20 {
                db.flush().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        })
    };
    let mut probe = 0u32;
    while !writer.is_finished() {
        let n = written.load(std::sync::atomic::Ordering::Acquire);
        if n > 0 {
            probe = (probe.wrapping_mul(2_654_435_761).wrapping_add(1)) % n;
            assert!(
                db.get(&key(probe)).unwrap().is_some(),
                "key {probe} of {n} vanished"
            );
        }
    }
    writer.join().unwrap();
    flusher.join().unwrap();
    assert_eq!(all(&db, IterOptions::default()).len(), 30_000);
}

#[test]
fn compact_range_leaves_no_obsolete_table_file_behind() {
    let storage = mem();
    let db = open(&storage);
    for round in 0..3u32 {
        for i in 0..3000 {
            db.put(&key(i), format!("{round}{}", "y".repeat(60)).as_bytes())
                .unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None, None).unwrap();
    let live: usize = db.stats().level_files.iter().sum();
    let on_disk = storage
        .list()
        .unwrap()
        .iter()
        .filter(|n| n.ends_with(".sst"))
        .count();
    assert_eq!(on_disk, live);
}

#[test]
fn an_owned_batch_is_written_like_a_borrowed_one_and_refused_by_another_database() {
    let db = Db::open_in_memory(Options::default()).unwrap();
    let events = db.keyspace("events").unwrap();
    let mut batch = Batch::new();
    batch
        .put(&db.default_keyspace(), b"a", b"1")
        .unwrap()
        .put(&events, b"e", b"2")
        .unwrap();
    db.write_owned(batch, WriteOptions::default()).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(events.get(b"e").unwrap(), Some(b"2".to_vec()));
    let other = Db::open_in_memory(Options::default()).unwrap();
    let mut foreign = Batch::new();
    foreign.put(&events, b"x", b"y").unwrap();
    let e = other
        .write_owned(foreign, WriteOptions::default())
        .unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
}
