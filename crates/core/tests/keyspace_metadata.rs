//! Keyspace metadata (`Keyspace::set_metadata`, `Db::keyspace_metadata`): a small record kept
//! in the manifest with its keyspace, like a schema. It survives reopening, flushes,
//! compactions and manifest rewrites, travels with checkpoints, is readable (not settable) on a
//! read-only open, settable on a follower, and a fault while setting it leaves the old or the
//! new record, never a database that does not open.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod fault_driver;

use std::sync::Arc;

use fault_driver::{options, After};
use shaledb::storage::faulty::{Fault, FaultyStorage};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Db, Error, Options, MAX_KEYSPACE_METADATA};

fn open(storage: &Arc<MemoryStorage>, o: Options) -> Db {
    Db::open_storage(storage.clone() as Arc<dyn Storage>, o).unwrap()
}

const META: &[u8] = br#"{"keyEncoding":"utf8","valueEncoding":"json"}"#;

#[test]
fn keyspace_metadata_survives_reopen_flush_compaction_and_manifest_rewrites() {
    let storage = Arc::new(MemoryStorage::new());
    {
        let db = open(&storage, options());
        let users = db.keyspace("users").unwrap();
        assert_eq!(users.metadata().unwrap(), None);
        users.set_metadata(META).unwrap();
        db.default_keyspace().set_metadata(b"d").unwrap();
        assert_eq!(users.metadata().unwrap().as_deref(), Some(META));
        assert_eq!(
            db.keyspace_metadata("users").unwrap().as_deref(),
            Some(META)
        );
        // Enough writes for flushes, compactions and (below) several manifest rewrites.
        for i in 0..3000u32 {
            users
                .put(format!("k{i:05}").as_bytes(), &[b'v'; 100])
                .unwrap();
        }
        db.flush().unwrap();
        db.compact_range(None, None).unwrap();
        db.close().unwrap();
    }
    for _ in 0..3 {
        // Every open writes a fresh manifest (a snapshot edit): the record must be in it.
        let db = open(&storage, options());
        assert_eq!(
            db.keyspace_metadata("users").unwrap().as_deref(),
            Some(META)
        );
        assert_eq!(
            db.keyspace_metadata("default").unwrap().as_deref(),
            Some(&b"d"[..])
        );
        assert_eq!(db.keyspace_metadata("missing").unwrap(), None);
        db.close().unwrap();
    }
}

#[test]
fn setting_the_same_metadata_writes_nothing_and_empty_metadata_removes_it() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, options());
    let ks = db.keyspace("a").unwrap();
    ks.set_metadata(META).unwrap();
    let manifest_size = |s: &MemoryStorage| -> u64 {
        let name = s
            .list()
            .unwrap()
            .into_iter()
            .find(|n| n.starts_with("MANIFEST-"))
            .unwrap();
        s.open(&name, shaledb::storage::OpenMode::Read)
            .unwrap()
            .size()
            .unwrap()
    };
    let before = manifest_size(&storage);
    ks.set_metadata(META).unwrap();
    assert_eq!(manifest_size(&storage), before);
    ks.set_metadata(b"").unwrap();
    assert_eq!(ks.metadata().unwrap(), None);
    db.close().unwrap();
    let db = open(&storage, options());
    assert_eq!(db.keyspace_metadata("a").unwrap(), None);
}

#[test]
fn keyspace_metadata_over_64_kib_is_invalid_argument_and_changes_nothing() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, options());
    let ks = db.keyspace("a").unwrap();
    ks.set_metadata(META).unwrap();
    let err = ks
        .set_metadata(&vec![b'x'; MAX_KEYSPACE_METADATA + 1])
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert_eq!(ks.metadata().unwrap().as_deref(), Some(META));
    ks.set_metadata(&vec![b'x'; MAX_KEYSPACE_METADATA]).unwrap();
    db.close().unwrap();
    let db = open(&storage, options());
    assert_eq!(
        db.keyspace_metadata("a").unwrap().map(|m| m.len()),
        Some(MAX_KEYSPACE_METADATA)
    );
}

#[test]
fn a_checkpoint_carries_keyspace_metadata() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, options());
    let ks = db.keyspace("users").unwrap();
    ks.set_metadata(META).unwrap();
    ks.put(b"k", b"v").unwrap();
    let copy = Arc::new(MemoryStorage::new());
    db.checkpoint_to(copy.clone() as Arc<dyn Storage>).unwrap();
    let restored = open(&copy, options());
    assert_eq!(
        restored.keyspace_metadata("users").unwrap().as_deref(),
        Some(META)
    );
}

#[test]
fn a_read_only_open_reads_keyspace_metadata_and_catches_up_on_it_but_cannot_set_it() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), options()).unwrap();
    writer
        .keyspace("users")
        .unwrap()
        .set_metadata(b"one")
        .unwrap();
    let mut o = Options::default();
    o.read_only = true;
    let reader = Db::open(dir.path(), o).unwrap();
    assert_eq!(
        reader.keyspace_metadata("users").unwrap().as_deref(),
        Some(&b"one"[..])
    );
    let err = reader.default_keyspace().set_metadata(b"x").unwrap_err();
    assert!(matches!(err, Error::ReadOnly(_)), "{err}");
    writer
        .keyspace("users")
        .unwrap()
        .set_metadata(b"two")
        .unwrap();
    writer
        .keyspace("orders")
        .unwrap()
        .set_metadata(b"three")
        .unwrap();
    reader.catch_up().unwrap();
    assert_eq!(
        reader.keyspace_metadata("users").unwrap().as_deref(),
        Some(&b"two"[..])
    );
    assert_eq!(
        reader.keyspace_metadata("orders").unwrap().as_deref(),
        Some(&b"three"[..])
    );
}

#[test]
fn a_follower_may_set_keyspace_metadata_it_is_not_a_data_write() {
    let storage = Arc::new(MemoryStorage::new());
    let mut o = options();
    o.follower = true;
    let follower = open(&storage, o.clone());
    let before = follower.sequence();
    follower.default_keyspace().set_metadata(META).unwrap();
    assert_eq!(follower.sequence(), before, "no sequence number taken");
    assert!(matches!(follower.put(b"k", b"v"), Err(Error::ReadOnly(_))));
    follower.close().unwrap();
    let follower = open(&storage, o);
    assert_eq!(
        follower.keyspace_metadata("default").unwrap().as_deref(),
        Some(META)
    );
}

#[test]
fn setting_keyspace_metadata_takes_no_sequence_number_and_is_not_in_the_change_feed() {
    let storage = Arc::new(MemoryStorage::new());
    let mut o = options();
    o.change_retention = Some(shaledb::ChangeRetention::bytes(u64::MAX));
    let db = open(&storage, o);
    db.put(b"a", b"1").unwrap();
    let one_put = db.sequence();
    db.default_keyspace().set_metadata(META).unwrap();
    assert_eq!(db.sequence(), one_put, "no sequence number taken");
    db.put(b"b", b"2").unwrap();
    let feed: Vec<_> = db.changes(1).unwrap().map(Result::unwrap).collect();
    assert_eq!(feed.len(), 2, "the two puts, nothing else");
}

/// A fault at every I/O call of setting a keyspace's metadata six times, then a restart or a power loss: the database opens, and each keyspace's
/// metadata is one it was set to (the last acknowledged one, or a later one whose edit
/// reached the disk).
fn run_one(fault: Fault, nth: u64, after: After) -> Result<bool, String> {
    let storage = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
    let ks = db.keyspace("users").unwrap();
    storage.arm(nth, fault);
    let mut acked: Option<Vec<u8>> = None;
    let mut tried = Vec::new();
    for i in 0..6u8 {
        let meta = vec![b'm', i];
        tried.push(meta.clone());
        if ks.set_metadata(&meta).is_err() {
            break;
        }
        acked = Some(meta);
    }
    drop(ks);
    drop(db);
    let fired = storage.fault_fired();
    storage.reset_faults();
    after.apply(&storage);
    let db = Db::open_storage(Arc::new(storage.clone()), options())
        .map_err(|e| format!("the database does not open: {e}"))?;
    let found = db.keyspace_metadata("users").map_err(|e| e.to_string())?;
    let acked_at = acked
        .as_ref()
        .and_then(|a| tried.iter().position(|t| t == a));
    let ok = match &found {
        None => acked.is_none(),
        Some(m) => tried
            .iter()
            .position(|t| t == m)
            .is_some_and(|at| acked_at.is_none_or(|a| at >= a)),
    };
    if !ok {
        return Err(format!("acknowledged {acked:?}, found {found:?}"));
    }
    db.close().map_err(|e| e.to_string())?;
    Ok(fired)
}

#[test]
fn a_fault_while_setting_keyspace_metadata_leaves_the_acknowledged_record_or_a_later_one() {
    let faults = fault_driver::sweep(1, Fault::Error, run_one)
        + fault_driver::sweep(1, Fault::Crash, run_one);
    eprintln!("keyspace metadata fault sweep: {faults} faults injected");
    assert!(faults > 5);
}
