//! Regressions at the `Db` level: the two resurrection bugs the engine issue names (go-sstables'
//! simpledb and a toy Go engine), and every engine bug the model and corruption tests found,
//! each named after the behaviour it guards.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on any unexpected error"
)]

use std::sync::Arc;

use shaledb::db::Budget;
use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::Storage;
use shaledb::{Db, Error, IterOptions, Options, WriteOptions};

fn small() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.background_thread = false;
    o.target_file_size = 16 * 1024;
    o.base_level_size = 32 * 1024;
    o.l0_compaction_trigger = 2;
    o.compression = false;
    o
}

fn all(db: &Db, options: IterOptions) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iter(options)
        .unwrap()
        .collect::<shaledb::Result<Vec<_>>>()
        .unwrap()
}

fn keys(db: &Db, options: IterOptions) -> Vec<Vec<u8>> {
    all(db, options).into_iter().map(|(k, _)| k).collect()
}

/// go-sstables' simpledb: put k, delete k, then enough small puts (each flushed) to trigger a
/// compaction that leaves the oldest table out. The tombstone must not be dropped while the
/// value it hides can still lie below, and k must stay deleted through reopens.
#[test]
fn deleted_key_stays_deleted_after_compaction_that_skips_the_oldest_table() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
    let db = Db::open_storage(storage.clone(), small()).unwrap();
    db.put(b"k", b"old value").unwrap();
    db.flush().unwrap(); // the oldest table holds k's value
    db.delete(b"k").unwrap();
    db.flush().unwrap(); // a newer table holds the tombstone
    let filler = vec![b'f'; 2000];
    for round in 0..40u32 {
        for i in 0..10u32 {
            db.put(format!("z{round:03}{i:03}").as_bytes(), &filler)
                .unwrap();
        }
        db.flush().unwrap();
        // A few bounded steps only: compactions of subsets of the tables happen.
        for _ in 0..3 {
            db.maintain(Budget { bytes: 8 * 1024 }).unwrap();
        }
        assert_eq!(db.get(b"k").unwrap(), None, "round {round}");
    }
    while db.maintain(Budget { bytes: 1 << 20 }).unwrap().more {}
    let stats = db.stats();
    assert!(
        stats.level_files.iter().skip(1).sum::<usize>() > 0,
        "compactions happened: {:?}",
        stats.level_files
    );
    assert_eq!(db.get(b"k").unwrap(), None);
    assert!(!keys(&db, IterOptions::default()).contains(&b"k".to_vec()));
    db.close().unwrap();

    let db = Db::open_storage(storage.clone(), small()).unwrap();
    assert_eq!(db.get(b"k").unwrap(), None, "after reopen");
    assert!(!keys(&db, IterOptions::default()).contains(&b"k".to_vec()));
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"k").unwrap(), None, "after a full compaction");
    db.close().unwrap();
    let db = Db::open_storage(storage, small()).unwrap();
    assert_eq!(
        db.get(b"k").unwrap(),
        None,
        "after a full compaction and reopen"
    );
    assert_eq!(
        all(&db, IterOptions::prefix(b"k".to_vec())),
        Vec::<(Vec<u8>, Vec<u8>)>::new()
    );
}

/// A toy Go engine let a tombstone in the memtable fall through to an older table on `get`.
#[test]
fn tombstone_in_memtable_hides_value_in_an_older_table() {
    let db = Db::open_in_memory(small()).unwrap();
    db.put(b"j", b"neighbour").unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    let before = db.snapshot();
    db.delete(b"k").unwrap(); // only in the memtable
    let after = db.snapshot();

    assert_eq!(db.get(b"k").unwrap(), None);
    assert_eq!(keys(&db, IterOptions::default()), vec![b"j".to_vec()]);
    assert_eq!(
        keys(&db, IterOptions::default().reversed()),
        vec![b"j".to_vec()]
    );
    assert_eq!(
        keys(&db, IterOptions::range(b"k".to_vec(), b"l".to_vec())),
        Vec::<Vec<u8>>::new()
    );
    let mut it = db.iter(IterOptions::default()).unwrap();
    it.seek(b"k").unwrap();
    assert!(!it.valid(), "seek to a deleted key finds nothing after it");

    let ks = db.default_keyspace();
    assert_eq!(after.get(&ks, b"k").unwrap(), None);
    assert_eq!(
        after
            .iter(&ks, IterOptions::default())
            .unwrap()
            .map(|r| r.unwrap().0)
            .collect::<Vec<_>>(),
        vec![b"j".to_vec()]
    );
    // The older snapshot still sees the value.
    assert_eq!(before.get(&ks, b"k").unwrap(), Some(b"v".to_vec()));

    // The same with a range tombstone in the memtable.
    db.put(b"m", b"w").unwrap();
    db.flush().unwrap();
    db.delete_range(b"l", b"n").unwrap();
    assert_eq!(db.get(b"m").unwrap(), None);
    assert_eq!(keys(&db, IterOptions::default()), vec![b"j".to_vec()]);
}

/// The model test found: a failed WAL sync while switching memtables returned an I/O error but
/// did not poison the database, so later writes got plain I/O errors instead of `Poisoned`.
#[test]
fn failed_wal_sync_at_memtable_switch_poisons_the_database() {
    let faulty = FaultyStorage::new(Arc::new(MemoryStorage::new()));
    let db = Db::open_storage(Arc::new(faulty.clone()), small()).unwrap();
    let value = vec![b'v'; 1000];
    db.put(b"synced", b"yes").unwrap();
    let mut i = 0u32;
    // Fill the memtable up to the switch.
    while db.stats().memtable_bytes < 64 * 1024 {
        db.put(format!("k{i:05}").as_bytes(), &value).unwrap();
        i += 1;
    }
    faulty.fail_syncs(1);
    let first = db.put(b"after", b"x");
    assert!(first.is_err(), "the switch's WAL sync failed: {first:?}");
    let later = db.put(b"later", b"x");
    assert!(
        matches!(later, Err(Error::Poisoned { .. })),
        "later writes are poisoned, got {later:?}"
    );
    assert!(matches!(
        db.flush(),
        Err(Error::Poisoned { .. }) | Err(Error::Io { .. })
    ));
    faulty.reset_faults();
    db.close().unwrap();
    let db = Db::open_storage(Arc::new(faulty), small()).unwrap();
    assert_eq!(db.get(b"synced").unwrap(), Some(b"yes".to_vec()));
    db.put_opt(b"after", b"y", WriteOptions::SYNC).unwrap();
}

/// A closed database with two WALs: an immutable memtable's (older) and the live one's.
/// Returns the storage, the WAL names oldest first, and the keys written (value = key).
fn two_wals() -> (MemoryStorage, Vec<String>, Vec<Vec<u8>>) {
    let storage = MemoryStorage::new();
    let db = Db::open_storage(Arc::new(storage.clone()), small()).unwrap();
    let wals = |s: &MemoryStorage| {
        let mut v: Vec<String> = s
            .list()
            .unwrap()
            .into_iter()
            .filter(|n| shaledb::write::wal::parse_wal_file_name(n).is_some())
            .collect();
        v.sort();
        v
    };
    let mut written = Vec::new();
    let mut i = 0u32;
    while wals(&storage).len() < 2 || i % 50 != 0 {
        let k = format!("key{i:05}").into_bytes();
        let mut v = k.clone();
        v.resize(500, b'.');
        db.put(&k, &v).unwrap();
        written.push(k);
        i += 1;
    }
    db.close().unwrap();
    let names = wals(&storage);
    assert_eq!(names.len(), 2);
    (storage, names, written)
}

fn file_len(storage: &MemoryStorage, name: &str) -> u64 {
    storage
        .open(name, shaledb::storage::OpenMode::Read)
        .unwrap()
        .size()
        .unwrap()
}

/// The corruption test found: a cut-short WAL followed by a newer WAL was taken for a torn
/// tail; recovery cut it, deleted the newer WAL, and opened without the writes of both.
#[test]
fn damaged_older_wal_is_refused_not_cut_with_the_newer_wals_dropped() {
    for damage in ["truncate", "flip"] {
        let (storage, wals, _) = two_wals();
        let older = &wals[0];
        let f = storage
            .open(older, shaledb::storage::OpenMode::ReadWrite)
            .unwrap();
        let len = f.size().unwrap();
        if damage == "truncate" {
            f.truncate(len / 2).unwrap();
        } else {
            let mut b = [0u8];
            f.read_exact_at(len - 3, &mut b).unwrap();
            f.write_at(len - 3, &[b[0] ^ 0xFF]).unwrap();
        }
        let e = Db::open_storage(Arc::new(storage.clone()), small()).unwrap_err();
        assert_eq!(e.code(), "CORRUPTION", "{damage}: {e}");
        assert!(e.to_string().contains(older.as_str()), "{damage}: {e}");
        assert!(
            storage.exists(&wals[1]).unwrap(),
            "{damage}: the newer WAL is kept"
        );
    }
    // A torn tail of the last WAL is still cut off: only its newest writes go.
    let (storage, wals, written) = two_wals();
    let last = &wals[1];
    let len = file_len(&storage, last);
    storage
        .open(last, shaledb::storage::OpenMode::ReadWrite)
        .unwrap()
        .truncate(len - 10)
        .unwrap();
    let db = Db::open_storage(Arc::new(storage), small()).unwrap();
    let present: Vec<bool> = written
        .iter()
        .map(|k| db.get(k).unwrap().is_some())
        .collect();
    let kept = present.iter().take_while(|p| **p).count();
    assert!(present[kept..].iter().all(|p| !p), "a prefix of the writes");
    assert!(kept >= written.len() - 1, "only the torn write is lost");
}

/// Damages the last bytes of the manifest (inside its last edit, so recovery takes it for a
/// torn tail) and returns its name.
fn damage_manifest_tail(storage: &MemoryStorage) -> String {
    let name = storage
        .list()
        .unwrap()
        .into_iter()
        .find(|n| n.starts_with("MANIFEST-"))
        .unwrap();
    let f = storage
        .open(&name, shaledb::storage::OpenMode::ReadWrite)
        .unwrap();
    let at = f.size().unwrap() - 3;
    let mut b = [0u8];
    f.read_exact_at(at, &mut b).unwrap();
    f.write_at(at, &[b[0] ^ 0xFF]).unwrap();
    name
}

/// The corruption test found: a damaged last manifest edit was taken for a torn tail and the
/// database opened at the previous version — after a lost flush edit with stale values (the
/// WAL holding the newer ones was already deleted), after a lost compaction edit naming tables
/// that were deleted (a NotFound error at open or on a later read).
#[test]
fn manifest_that_lost_its_last_edit_is_refused_not_opened_with_stale_data() {
    // The last edit is a flush: it moved the log number past the WAL holding k = v2.
    let storage = MemoryStorage::new();
    let db = Db::open_storage(Arc::new(storage.clone()), small()).unwrap();
    db.put(b"k", b"v1").unwrap();
    db.flush().unwrap();
    db.put(b"k", b"v2").unwrap();
    db.flush().unwrap();
    db.put(b"live", b"in the newest WAL").unwrap();
    db.close().unwrap();
    let manifest = damage_manifest_tail(&storage);
    match Db::open_storage(Arc::new(storage), small()) {
        Ok(db) => panic!(
            "opened a manifest that lost a flush edit; k = {:?}",
            db.get(b"k").unwrap()
        ),
        Err(e) => {
            assert_eq!(e.code(), "CORRUPTION", "{e}");
            assert!(e.to_string().contains(&manifest), "{e}");
        }
    }

    // The last edit is a compaction: its input tables are gone.
    let storage = MemoryStorage::new();
    let db = Db::open_storage(Arc::new(storage.clone()), small()).unwrap();
    for i in 0..4u32 {
        db.put(format!("k{i}").as_bytes(), b"v").unwrap();
        db.flush().unwrap();
    }
    while db.maintain(Budget { bytes: 1 << 20 }).unwrap().more {}
    assert_eq!(db.stats().level_files[0], 0, "compacted out of L0");
    db.close().unwrap();
    let tables = |s: &MemoryStorage| {
        s.list()
            .unwrap()
            .iter()
            .filter(|n| n.ends_with(".sst"))
            .count()
    };
    assert_eq!(tables(&storage), 1, "the compaction's inputs were deleted");
    let manifest = damage_manifest_tail(&storage);
    match Db::open_storage(Arc::new(storage), small()) {
        Ok(db) => panic!(
            "opened a manifest that lost a compaction edit; get = {:?}",
            db.get(b"k0")
        ),
        Err(e) => {
            assert_eq!(e.code(), "CORRUPTION", "{e}");
            assert!(e.to_string().contains(&manifest), "{e}");
        }
    }
}

/// Review of recovery found: the last sequence number was computed as
/// `first_seq + len - 1` per replayed batch, which underflows for an empty batch at sequence 0
/// (a panic in debug builds, a last sequence of `u64::MAX` in release). Such a record is never
/// written by the engine but is valid RecordIO with a correct checksum.
#[test]
fn empty_batch_at_sequence_zero_in_a_wal_replays_without_overflow() {
    let storage = MemoryStorage::new();
    let db = Db::open_storage(Arc::new(storage.clone()), small()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.close().unwrap();
    let mut wal = shaledb::write::wal::WalWriter::create(
        &storage,
        999_999,
        0,
        shaledb::write::wal::WalOptions::default(),
    )
    .unwrap();
    wal.append(&[0u8; 12]).unwrap(); // first_seq 0, count 0
    wal.sync().unwrap();
    drop(wal);
    let db = Db::open_storage(Arc::new(storage.clone()), small()).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    db.put(b"b", b"2").unwrap();
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    db.close().unwrap();
    let db = Db::open_storage(Arc::new(storage), small()).unwrap();
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
}

/// The change feed from a sequence number inside a batch (past its first operation) starts at
/// the next batch; it used to report corruption ("expected sequence number 2, found 3").
#[test]
fn change_feed_from_inside_a_batch_starts_at_the_next_batch() {
    let db = Db::open_storage(Arc::new(MemoryStorage::new()), small()).unwrap();
    let ks = db.default_keyspace();
    let mut batch = shaledb::Batch::new();
    batch.put(&ks, b"a", b"1").unwrap();
    batch.put(&ks, b"b", b"2").unwrap();
    db.write(&batch, WriteOptions::default()).unwrap();
    ks.put(b"c", b"3").unwrap();
    let seqs: Vec<u64> = db.changes(2).unwrap().map(|c| c.unwrap().seq()).collect();
    assert_eq!(seqs, vec![3]);
}

/// A feed that yielded a batch, then found nothing newer, yields the next batch committed: it
/// used to keep the log reader of the first read, which did not see the new batch, and return
/// `None` once (a following reader lagged by one commit).
#[test]
fn a_feed_sees_a_batch_committed_after_it_caught_up() {
    let dir = std::env::temp_dir().join(format!("shaledb-feed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut o = small();
    o.wal_preallocation = 0;
    let db = Db::open(&dir, o.clone()).unwrap();
    let ks = db.default_keyspace();
    ks.put(b"a", b"1").unwrap();
    let mut feed = db.changes(1).unwrap();
    assert_eq!(feed.try_next().unwrap().unwrap().seq(), 1);
    assert!(feed.try_next().unwrap().is_none());
    ks.put(b"b", b"2").unwrap();
    assert_eq!(feed.try_next().unwrap().map(|c| c.seq()), Some(2));
    ks.put(b"c", b"3").unwrap();
    assert_eq!(feed.try_next().unwrap().map(|c| c.seq()), Some(3));
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Storage whose listing also names an obsolete log that is already gone (as when the
/// background thread discards a prepared log a switch made useless between the listing and
/// the removal).
#[derive(Debug)]
struct ListsAGoneLog(Arc<MemoryStorage>, std::sync::atomic::AtomicBool);

impl Storage for ListsAGoneLog {
    fn open(
        &self,
        name: &str,
        mode: shaledb::storage::OpenMode,
    ) -> shaledb::Result<shaledb::storage::FileHandle> {
        self.0.open(name, mode)
    }
    fn exists(&self, name: &str) -> shaledb::Result<bool> {
        self.0.exists(name)
    }
    fn remove(&self, name: &str) -> shaledb::Result<()> {
        self.0.remove(name)
    }
    fn rename(&self, from: &str, to: &str) -> shaledb::Result<()> {
        self.0.rename(from, to)
    }
    fn list(&self) -> shaledb::Result<Vec<String>> {
        let mut names = self.0.list()?;
        if self.1.load(std::sync::atomic::Ordering::Relaxed) {
            names.push("wal-000000.log".to_owned());
        }
        Ok(names)
    }
    fn sync_dir(&self) -> shaledb::Result<()> {
        self.0.sync_dir()
    }
    fn lock(&self, name: &str) -> shaledb::Result<Box<dyn shaledb::storage::StorageLock>> {
        self.0.lock(name)
    }
}

/// An obsolete file removed by someone else between the listing and its removal (seen as
/// `db_crash_process`'s "database is poisoned by an earlier failure (file "wal-000527.log" not
/// found)") is what the removal wanted: the flush and later writes go on.
#[test]
fn an_obsolete_log_already_gone_when_removed_does_not_poison_the_database() {
    let storage = Arc::new(ListsAGoneLog(Arc::new(MemoryStorage::new()), false.into()));
    let db = Db::open_storage(storage.clone(), small()).unwrap();
    storage.1.store(true, std::sync::atomic::Ordering::Relaxed); // from now on
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), &[7; 100]).unwrap();
    }
    db.flush().unwrap();
    db.put(b"after", b"the flush").unwrap();
    assert_eq!(
        db.get(b"after").unwrap().as_deref(),
        Some(&b"the flush"[..])
    );
}
