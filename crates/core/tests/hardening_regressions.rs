//! Regression tests of the hardening review (issue 10): each broken promise, reproduced as it
//! was found, named after the behaviour that now holds. The fault sweep (`fault_sweep.rs`)
//! checks the same promises systematically.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod sweep_support;

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use shaledb::db::Budget;
use shaledb::storage::faulty::{Fault, FaultyStorage};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{FileHandle, OpenMode, Storage, StorageFile, StorageLock};
use shaledb::{Db, Options, WriteOptions};
use sweep_support::{key, scan, value, Model};

fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.background_thread = false;
    o.l0_compaction_trigger = 2;
    o
}

fn faulty() -> FaultyStorage {
    FaultyStorage::new(Arc::new(MemoryStorage::new()))
}

fn open(s: &FaultyStorage) -> shaledb::Result<Db> {
    Db::open_storage(Arc::new(s.clone()), options())
}

/// Where a log's data ends: its size, less the zeros a preallocated log holds after its data.
fn data_end(f: &dyn StorageFile) -> u64 {
    let mut bytes = vec![0u8; f.size().unwrap() as usize];
    f.read_exact_at(0, &mut bytes).unwrap();
    bytes
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |i| i as u64 + 1)
}

fn names(s: &dyn Storage, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = s
        .list()
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// Writes `n` keys from `from` (value version `v`) through `model`, every one synced if `sync`.
fn fill(db: &Db, model: &mut Model, from: u32, n: u32, v: u32, sync: bool) {
    for i in from..from + n {
        assert!(model.write(db, vec![(key(i), Some(value(i, v, 300)))], sync));
    }
}

/// Log syncs that can be held at the storage, and a writeback error that the next log sync to
/// complete reports (Linux reports it to one fsync caller; later ones succeed).
#[derive(Debug, Default)]
struct SyncHook {
    state: Mutex<HookState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct HookState {
    hold_next: bool,
    holding: bool,
    release: bool,
    error_pending: bool,
}

impl SyncHook {
    fn update(&self, f: impl FnOnce(&mut HookState)) {
        f(&mut self.state.lock().unwrap());
        self.changed.notify_all();
    }

    fn wait_until(&self, f: impl Fn(&HookState) -> bool) {
        let mut st = self.state.lock().unwrap();
        while !f(&st) {
            st = self.changed.wait(st).unwrap();
        }
    }
}

#[derive(Debug, Clone)]
struct HookedStorage {
    inner: FaultyStorage,
    hook: Arc<SyncHook>,
}

#[derive(Debug)]
struct HookedFile {
    inner: FileHandle,
    hook: Arc<SyncHook>,
}

impl Storage for HookedStorage {
    fn open(&self, name: &str, mode: OpenMode) -> shaledb::Result<FileHandle> {
        let inner = self.inner.open(name, mode)?;
        if !name.starts_with("wal-") {
            return Ok(inner);
        }
        Ok(Arc::new(HookedFile {
            inner,
            hook: self.hook.clone(),
        }))
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

impl StorageFile for HookedFile {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> shaledb::Result<usize> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, data: &[u8]) -> shaledb::Result<()> {
        self.inner.write_at(offset, data)
    }
    fn sync(&self) -> shaledb::Result<()> {
        {
            let mut st = self.hook.state.lock().unwrap();
            if st.hold_next {
                st.hold_next = false;
                st.holding = true;
                self.hook.changed.notify_all();
                while !st.release {
                    st = self.hook.changed.wait(st).unwrap();
                }
                st.holding = false;
            }
        }
        let r = self.inner.sync();
        let mut st = self.hook.state.lock().unwrap();
        if std::mem::take(&mut st.error_pending) {
            return Err(shaledb::Error::io(
                "sync",
                self.inner.name(),
                std::io::Error::other("writeback error (reported once)"),
            ));
        }
        r
    }
    fn size(&self) -> shaledb::Result<u64> {
        self.inner.size()
    }
    fn truncate(&self, len: u64) -> shaledb::Result<()> {
        self.inner.truncate(len)
    }
}

fn hooked() -> (HookedStorage, Arc<SyncHook>) {
    let hook = Arc::new(SyncHook::default());
    let s = HookedStorage {
        inner: faulty(),
        hook: hook.clone(),
    };
    (s, hook)
}

/// Failure 1: the group-commit leader synced the log while a memtable switch synced the same
/// file; the switch got the writeback error, the leader's fsync then succeeded, and its writer
/// was told "durable". Now every sync of a log goes through one gate that remembers a failure.
#[test]
fn a_synced_write_fails_when_any_sync_of_its_log_reported_the_error() {
    let (s, hook) = hooked();
    let db = Db::open_storage(Arc::new(s), options()).unwrap();
    db.put(b"before", b"x").unwrap();
    hook.update(|st| st.hold_next = true);
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || db.put_opt(b"synced", b"1", WriteOptions::SYNC))
    };
    hook.wait_until(|st| st.holding);
    // The writeback of the log failed; the next fsync to complete reports it.
    hook.update(|st| st.error_pending = true);
    let switcher = {
        let db = db.clone();
        std::thread::spawn(move || db.seal_memtable())
    };
    // Give the switch every chance to sync the log (and take the error) first.
    std::thread::sleep(Duration::from_millis(100));
    hook.update(|st| st.release = true);
    let synced = writer.join().unwrap();
    let switched = switcher.join().unwrap();
    assert!(
        synced.is_err(),
        "a synced write was acknowledged past a failed sync"
    );
    assert!(
        switched.is_err(),
        "the switch synced a log whose sync failed"
    );
    assert!(db.put(b"later", b"y").is_err(), "the database is poisoned");
}

/// `sync: true` writes become visible when their fsync returned, as in LevelDB and RocksDB: a
/// reader never sees a write that a failed sync could still take away.
#[test]
fn a_synced_write_is_invisible_until_its_sync_returned() {
    let (s, hook) = hooked();
    let db = Db::open_storage(Arc::new(s), options()).unwrap();
    hook.update(|st| st.hold_next = true);
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || db.put_opt(b"k", b"v", WriteOptions::SYNC))
    };
    hook.wait_until(|st| st.holding);
    assert_eq!(db.get(b"k").unwrap(), None, "visible while its sync runs");
    assert_eq!(db.iter(Default::default()).unwrap().count(), 0);
    hook.update(|st| st.release = true);
    writer.join().unwrap().unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

/// Failure 2: a failed log creation (disk full during rotation) left an empty log; a reopen
/// while the disk was still full created its new log and failed at the manifest; from then on
/// every open failed ("WAL is damaged ... although newer WALs follow it"). Open is restartable.
#[test]
fn failed_rotations_and_failed_reopens_on_a_full_disk_leave_a_database_that_opens_later() {
    let s = faulty();
    let db = open(&s).unwrap();
    let mut model = Model::default();
    fill(&db, &mut model, 0, 50, 0, true);
    s.fail_writes_after_bytes(0);
    assert!(db.seal_memtable().is_err(), "the new log cannot be written");
    assert!(names(&s, ".log").len() >= 2, "an empty log is left behind");
    drop(db);
    // Reopens on a disk that is still full fail at different steps; power losses in between.
    for (round, budget) in [0u64, 60, 200, 1_000, 4_000, 9_000].into_iter().enumerate() {
        s.reset_faults();
        s.fail_writes_after_bytes(budget);
        if let Ok(db) = open(&s) {
            drop(db);
        }
        s.reset_faults();
        if round % 2 == 1 {
            s.crash_torn(round as u64).unwrap();
        }
    }
    s.reset_faults();
    let db = open(&s).expect("the database opens once space is back");
    model.check(&scan(&db), model.durable_upto).unwrap();
}

/// Failure 4: a power loss that lost a middle page of the log's never-synced tail while a
/// later page persisted (writeback reorders pages) was taken for corruption: the database
/// refused to open. Damage in unsynced data is a torn tail; the synced writes are all there.
#[test]
fn a_lost_page_in_the_unsynced_log_tail_opens_with_every_synced_write() {
    let s = faulty();
    let db = open(&s).unwrap();
    let mut model = Model::default();
    fill(&db, &mut model, 0, 20, 0, true);
    fill(&db, &mut model, 20, 100, 0, false);
    s.arm(1, Fault::Crash); // the process dies
    drop(db);
    s.reset_faults();
    let live = names(&s, ".log").pop().unwrap();
    let f = s.open(&live, OpenMode::ReadWrite).unwrap();
    let size = data_end(&*f);
    // The synced part is ~20 records of ~330 bytes; a page well after it is lost.
    f.write_at(size / 2 / 4096 * 4096, &[0u8; 4096]).unwrap();
    drop(f);
    let db = open(&s).expect("a torn tail, not corruption");
    let kept = model.check(&scan(&db), model.durable_upto).unwrap();
    assert!(
        kept < model.attempts.len(),
        "the writes after the lost page are cut"
    );
}

/// Failure 5: a failed manifest sync in keyspace creation, `flush` or `compact_range` did not
/// poison; the manifest writer then refused every edit, the background thread stopped quietly,
/// and each flush attempt wrote a new table that was never deleted. Now any failed manifest
/// write poisons, and orphan tables are removed at the next open.
#[test]
fn a_failed_manifest_sync_poisons_and_leaves_no_orphan_table() {
    for op in ["keyspace", "flush", "compact_range"] {
        let s = faulty();
        let db = open(&s).unwrap();
        let mut model = Model::default();
        fill(&db, &mut model, 0, 40, 0, true);
        // The manifest's second call is its sync (its first, the write of the edit).
        s.arm_on("MANIFEST-", 2, Fault::Error);
        let result = match op {
            "keyspace" => db.keyspace("events").map(drop),
            "flush" => db.flush(),
            _ => db.compact_range(None, None),
        };
        assert!(result.is_err(), "{op}");
        assert!(s.fault_fired(), "{op}");
        s.reset_faults();
        let e = db.put(b"after", b"x").unwrap_err();
        assert_eq!(e.code(), "POISONED", "{op}: {e}");
        let tables = names(&s, ".sst").len();
        for _ in 0..3 {
            assert!(db.flush().is_err(), "{op}");
            assert!(db.maintain(Budget { bytes: 1 << 20 }).is_err(), "{op}");
        }
        assert_eq!(
            names(&s, ".sst").len(),
            tables,
            "{op}: no table per attempt"
        );
        drop(db);
        let db = open(&s).unwrap();
        model.check(&scan(&db), model.acked_upto).unwrap();
        let live: usize = db.stats().level_files.iter().sum();
        assert_eq!(
            names(&s, ".sst").len(),
            live,
            "{op}: orphan tables are removed"
        );
    }
}

/// Failure 7: a directory whose CURRENT was missing was taken for a new database: its tables
/// and manifest were deleted (5,000 keys gone, no error). It is corruption now, with a repair.
#[test]
fn a_directory_with_a_database_but_no_current_is_corruption_not_replaced() {
    let s = faulty();
    let db = open(&s).unwrap();
    let mut model = Model::default();
    fill(&db, &mut model, 0, 500, 0, false);
    db.close().unwrap();
    let files = s.list().unwrap().len();
    s.remove("CURRENT").unwrap();
    let e = open(&s).unwrap_err();
    assert_eq!(e.code(), "CORRUPTION", "{e}");
    assert!(e.to_string().contains("CURRENT"), "{e}");
    assert_eq!(s.list().unwrap().len(), files - 1, "nothing was deleted");
    // The repair the message describes: CURRENT naming the newest manifest.
    let manifest = names(&s, "")
        .into_iter()
        .rfind(|n| n.starts_with("MANIFEST-"))
        .unwrap();
    assert!(e.to_string().contains(&manifest), "{e}");
    let current = s.open("CURRENT", OpenMode::CreateNew).unwrap();
    current
        .write_at(0, format!("{manifest}\n").as_bytes())
        .unwrap();
    drop(current);
    let db = open(&s).unwrap();
    model.check(&scan(&db), model.acked_upto).unwrap();
}

/// The other side of failure 7: a creation interrupted at any I/O call (CURRENT not written
/// yet) leaves empty files only; the next open creates the database over them.
#[test]
fn a_creation_interrupted_at_any_io_call_opens_as_a_new_database() {
    for nth in 1.. {
        let s = faulty();
        s.arm(nth, Fault::Crash);
        let created = open(&s);
        let fired = s.fault_fired();
        drop(created);
        s.reset_faults();
        s.crash_torn(nth).unwrap();
        let db = open(&s).unwrap_or_else(|e| panic!("crash at call {nth}: {e}"));
        db.put(b"k", b"v").unwrap();
        assert_eq!(scan(&db).len(), 1);
        if !fired {
            break;
        }
    }
}

/// Writes until the database has two logs (an immutable memtable's and the live one's), then
/// closes it. Returns the storage, the logs oldest first, and the model.
fn two_logs() -> (FaultyStorage, Vec<String>, Model) {
    let s = faulty();
    let db = open(&s).unwrap();
    let mut model = Model::default();
    let mut i = 0;
    while names(&s, ".log").len() < 2 || i % 50 != 0 {
        fill(&db, &mut model, i, 1, 0, false);
        i += 1;
    }
    db.close().unwrap();
    let logs = names(&s, ".log");
    assert_eq!(logs.len(), 2);
    (s, logs, model)
}

/// Offsets of the records of log `name` (RecordIO), the log header's first.
fn record_offsets(s: &dyn Storage, name: &str) -> Vec<u64> {
    let f = s.open(name, OpenMode::Read).unwrap();
    let reader = shaledb::recordio::Reader::open(f, Default::default()).unwrap();
    let mut out = Vec::new();
    let mut at = 8;
    while let Ok(Some(rec)) = reader.read_at(at) {
        out.push(at);
        at = rec.next_offset;
    }
    out
}

/// Failure 8: an older log cut at a record boundary opened with a hole (writes 98-163 gone,
/// later ones present, no error). Sequence numbers are dense and logs are chained: the gap is
/// corruption naming the cut log.
#[test]
fn an_older_log_cut_at_a_record_boundary_is_corruption_not_a_hole() {
    let (s, logs, _) = two_logs();
    let older = &logs[0];
    let offsets = record_offsets(&s, older);
    let cut = offsets[offsets.len() / 2];
    s.open(older, OpenMode::ReadWrite)
        .unwrap()
        .truncate(cut)
        .unwrap();
    let e = open(&s).unwrap_err();
    assert_eq!(e.code(), "CORRUPTION", "{e}");
    assert!(e.to_string().contains(older.as_str()), "{e}");
}

/// Failure 8, deleting a log: whether it is the one the manifest's log number names or one an
/// older log is sealed into, its loss is detected (and the error names what points at it).
#[test]
fn a_deleted_log_is_corruption_not_a_silent_loss() {
    for which in [0, 1] {
        let (s, logs, _) = two_logs();
        s.remove(&logs[which]).unwrap();
        let e = open(&s).unwrap_err();
        assert_eq!(e.code(), "CORRUPTION", "{e}");
        let points_at_it = if which == 0 {
            "MANIFEST-"
        } else {
            logs[0].as_str()
        };
        assert!(e.to_string().contains(points_at_it), "{e}");
        assert!(e.to_string().contains(&logs[which]), "{e}");
    }
}

/// What cannot be detected, and why that is what a crash does anyway: the newest log cut at a
/// record boundary opens with a prefix of the writes — exactly the state of a crash before
/// those writes were synced (docs/FORMAT.md, "Recovery").
#[test]
fn the_newest_log_cut_at_a_record_boundary_opens_with_a_prefix_of_the_writes() {
    let (s, logs, model) = two_logs();
    let newest = &logs[1];
    let offsets = record_offsets(&s, newest);
    s.open(newest, OpenMode::ReadWrite)
        .unwrap()
        .truncate(offsets[offsets.len() / 2])
        .unwrap();
    let db = open(&s).unwrap();
    let kept = model.check(&scan(&db), 0).unwrap();
    assert!(kept < model.attempts.len());
}

/// Found by reading: tables were never directory-synced between their creation and the
/// manifest edit naming them, so a power loss right after a flush could leave a manifest that
/// names a table whose directory entry is gone.
#[test]
fn a_flushed_table_survives_a_power_loss_right_after_the_flush() {
    let s = faulty();
    let db = open(&s).unwrap();
    let mut model = Model::default();
    fill(&db, &mut model, 0, 100, 0, false);
    db.flush().unwrap();
    model.all_acked_durable();
    s.arm(1, Fault::Crash);
    drop(db);
    s.reset_faults();
    s.crash().unwrap();
    let db = open(&s).unwrap();
    model.check(&scan(&db), model.durable_upto).unwrap();
    assert_eq!(scan(&db).len(), 100);
}
