//! Read-only opens: no lock, nothing written, the writer's state as of the open (its unflushed
//! writes included), caught up on request while the writer goes on writing, flushing and
//! compacting; every write refused with READ_ONLY.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shaledb::queue::QueueOptions;
use shaledb::{Batch, Db, IterOptions, Options, WriteOptions};

fn writer_options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.l0_compaction_trigger = 2;
    o.target_file_size = 32 * 1024;
    o.base_level_size = 64 * 1024;
    o
}

fn read_only() -> Options {
    let mut o = Options::default();
    o.read_only = true;
    o
}

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_read_only_open_shares_a_held_database_and_sees_its_unflushed_writes() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), writer_options()).unwrap();
    writer.put(b"a", b"1").unwrap();
    writer.keyspace("users").unwrap().put(b"u", b"ann").unwrap();
    assert_eq!(
        Db::open(dir.path(), writer_options()).unwrap_err().code(),
        "LOCKED",
        "a second writer is still refused"
    );
    let reader = Db::open(dir.path(), read_only()).unwrap();
    let second = Db::open(dir.path(), read_only()).unwrap();
    assert_eq!(reader.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(
        second.keyspace("users").unwrap().get(b"u").unwrap(),
        Some(b"ann".to_vec())
    );
    assert_eq!(reader.sequence(), writer.sequence());
}

#[test]
fn catch_up_sees_what_the_writer_did_since_and_old_reads_keep_their_state() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), writer_options()).unwrap();
    writer.put(b"k", b"old").unwrap();
    let reader = Db::open(dir.path(), read_only()).unwrap();
    let snapshot = reader.snapshot();
    for i in 0..3_000u32 {
        writer
            .put(format!("n{i:05}").as_bytes(), &[9u8; 100])
            .unwrap();
    }
    writer.put(b"k", b"new").unwrap();
    writer.flush().unwrap();
    writer.compact_range(None, None).unwrap();
    writer.put(b"tail", b"in the log").unwrap();
    assert_eq!(
        reader.get(b"k").unwrap(),
        Some(b"old".to_vec()),
        "as of the open"
    );
    reader.catch_up().unwrap();
    assert_eq!(reader.get(b"k").unwrap(), Some(b"new".to_vec()));
    assert_eq!(reader.get(b"tail").unwrap(), Some(b"in the log".to_vec()));
    assert_eq!(
        snapshot.get(&reader.default_keyspace(), b"k").unwrap(),
        Some(b"old".to_vec())
    );
    let ours: Vec<_> = reader
        .iter(IterOptions::default())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let theirs: Vec<_> = writer
        .iter(IterOptions::default())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ours, theirs);
    assert_eq!(reader.sequence(), writer.sequence());
}

#[test]
fn every_write_to_a_read_only_open_is_read_only_and_it_changes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    {
        let writer = Db::open(dir.path(), writer_options()).unwrap();
        writer.put(b"k", b"v").unwrap();
        writer.keyspace("users").unwrap();
        writer.close().unwrap();
    }
    let before = listing(dir.path());
    let db = Db::open(dir.path(), read_only()).unwrap();
    let users = db.keyspace("users").unwrap();
    let mut batch = Batch::new();
    batch.put(&users, b"x", b"y").unwrap();
    let checkpoint = tempfile::tempdir().unwrap();
    let refused = [
        db.put(b"k", b"w").err(),
        users.delete(b"k").err(),
        db.write(&batch, WriteOptions::default()).err(),
        db.keyspace("new").err(),
        db.flush().err(),
        db.compact_range(None, None).err(),
        db.checkpoint(checkpoint.path().join("copy")).err(),
        db.ack_changes("c", 0).err(),
        db.queue("jobs", QueueOptions::default()).err(),
        db.transaction().commit(WriteOptions::default()).err(),
    ];
    for (i, e) in refused.iter().enumerate() {
        assert_eq!(
            e.as_ref().map(shaledb::Error::code),
            Some("READ_ONLY"),
            "#{i}: {e:?}"
        );
    }
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    db.close().unwrap();
    assert_eq!(listing(dir.path()), before);
}

#[test]
fn a_read_only_open_of_a_missing_database_is_not_found_and_catch_up_needs_one() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        Db::open(dir.path(), read_only()).unwrap_err().code(),
        "NOT_FOUND"
    );
    assert!(listing(dir.path()).is_empty(), "nothing was created");
    let db = Db::open(dir.path(), writer_options()).unwrap();
    assert_eq!(db.catch_up().unwrap_err().code(), "INVALID_ARGUMENT");
}

#[test]
fn catching_up_again_and_again_while_the_writer_writes_and_compacts_always_sees_a_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Arc::new(Db::open(dir.path(), writer_options()).unwrap());
    writer.put(b"counter", &0u64.to_be_bytes()).unwrap();
    let reader = Db::open(dir.path(), read_only()).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writing = {
        let (writer, done) = (writer.clone(), done.clone());
        std::thread::spawn(move || {
            for i in 1..=4_000u64 {
                let mut b = Batch::new();
                let ks = writer.default_keyspace();
                b.put(&ks, b"counter", &i.to_be_bytes()).unwrap();
                b.put(&ks, format!("item{i:06}").as_bytes(), &[1u8; 200])
                    .unwrap();
                writer.write(&b, WriteOptions::default()).unwrap();
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let mut last = 0u64;
    let mut rounds = 0;
    while !done.load(Ordering::SeqCst) || rounds < 3 {
        reader.catch_up().unwrap();
        let v = reader.get(b"counter").unwrap().unwrap();
        let counter = u64::from_be_bytes(v.try_into().unwrap());
        assert!(counter >= last, "went back from {last} to {counter}");
        // The batch that set the counter is there whole: its item too.
        if counter > 0 {
            assert!(reader
                .get(format!("item{counter:06}").as_bytes())
                .unwrap()
                .is_some());
        }
        last = counter;
        rounds += 1;
    }
    writing.join().unwrap();
    reader.catch_up().unwrap();
    assert_eq!(
        u64::from_be_bytes(reader.get(b"counter").unwrap().unwrap().try_into().unwrap()),
        4_000
    );
}
