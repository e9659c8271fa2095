//! Poisoning: a failed fsync or a full disk, during a write, a memtable switch, a flush or a
//! compaction, makes every later write fail with `Error::Poisoned` naming the cause, while reads
//! keep working, `close` succeeds, and reopening recovers everything acknowledged before the
//! failure. Its code is `QUOTA` when the cause was a full disk (what to do: make room, reopen),
//! else `POISONED`. Faults come from `FaultyStorage`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly on unexpected errors"
)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shaledb::db::Budget;
use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{FileHandle, OpenMode, Storage, StorageLock};
use shaledb::{Batch, Db, Error, IterOptions, Options, WriteOptions};

fn small() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.background_thread = false;
    o.target_file_size = 64 * 1024;
    o.base_level_size = 256 * 1024;
    o.l0_compaction_trigger = 2;
    o
}

fn faulty() -> FaultyStorage {
    FaultyStorage::new(Arc::new(MemoryStorage::new()))
}

fn open(storage: &FaultyStorage) -> Db {
    Db::open_storage(Arc::new(storage.clone()), small()).unwrap()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat((i % 97) as usize)).into_bytes()
}

/// Asserts that `e` is `Error::Poisoned` and that its message carries `cause`.
fn assert_poisoned(e: &Error, cause: &str) {
    assert!(matches!(e, Error::Poisoned { .. }), "not poisoned: {e:?}");
    assert!(
        e.to_string().contains(cause),
        "message {:?} lacks the cause {cause:?}",
        e.to_string()
    );
}

/// Every kind of write fails with `Poisoned` carrying `cause`.
fn assert_every_write_poisoned(db: &Db, cause: &str) {
    assert_poisoned(&db.put(b"later", b"v").unwrap_err(), cause);
    assert_poisoned(
        &db.put_opt(b"later", b"v", WriteOptions::SYNC).unwrap_err(),
        cause,
    );
    assert_poisoned(&db.delete(&key(0)).unwrap_err(), cause);
    let mut batch = Batch::new();
    batch.put(&db.default_keyspace(), b"later", b"v").unwrap();
    assert_poisoned(&db.write(&batch, WriteOptions::SYNC).unwrap_err(), cause);
    let ks = db.default_keyspace();
    assert_poisoned(&ks.put(b"later", b"v").unwrap_err(), cause);
}

/// Every key in `acked` reads back with its value.
fn assert_all_there(db: &Db, acked: &[u32]) {
    for &i in acked {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
}

#[test]
fn a_failed_fsync_fails_that_write_and_poisons_every_later_write() {
    let storage = faulty();
    let db = open(&storage);
    let mut acked = Vec::new();
    for i in 0..200 {
        let sync = WriteOptions { sync: i % 3 == 0 };
        db.put_opt(&key(i), &value(i), sync).unwrap();
        acked.push(i);
    }
    db.put_opt(&key(200), &value(200), WriteOptions::SYNC)
        .unwrap();
    acked.push(200);

    storage.fail_next_sync();
    let failed = db.put_opt(&key(201), &value(201), WriteOptions::SYNC);
    assert!(failed.is_err(), "the write whose fsync failed succeeded");
    assert_every_write_poisoned(&db, "sync failed (injected)");

    // Reads still work, from the memtable and through iterators.
    assert_all_there(&db, &acked);
    let n = db.iter(IterOptions::default()).unwrap().count();
    assert!(n >= acked.len());
    db.close().unwrap();

    // Power loss after the failure: everything synced before it survives.
    storage.reset_faults();
    storage.crash().unwrap();
    let db = open(&storage);
    assert_all_there(&db, &acked);
    db.put_opt(b"after", b"reopen", WriteOptions::SYNC).unwrap();
    assert_eq!(db.get(b"after").unwrap(), Some(b"reopen".to_vec()));
    db.close().unwrap();
}

#[test]
fn reopening_after_a_failed_fsync_recovers_unsynced_acknowledged_writes() {
    let storage = faulty();
    let db = open(&storage);
    let acked: Vec<u32> = (0..300).collect();
    for &i in &acked {
        db.put(&key(i), &value(i)).unwrap();
    }
    storage.fail_syncs(1);
    assert!(db
        .put_opt(&key(999), &value(999), WriteOptions::SYNC)
        .is_err());
    assert_every_write_poisoned(&db, "sync failed (injected)");
    db.close().unwrap();
    storage.reset_faults();
    // No power loss: writes that reached the OS before the failure are all there.
    let db = open(&storage);
    assert_all_there(&db, &acked);
    db.close().unwrap();
}

#[test]
fn a_full_disk_during_writes_poisons_and_reopening_recovers() {
    let storage = faulty();
    let db = open(&storage);
    for i in 0..50 {
        db.put_opt(&key(i), &value(i), WriteOptions::SYNC).unwrap();
    }
    // Room for a few more records, then the disk is full (mid-record, so the WAL gets a torn
    // tail too).
    storage.fail_writes_after_bytes(1000);
    let (more, first_error) = write_until_error(&db, 50..1000, WriteOptions::SYNC);
    let acked: Vec<u32> = (0..50).chain(more).collect();
    let first_error = first_error.expect("the full disk was never noticed");
    assert!(
        first_error.to_string().contains("no space left"),
        "{first_error}"
    );
    assert_every_write_poisoned(&db, "no space left");
    assert_all_there(&db, &acked);
    db.close().unwrap();

    storage.reset_faults();
    storage.crash().unwrap();
    let db = open(&storage);
    assert_all_there(&db, &acked);
    db.put_opt(b"after", b"reopen", WriteOptions::SYNC).unwrap();
    db.close().unwrap();
}

/// Regression: a full disk (in the browser, an exhausted storage quota) reached callers as
/// `POISONED`, never `QUOTA`, so they could not tell "out of space" from other failures.
#[test]
fn a_database_poisoned_by_a_full_disk_reports_quota_to_every_later_write() {
    // In a write (the WAL append).
    let storage = faulty();
    let db = open(&storage);
    storage.fail_writes_after_bytes(1000);
    let (_, first) = write_until_error(&db, 0..1000, WriteOptions::default());
    assert_eq!(
        first.expect("the full disk was never noticed").code(),
        "QUOTA"
    );
    assert_eq!(db.put(b"later", b"v").unwrap_err().code(), "QUOTA");
    assert!(matches!(
        db.delete(b"later").unwrap_err(),
        Error::Poisoned {
            storage_full: true,
            ..
        }
    ));
    db.close().unwrap();

    // In a flush.
    let storage = faulty();
    let db = open(&storage);
    fill(&db, 0..1500);
    storage.fail_writes_after_bytes(2000);
    let failure = (0..20)
        .find_map(|_| db.maintain(Budget { bytes: 1 << 20 }).err())
        .expect("maintain never hit the full disk");
    assert_eq!(failure.code(), "QUOTA", "{failure}");
    assert_eq!(db.put(b"later", b"v").unwrap_err().code(), "QUOTA");
    db.close().unwrap();
}

#[test]
fn a_database_poisoned_by_a_failed_fsync_reports_poisoned() {
    let storage = faulty();
    let db = open(&storage);
    fill(&db, 0..200);
    storage.fail_next_sync();
    db.flush().expect_err("the flush's fsync failed");
    assert_eq!(db.put(b"later", b"v").unwrap_err().code(), "POISONED");
    db.close().unwrap();
}

/// Puts the keys of `range` with `options` until one fails; returns the acknowledged keys and
/// the first error (`None` if every put succeeded).
fn write_until_error(
    db: &Db,
    range: std::ops::Range<u32>,
    options: WriteOptions,
) -> (Vec<u32>, Option<Error>) {
    let mut acked = Vec::new();
    for i in range {
        if let Err(e) = db.put_opt(&key(i), &value(i), options) {
            return (acked, Some(e));
        }
        acked.push(i);
    }
    (acked, None)
}

/// Writes `n` keys unsynced (filling several memtables), then a synced one, so all are durable.
fn fill(db: &Db, range: std::ops::Range<u32>) -> Vec<u32> {
    let mut acked = Vec::new();
    for i in range {
        db.put(&key(i), &value(i)).unwrap();
        acked.push(i);
    }
    db.put_opt(b"sync-point", b"", WriteOptions::SYNC).unwrap();
    acked
}

#[test]
fn a_full_disk_during_flush_poisons_and_reopening_loses_nothing() {
    let storage = faulty();
    let db = open(&storage);
    let acked = fill(&db, 0..1500);
    assert!(db.stats().memtable_bytes > 64 * 1024, "nothing to flush");

    storage.fail_writes_after_bytes(2000);
    let mut failure = None;
    for _ in 0..20 {
        if let Err(e) = db.maintain(Budget { bytes: 1 << 20 }) {
            failure = Some(e);
            break;
        }
    }
    let failure = failure.expect("maintain never hit the full disk");
    assert!(failure.to_string().contains("no space left"), "{failure}");
    assert_every_write_poisoned(&db, "no space left");
    assert_all_there(&db, &acked);
    db.close().unwrap();

    storage.reset_faults();
    storage.crash().unwrap();
    let db = open(&storage);
    assert_all_there(&db, &acked);
    db.close().unwrap();
}

#[test]
fn a_failed_fsync_during_flush_poisons_and_reopening_loses_nothing() {
    let storage = faulty();
    let db = open(&storage);
    let acked = fill(&db, 0..1500);
    storage.fail_next_sync();
    let failure = db.flush().expect_err("the flush's fsync failed");
    assert!(
        failure.to_string().contains("sync failed (injected)"),
        "{failure}"
    );
    assert_every_write_poisoned(&db, "sync failed (injected)");
    assert_all_there(&db, &acked);
    db.close().unwrap();

    storage.reset_faults();
    storage.crash().unwrap();
    let db = open(&storage);
    assert_all_there(&db, &acked);
    db.close().unwrap();
}

#[test]
fn a_full_disk_during_compaction_poisons_and_reopening_loses_nothing() {
    let storage = faulty();
    let db = open(&storage);
    let mut acked = Vec::new();
    // Several flushed tables, with overwrites and deletes, so compaction has work and
    // tombstones that must keep hiding old values.
    for round in 0..4u32 {
        for i in 0..600 {
            db.put(&key(i), &value(i + round)).unwrap();
        }
        db.flush().unwrap();
    }
    for i in 0..600 {
        db.put(&key(i), &value(i)).unwrap();
        acked.push(i);
    }
    for i in 0..100 {
        db.delete(&key(i * 6 + 1)).unwrap();
    }
    acked.retain(|i| i % 6 != 1);
    db.flush().unwrap();

    storage.fail_writes_after_bytes(2_000);
    let failure = db
        .compact_range(None, None)
        .expect_err("compaction hit the full disk");
    assert!(failure.to_string().contains("no space left"), "{failure}");
    assert_every_write_poisoned(&db, "no space left");
    assert_all_there(&db, &acked);
    db.close().unwrap();

    storage.reset_faults();
    storage.crash().unwrap();
    let db = open(&storage);
    assert_all_there(&db, &acked);
    for i in 0..100 {
        assert_eq!(
            db.get(&key(i * 6 + 1)).unwrap(),
            None,
            "deleted key is back"
        );
    }
    db.compact_range(None, None).unwrap();
    assert_all_there(&db, &acked);
    db.close().unwrap();
}

#[test]
fn a_failed_wal_fsync_at_a_memtable_switch_poisons_later_writes() {
    let storage = faulty();
    let db = open(&storage);
    // Unsynced writes sync nothing until the memtable fills and the WAL is switched: that
    // sync is the one that fails.
    storage.fail_next_sync();
    let (acked, failure) = write_until_error(&db, 0..5000, WriteOptions::default());
    let failure = failure.expect("the memtable never switched");
    assert!(
        failure.to_string().contains("sync failed (injected)"),
        "{failure}"
    );
    assert_every_write_poisoned(&db, "sync failed (injected)");
    assert_all_there(&db, &acked);
    db.close().unwrap();
    storage.reset_faults();
    let db = open(&storage);
    assert_all_there(&db, &acked);
    db.close().unwrap();
}

/// A storage whose next creation of a WAL leaves an empty file behind and fails, as a full
/// disk would while the WAL header is written.
#[derive(Debug)]
struct FailNextWalCreate {
    inner: FaultyStorage,
    armed: AtomicBool,
}

impl Storage for FailNextWalCreate {
    fn open(&self, name: &str, mode: OpenMode) -> shaledb::Result<FileHandle> {
        if mode == OpenMode::CreateNew
            && name.starts_with("wal-")
            && self.armed.swap(false, Ordering::SeqCst)
        {
            let file = self.inner.open(name, mode)?;
            file.sync()?;
            self.inner.sync_dir()?;
            return Err(Error::io(
                "write",
                name,
                std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left (injected)"),
            ));
        }
        self.inner.open(name, mode)
    }
    fn exists(&self, name: &str) -> shaledb::Result<bool> {
        self.inner.exists(name)
    }
    fn remove(&self, name: &str) -> shaledb::Result<()> {
        self.inner.remove(name)
    }
    fn rename(&self, from: &str, to: &str) -> shaledb::Result<()> {
        self.inner.rename(from, to)
    }
    fn list(&self) -> shaledb::Result<Vec<String>> {
        self.inner.list()
    }
    fn sync_dir(&self) -> shaledb::Result<()> {
        self.inner.sync_dir()
    }
    fn lock(&self, name: &str) -> shaledb::Result<Box<dyn StorageLock>> {
        self.inner.lock(name)
    }
}

#[test]
fn a_wal_that_failed_to_be_created_poisons_and_hides_no_later_synced_write() {
    let faulty = faulty();
    let storage = Arc::new(FailNextWalCreate {
        inner: faulty.clone(),
        armed: AtomicBool::new(false),
    });
    let db = Db::open_storage(storage.clone(), small()).unwrap();
    storage.armed.store(true, Ordering::SeqCst);
    let mut acked = Vec::new();
    let mut failures = Vec::new();
    let mut writes_after_failure = 0;
    for i in 0..5000 {
        match db.put_opt(&key(i), &value(i), WriteOptions::SYNC) {
            Ok(()) => acked.push(i),
            Err(e) => failures.push(e),
        }
        // A few writes past the failure: enough for a newer WAL, too few for a flush that
        // would make the empty one obsolete.
        if failures.is_empty() {
            continue;
        }
        writes_after_failure += 1;
        if writes_after_failure > 20 {
            break;
        }
    }
    assert!(!failures.is_empty(), "the WAL creation never failed");
    // Once the switch failed, the database accepts no more writes.
    for e in failures.iter().skip(1) {
        assert_poisoned(e, "no space left (injected)");
    }
    drop(db);
    // Power loss, then recovery must not stop at the empty WAL and drop later synced ones.
    faulty.crash().unwrap();
    let db = Db::open_storage(storage.clone(), small()).unwrap();
    assert_all_there(&db, &acked);
    db.close().unwrap();
}

#[test]
fn an_open_that_fails_part_way_leaves_a_database_the_next_open_recovers() {
    let storage = faulty();
    let db = open(&storage);
    let acked = fill(&db, 0..1200);
    for i in 0..100 {
        db.delete(&key(i * 7)).unwrap();
    }
    db.put_opt(b"sync-point", b"", WriteOptions::SYNC).unwrap();
    let deleted: Vec<u32> = (0..100).map(|i| i * 7).collect();
    let mut acked: Vec<u32> = acked
        .into_iter()
        .filter(|i| i % 7 != 0 || *i >= 700)
        .collect();
    db.close().unwrap();

    // Recovery writes a manifest, a table and a WAL: let the disk fill up, or an fsync fail,
    // at every point of it in turn, with a power loss after some failures; the next open must
    // still find everything.
    let mut failures = 0;
    for attempt in 0..36u64 {
        if attempt % 2 == 0 {
            storage.fail_writes_after_bytes(attempt * 1500);
        } else {
            storage.fail_syncs(1 + attempt % 3);
        }
        match Db::open_storage(Arc::new(storage.clone()), small()) {
            Ok(db) => {
                storage.reset_faults();
                drop(db);
            }
            Err(e) => {
                failures += 1;
                assert!(
                    !matches!(e, Error::Corruption { .. }),
                    "attempt {attempt}: {e}"
                );
            }
        }
        storage.reset_faults();
        match attempt % 3 {
            0 => storage.crash().unwrap(),
            1 => storage.crash_torn(attempt).unwrap(),
            _ => {}
        }
        let db = open(&storage);
        assert_all_there(&db, &acked);
        for &i in &deleted {
            assert_eq!(
                db.get(&key(i)).unwrap(),
                None,
                "attempt {attempt}: {i} is back"
            );
        }
        // New writes in the WAL, so that the next recovery has a log to replay.
        let next = 10_000 + attempt as u32 * 100;
        acked.extend(fill(&db, next..next + 100));
        db.close().unwrap();
    }
    assert!(failures > 6, "only {failures} opens failed");
}

#[test]
fn flush_compaction_and_maintenance_refuse_to_run_on_a_poisoned_database() {
    let faulty = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let storage: Arc<dyn Storage> = Arc::new(faulty.clone());
    let mut options = Options::default();
    options.background_thread = false;
    let db = Db::open_storage(storage, options).unwrap();
    db.put(b"k", b"v").unwrap();
    faulty.fail_syncs(1);
    assert!(db.put_opt(b"k2", b"v", WriteOptions::SYNC).is_err());
    for result in [
        db.flush(),
        db.compact_range(None, None),
        db.maintain(shaledb::db::Budget { bytes: 1 << 20 })
            .map(|_| ()),
    ] {
        assert!(matches!(result, Err(Error::Poisoned { .. })), "{result:?}");
    }
}
