//! Behaviour of the storages: one conformance suite run against every implementation, then the
//! behaviours specific to `StdFsStorage` (names, lock files) and `FaultyStorage` (crashes and
//! injected faults).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::sync::Arc;

use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::Error;

/// A storage under test, plus whatever must live as long as it (a temporary directory).
struct Subject {
    storage: Arc<dyn Storage>,
    _dir: Option<tempfile::TempDir>,
}

fn memory() -> Subject {
    Subject {
        storage: Arc::new(MemoryStorage::new()),
        _dir: None,
    }
}

fn std_fs() -> Subject {
    let dir = tempfile::tempdir().unwrap();
    Subject {
        storage: Arc::new(StdFsStorage::open(dir.path().join("db")).unwrap()),
        _dir: Some(dir),
    }
}

fn faulty_memory() -> Subject {
    Subject {
        storage: Arc::new(FaultyStorage::new(Arc::new(MemoryStorage::new()))),
        _dir: None,
    }
}

fn faulty_std_fs() -> Subject {
    let Subject { storage, _dir } = std_fs();
    Subject {
        storage: Arc::new(FaultyStorage::new(storage)),
        _dir,
    }
}

/// The conformance suite: every storage must pass these.
mod storage_conformance {
    use super::*;

    fn read_all(s: &dyn Storage, name: &str) -> Vec<u8> {
        let f = s.open(name, OpenMode::Read).unwrap();
        let mut buf = vec![0; f.size().unwrap() as usize];
        f.read_exact_at(0, &mut buf).unwrap();
        buf
    }

    fn write_file(s: &dyn Storage, name: &str, data: &[u8]) {
        let f = s.open(name, OpenMode::Create).unwrap();
        f.write_at(0, data).unwrap();
    }

    pub fn create_new_refuses_an_existing_file(s: &dyn Storage) {
        s.open("a", OpenMode::CreateNew).unwrap();
        let err = s.open("a", OpenMode::CreateNew).unwrap_err();
        assert!(
            matches!(err, Error::AlreadyExists { ref file } if file == "a"),
            "{err}"
        );
    }

    pub fn create_truncates_an_existing_file(s: &dyn Storage) {
        write_file(s, "a", b"hello");
        let f = s.open("a", OpenMode::Create).unwrap();
        assert_eq!(f.size().unwrap(), 0);
        assert_eq!(read_all(s, "a"), b"");
    }

    pub fn read_and_read_write_of_a_missing_file_are_not_found(s: &dyn Storage) {
        for mode in [OpenMode::Read, OpenMode::ReadWrite] {
            let err = s.open("missing", mode).unwrap_err();
            assert!(
                matches!(err, Error::NotFound { ref file } if file == "missing"),
                "{err}"
            );
        }
    }

    pub fn read_write_keeps_existing_contents(s: &dyn Storage) {
        write_file(s, "a", b"hello");
        let f = s.open("a", OpenMode::ReadWrite).unwrap();
        f.write_at(5, b" world").unwrap();
        assert_eq!(read_all(s, "a"), b"hello world");
    }

    pub fn writes_are_visible_through_other_handles(s: &dyn Storage) {
        let w = s.open("a", OpenMode::Create).unwrap();
        let r = s.open("a", OpenMode::Read).unwrap();
        w.write_at(0, b"abc").unwrap();
        let mut buf = [0; 3];
        r.read_exact_at(0, &mut buf).unwrap();
        assert_eq!(&buf, b"abc");
        assert_eq!(r.size().unwrap(), 3);
        assert_eq!(w.name(), "a");
    }

    pub fn read_at_returns_a_short_count_at_end_of_file(s: &dyn Storage) {
        write_file(s, "a", b"0123456789");
        let f = s.open("a", OpenMode::Read).unwrap();
        let mut buf = [0; 8];
        assert_eq!(f.read_at(6, &mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"6789");
        assert_eq!(f.read_at(10, &mut buf).unwrap(), 0);
        assert_eq!(f.read_at(1000, &mut buf).unwrap(), 0);
        assert_eq!(f.read_at(u64::MAX, &mut buf).unwrap(), 0);
    }

    pub fn read_exact_at_past_the_end_is_an_unexpected_eof(s: &dyn Storage) {
        write_file(s, "a", b"0123");
        let f = s.open("a", OpenMode::Read).unwrap();
        let mut buf = [0; 8];
        match f.read_exact_at(0, &mut buf).unwrap_err() {
            Error::Io { source, .. } => {
                assert_eq!(source.kind(), std::io::ErrorKind::UnexpectedEof)
            }
            other => panic!("{other}"),
        }
    }

    pub fn a_gap_left_by_write_at_reads_as_zeros(s: &dyn Storage) {
        let f = s.open("a", OpenMode::Create).unwrap();
        f.write_at(4, b"xy").unwrap();
        assert_eq!(f.size().unwrap(), 6);
        assert_eq!(read_all(s, "a"), b"\0\0\0\0xy");
    }

    pub fn write_at_overwrites_in_place(s: &dyn Storage) {
        let f = s.open("a", OpenMode::Create).unwrap();
        f.write_at(0, b"hello").unwrap();
        f.write_at(1, b"EL").unwrap();
        assert_eq!(read_all(s, "a"), b"hELlo");
    }

    pub fn truncate_cuts_and_extends_with_zeros(s: &dyn Storage) {
        let f = s.open("a", OpenMode::Create).unwrap();
        f.write_at(0, b"hello").unwrap();
        f.truncate(2).unwrap();
        assert_eq!(read_all(s, "a"), b"he");
        f.truncate(4).unwrap();
        assert_eq!(read_all(s, "a"), b"he\0\0");
        f.sync().unwrap();
    }

    pub fn allocate_extends_with_zeros_never_shrinks_and_keeps_data(s: &dyn Storage) {
        let f = s.open("a", OpenMode::Create).unwrap();
        f.write_at(0, b"hello").unwrap();
        if !f.allocate(0, 4096).unwrap() {
            assert_eq!(
                read_all(s, "a"),
                b"hello",
                "a storage that does not preallocate"
            );
            return;
        }
        assert_eq!(f.size().unwrap(), 4096);
        let all = read_all(s, "a");
        assert_eq!(&all[..5], b"hello");
        assert!(all[5..].iter().all(|&b| b == 0));
        assert!(f.allocate(100, 10).unwrap());
        assert_eq!(f.size().unwrap(), 4096, "never shorter");
        f.write_at(4000, b"written").unwrap();
        assert_eq!(&read_all(s, "a")[4000..4007], b"written");
        f.sync().unwrap();
    }

    pub fn a_read_only_handle_refuses_writes(s: &dyn Storage) {
        write_file(s, "a", b"hello");
        let f = s.open("a", OpenMode::Read).unwrap();
        assert!(matches!(f.write_at(0, b"x"), Err(Error::Io { .. })));
        assert!(matches!(f.truncate(0), Err(Error::Io { .. })));
        assert_eq!(read_all(s, "a"), b"hello");
    }

    pub fn rename_replaces_the_target(s: &dyn Storage) {
        write_file(s, "a", b"new");
        write_file(s, "b", b"old");
        s.rename("a", "b").unwrap();
        assert!(!s.exists("a").unwrap());
        assert_eq!(read_all(s, "b"), b"new");
    }

    pub fn rename_of_a_missing_file_is_not_found(s: &dyn Storage) {
        let err = s.rename("missing", "b").unwrap_err();
        assert!(
            matches!(err, Error::NotFound { ref file } if file == "missing"),
            "{err}"
        );
    }

    pub fn remove_deletes_and_a_missing_file_is_not_found(s: &dyn Storage) {
        write_file(s, "a", b"x");
        assert!(s.exists("a").unwrap());
        s.remove("a").unwrap();
        assert!(!s.exists("a").unwrap());
        let err = s.remove("a").unwrap_err();
        assert!(
            matches!(err, Error::NotFound { ref file } if file == "a"),
            "{err}"
        );
    }

    pub fn list_names_every_file(s: &dyn Storage) {
        assert!(s.list().unwrap().is_empty());
        for name in ["000001.sst", "wal-000002.log", "MANIFEST-000003"] {
            write_file(s, name, b"x");
        }
        let mut names = s.list().unwrap();
        names.sort();
        assert_eq!(names, ["000001.sst", "MANIFEST-000003", "wal-000002.log"]);
        s.sync_dir().unwrap();
    }

    pub fn a_second_lock_fails_until_the_first_is_dropped(s: &dyn Storage) {
        let guard = s.lock("LOCK").unwrap();
        let err = s.lock("LOCK").unwrap_err();
        assert!(
            matches!(err, Error::Locked { ref file, .. } if file == "LOCK"),
            "{err}"
        );
        let other = s.lock("OTHER").unwrap();
        drop(guard);
        let again = s.lock("LOCK").unwrap();
        drop((again, other));
    }
}

/// Instantiates the conformance suite for one storage.
macro_rules! conformance_suite {
    ($module:ident, $make:expr) => {
        mod $module {
            use super::*;
            conformance_suite!(@tests $make;
                create_new_refuses_an_existing_file,
                create_truncates_an_existing_file,
                read_and_read_write_of_a_missing_file_are_not_found,
                read_write_keeps_existing_contents,
                writes_are_visible_through_other_handles,
                read_at_returns_a_short_count_at_end_of_file,
                read_exact_at_past_the_end_is_an_unexpected_eof,
                a_gap_left_by_write_at_reads_as_zeros,
                write_at_overwrites_in_place,
                truncate_cuts_and_extends_with_zeros,
                allocate_extends_with_zeros_never_shrinks_and_keeps_data,
                a_read_only_handle_refuses_writes,
                rename_replaces_the_target,
                rename_of_a_missing_file_is_not_found,
                remove_deletes_and_a_missing_file_is_not_found,
                list_names_every_file,
                a_second_lock_fails_until_the_first_is_dropped,
            );
        }
    };
    (@tests $make:expr; $($test:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                let subject = $make;
                storage_conformance::$test(&*subject.storage);
            }
        )*
    };
}

conformance_suite!(memory_storage, memory());
conformance_suite!(std_fs_storage, std_fs());
conformance_suite!(faulty_storage_over_memory, faulty_memory());
conformance_suite!(faulty_storage_over_std_fs, faulty_std_fs());

/// Behaviours specific to the on-disk storage.
mod std_fs_storage_only {
    use std::fs;
    use std::time::{Duration, SystemTime};

    use super::*;

    fn storage() -> (tempfile::TempDir, StdFsStorage) {
        let dir = tempfile::tempdir().unwrap();
        let s = StdFsStorage::open(dir.path().join("a").join("b")).unwrap();
        (dir, s)
    }

    /// The pid of a process that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn open_creates_the_directory_and_its_parents() {
        let (_dir, s) = storage();
        assert!(s.root().is_dir());
        StdFsStorage::open(s.root()).unwrap();
    }

    #[test]
    fn names_that_are_not_plain_are_invalid_arguments() {
        let (_dir, s) = storage();
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", "a\0b", "x..y", "C:x"] {
            let invalid = |r: shaledb::Result<()>| matches!(r, Err(Error::InvalidArgument(_)));
            assert!(
                invalid(s.open(bad, OpenMode::Create).map(drop)),
                "open {bad:?}"
            );
            assert!(invalid(s.exists(bad).map(drop)), "exists {bad:?}");
            assert!(invalid(s.remove(bad)), "remove {bad:?}");
            assert!(invalid(s.rename(bad, "ok")), "rename from {bad:?}");
            assert!(invalid(s.rename("ok", bad)), "rename to {bad:?}");
            assert!(invalid(s.lock(bad).map(drop)), "lock {bad:?}");
        }
    }

    #[test]
    fn list_skips_directories() {
        let (_dir, s) = storage();
        fs::create_dir(s.root().join("subdir")).unwrap();
        fs::write(s.root().join("file"), b"x").unwrap();
        assert_eq!(s.list().unwrap(), ["file"]);
    }

    #[test]
    fn the_lock_file_names_this_process() {
        let (_dir, s) = storage();
        let guard = s.lock("LOCK").unwrap();
        let text = fs::read_to_string(s.root().join("LOCK")).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("shaledb-lock 1"));
        assert_eq!(
            lines.next(),
            Some(format!("pid {}", std::process::id()).as_str())
        );
        assert!(lines.next().unwrap().starts_with("start "));
        assert!(text.ends_with('\n'));
        let err = s.lock("LOCK").unwrap_err().to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(guard);
        assert!(!s.root().join("LOCK").exists());
    }

    #[test]
    fn two_storages_on_one_directory_conflict() {
        let (_dir, s) = storage();
        let t = StdFsStorage::open(s.root()).unwrap();
        let _guard = s.lock("LOCK").unwrap();
        assert!(matches!(t.lock("LOCK"), Err(Error::Locked { .. })));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_left_by_a_dead_process_is_taken_over() {
        let (_dir, s) = storage();
        let pid = dead_pid();
        fs::write(
            s.root().join("LOCK"),
            format!("shaledb-lock 1\npid {pid}\nstart 12345\n"),
        )
        .unwrap();
        let guard = s.lock("LOCK").unwrap();
        let text = fs::read_to_string(s.root().join("LOCK")).unwrap();
        assert!(
            text.contains(&format!("pid {}\n", std::process::id())),
            "{text}"
        );
        drop(guard);
        assert!(!s.root().join("LOCK").exists());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_whose_pid_was_reused_is_taken_over() {
        let (_dir, s) = storage();
        // Our own pid, but another start time: a dead process whose pid we now have.
        fs::write(
            s.root().join("LOCK"),
            format!("shaledb-lock 1\npid {}\nstart 1\n", std::process::id()),
        )
        .unwrap();
        s.lock("LOCK").unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_held_by_a_live_process_is_refused() {
        let (_dir, s) = storage();
        // pid 1 always runs; start 0 means "start time unknown".
        fs::write(s.root().join("LOCK"), "shaledb-lock 1\npid 1\nstart 0\n").unwrap();
        let err = s.lock("LOCK").unwrap_err();
        assert!(
            matches!(err, Error::Locked { ref holder, .. } if holder == "pid 1"),
            "{err}"
        );
    }

    #[test]
    fn a_garbled_old_lock_is_taken_over() {
        let (_dir, s) = storage();
        let path = s.root().join("LOCK");
        fs::write(&path, b"").unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        s.lock("LOCK").unwrap();
    }

    #[test]
    fn a_garbled_fresh_lock_is_held_by_its_writer() {
        let (_dir, s) = storage();
        fs::write(s.root().join("LOCK"), b"shaledb-lo").unwrap();
        assert!(matches!(s.lock("LOCK"), Err(Error::Locked { .. })));
    }

    #[test]
    fn dropping_a_lock_that_was_taken_over_leaves_the_new_owner_alone() {
        let (_dir, s) = storage();
        let guard = s.lock("LOCK").unwrap();
        let other = "shaledb-lock 1\npid 1\nstart 0\n";
        fs::write(s.root().join("LOCK"), other).unwrap();
        drop(guard);
        assert_eq!(fs::read_to_string(s.root().join("LOCK")).unwrap(), other);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn bytes_written_through_a_mapping_of_reserved_space_are_in_the_file() {
        let (_dir, s) = storage();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        assert!(
            f.map_writable(0, 4096).unwrap().is_none(),
            "nothing is mapped before it is reserved"
        );
        f.write_at(0, b"head").unwrap();
        assert!(f.allocate(0, 64 * 1024).unwrap());
        let mut map = f
            .map_writable(3, 60_000)
            .unwrap()
            .expect("a reserved range maps");
        assert_eq!((map.offset(), map.end()), (3, 60_003));
        map.write_at(4, b"mapped").unwrap();
        map.write_at(60_000, b"end").unwrap();
        assert!(map.write_at(2, b"x").is_err(), "before the mapped bytes");
        assert!(map.write_at(60_001, b"xyz").is_err(), "past them");
        // Another handle sees the bytes at once: they are in the page cache.
        let r = s.open("wal", OpenMode::Read).unwrap();
        let mut buf = [0u8; 10];
        r.read_exact_at(0, &mut buf).unwrap();
        assert_eq!(&buf, b"headmapped");
        let mut end = [0u8; 3];
        r.read_exact_at(60_000, &mut end).unwrap();
        assert_eq!(&end, b"end");
        f.sync().unwrap();
        assert!(
            f.map_writable(0, 65 * 1024).unwrap().is_none(),
            "not past the reserved bytes"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_mapped_file_cannot_be_cut_below_its_mapping_through_its_handle() {
        let (_dir, s) = storage();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        assert!(f.allocate(0, 8192).unwrap());
        let map = f.map_writable(4096, 4096).unwrap().unwrap();
        assert_eq!(f.truncate(5000).unwrap_err().code(), "INVALID_ARGUMENT");
        f.truncate(8192).unwrap();
        drop(map);
        f.truncate(5000).unwrap();
        assert_eq!(f.size().unwrap(), 5000);
        assert!(
            f.map_writable(4096, 100).unwrap().is_some(),
            "below the cut"
        );
        assert!(
            f.map_writable(4096, 2000).unwrap().is_none(),
            "the cut released the reservation past it"
        );
    }

    #[test]
    fn sync_and_sync_dir_succeed_on_disk() {
        let (_dir, s) = storage();
        let f = s.open("a", OpenMode::CreateNew).unwrap();
        f.write_at(0, b"durable").unwrap();
        f.sync().unwrap();
        s.sync_dir().unwrap();
        s.open("a", OpenMode::Read).unwrap().sync().unwrap();
    }
}

/// Behaviours of the fault-injecting wrapper.
mod faulty_storage_only {
    use super::*;

    fn faulty() -> FaultyStorage {
        FaultyStorage::new(Arc::new(MemoryStorage::new()))
    }

    fn contents(s: &dyn Storage, name: &str) -> Vec<u8> {
        let f = s.open(name, OpenMode::Read).unwrap();
        let mut buf = vec![0; f.size().unwrap() as usize];
        f.read_exact_at(0, &mut buf).unwrap();
        buf
    }

    fn is_io(r: shaledb::Result<()>, kind: std::io::ErrorKind) -> bool {
        matches!(r, Err(Error::Io { ref source, .. }) if source.kind() == kind)
    }

    /// A file that is durable (created, synced, directory synced) with `data`.
    fn durable_file(s: &FaultyStorage, name: &str, data: &[u8]) -> shaledb::storage::FileHandle {
        let f = s.open(name, OpenMode::CreateNew).unwrap();
        f.write_at(0, data).unwrap();
        f.sync().unwrap();
        s.sync_dir().unwrap();
        f
    }

    #[test]
    fn crash_drops_bytes_written_after_last_sync() {
        let s = faulty();
        let f = durable_file(&s, "wal", b"synced");
        f.write_at(6, b"+lost").unwrap();
        assert_eq!(contents(&s, "wal"), b"synced+lost");
        s.crash().unwrap();
        assert_eq!(contents(&s, "wal"), b"synced");
    }

    #[test]
    fn crash_removes_a_synced_file_whose_directory_entry_was_never_synced() {
        let s = faulty();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        f.write_at(0, b"synced").unwrap();
        f.sync().unwrap();
        s.crash().unwrap();
        assert!(!s.exists("wal").unwrap());
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        f.write_at(0, b"synced").unwrap();
        f.sync().unwrap();
        s.sync_dir().unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "wal"), b"synced");
    }

    #[test]
    fn crash_removes_never_synced_new_files() {
        let s = faulty();
        let f = s.open("new", OpenMode::CreateNew).unwrap();
        f.write_at(0, b"data").unwrap();
        s.crash().unwrap();
        assert!(!s.exists("new").unwrap());
    }

    #[test]
    fn crash_keeps_an_empty_new_file_after_sync_dir() {
        let s = faulty();
        let f = s.open("new", OpenMode::CreateNew).unwrap();
        s.sync_dir().unwrap();
        f.write_at(0, b"data").unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "new"), b"");
    }

    #[test]
    fn crash_leaves_files_that_existed_before_wrapping_alone() {
        let inner = MemoryStorage::new();
        inner
            .open("old", OpenMode::Create)
            .unwrap()
            .write_at(0, b"old")
            .unwrap();
        let s = FaultyStorage::new(Arc::new(inner));
        let f = s.open("old", OpenMode::ReadWrite).unwrap();
        f.write_at(3, b"+new").unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "old"), b"old");
    }

    #[test]
    fn crash_keeps_renames_and_removes_only_after_sync_dir() {
        let s = faulty();
        durable_file(&s, "tmp", b"manifest");
        durable_file(&s, "gone", b"x");
        s.rename("tmp", "CURRENT").unwrap();
        s.remove("gone").unwrap();
        s.crash().unwrap();
        let mut names = s.list().unwrap();
        names.sort();
        assert_eq!(names, ["gone", "tmp"], "both undone");
        assert_eq!(
            contents(&s, "gone"),
            b"x",
            "a removed file comes back whole"
        );
        s.rename("tmp", "CURRENT").unwrap();
        s.remove("gone").unwrap();
        s.sync_dir().unwrap();
        s.crash().unwrap();
        let mut names = s.list().unwrap();
        names.sort();
        assert_eq!(names, ["CURRENT"]);
        assert_eq!(contents(&s, "CURRENT"), b"manifest");
    }

    #[test]
    fn crash_torn_keeps_or_undoes_each_unsynced_directory_entry_on_its_own() {
        let mut outcomes = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let s = faulty();
            durable_file(&s, "a", b"a");
            durable_file(&s, "b", b"b");
            s.rename("a", "a2").unwrap();
            s.remove("b").unwrap();
            s.crash_torn(seed).unwrap();
            let mut names = s.list().unwrap();
            names.sort();
            for n in &names {
                assert_eq!(contents(&s, n), &n.as_bytes()[..1], "seed {seed}");
            }
            outcomes.insert(names);
        }
        assert!(outcomes.len() >= 4, "{outcomes:?}");
    }

    #[test]
    fn crash_applies_to_a_renamed_file_under_its_new_name() {
        let s = faulty();
        let f = durable_file(&s, "tmp", b"synced");
        f.write_at(6, b"+lost").unwrap();
        s.rename("tmp", "final").unwrap();
        s.sync_dir().unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "final"), b"synced");
    }

    #[test]
    fn truncation_is_durable_once_synced() {
        let s = faulty();
        let f = durable_file(&s, "wal", b"0123456789");
        f.truncate(4).unwrap();
        f.write_at(4, b"xx").unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "wal"), b"0123456789");
        let f = s.open("wal", OpenMode::ReadWrite).unwrap();
        f.truncate(4).unwrap();
        f.sync().unwrap();
        f.write_at(4, b"xx").unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "wal"), b"0123");
    }

    #[test]
    fn allocated_bytes_are_zeros_after_any_crash_and_the_size_durable_once_synced() {
        for seed in 0..32 {
            let s = faulty();
            let f = durable_file(&s, "wal", b"synced");
            assert!(f.allocate(0, 3 * 4096).unwrap());
            s.crash_torn(seed).unwrap();
            let after = contents(&s, "wal");
            assert!(
                after.len() >= 6 && after.len() <= 3 * 4096,
                "{}",
                after.len()
            );
            assert_eq!(&after[..6], b"synced");
            assert!(after[6..].iter().all(|&b| b == 0), "seed {seed}: not zeros");
        }
        let s = faulty();
        let f = durable_file(&s, "wal", b"synced");
        assert!(f.allocate(0, 4096).unwrap());
        f.sync().unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "wal").len(), 4096);
    }

    #[test]
    fn an_armed_fault_fails_an_allocation_with_a_full_disk_and_changes_nothing() {
        let s = faulty();
        let f = durable_file(&s, "wal", b"synced");
        s.arm(1, shaledb::storage::faulty::Fault::Error);
        assert_eq!(f.allocate(0, 4096).unwrap_err().code(), "QUOTA");
        assert_eq!(contents(&s, "wal"), b"synced");
    }

    #[test]
    fn a_failed_sync_loses_the_dirty_pages_although_later_syncs_succeed() {
        let s = faulty();
        let f = durable_file(&s, "wal", b"synced");
        f.write_at(6, b"+dropped").unwrap();
        s.fail_next_sync();
        assert!(f.sync().is_err());
        f.write_at(8192, b"later").unwrap();
        f.sync().unwrap();
        assert_eq!(
            &contents(&s, "wal")[..14],
            b"synced+dropped",
            "the page cache has it"
        );
        s.crash().unwrap();
        let after = contents(&s, "wal");
        assert_eq!(after.len(), 8197, "the later sync made the size durable");
        assert_eq!(&after[..6], b"synced");
        assert!(
            after[6..8192].iter().all(|&b| b == 0),
            "a hole where the pages were"
        );
        assert_eq!(&after[8192..], b"later");
    }

    #[test]
    fn handles_fail_after_crash_and_new_opens_work() {
        let s = faulty();
        let f = durable_file(&s, "wal", b"abc");
        s.crash().unwrap();
        let mut buf = [0; 3];
        for result in [
            f.read_at(0, &mut buf).map(drop),
            f.write_at(0, b"x"),
            f.sync(),
            f.size().map(drop),
            f.truncate(0),
        ] {
            let err = result.unwrap_err();
            assert!(
                matches!(err, Error::Io { .. }) && err.to_string().contains("crashed"),
                "{err}"
            );
        }
        let g = s.open("wal", OpenMode::ReadWrite).unwrap();
        g.write_at(3, b"def").unwrap();
        assert_eq!(contents(&s, "wal"), b"abcdef");
    }

    #[test]
    fn crash_torn_keeps_synced_bytes_and_any_mix_of_unsynced_pages() {
        let mut kept_lengths = std::collections::BTreeSet::new();
        let mut holes_before_kept_data = 0;
        for seed in 0..64 {
            let s = faulty();
            let f = durable_file(&s, "wal", b"synced");
            f.write_at(6, &[0xAA; 20_000]).unwrap();
            s.crash_torn(seed).unwrap();
            let after = contents(&s, "wal");
            assert!(
                (6..=20_006).contains(&after.len()),
                "seed {seed}: {}",
                after.len()
            );
            assert_eq!(&after[..6], b"synced", "seed {seed}: synced bytes damaged");
            let first_loss = after[6..].iter().position(|&b| b != 0xAA);
            if let Some(at) = first_loss {
                if after[6 + at..].contains(&0xAA) {
                    holes_before_kept_data += 1;
                }
            }
            kept_lengths.insert(after.len());
        }
        assert!(kept_lengths.len() > 10, "sizes vary: {kept_lengths:?}");
        assert!(
            holes_before_kept_data > 0,
            "pages are written back in any order"
        );
    }

    #[test]
    fn crash_torn_is_deterministic_per_seed() {
        let run = |seed| {
            let s = faulty();
            for name in ["a", "b", "c"] {
                let f = durable_file(&s, name, b"base");
                let tail: Vec<u8> = (0..200u8).collect();
                f.write_at(4, &tail).unwrap();
            }
            let f = s.open("new", OpenMode::CreateNew).unwrap();
            f.write_at(0, &[7; 50]).unwrap();
            s.crash_torn(seed).unwrap();
            let mut names = s.list().unwrap();
            names.sort();
            names
                .into_iter()
                .map(|n| (contents(&s, &n), n))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(42), run(42));
        assert!((0..8).any(|seed| run(seed) != run(seed + 1)));
    }

    #[test]
    fn a_failed_sync_does_not_make_data_durable() {
        let s = faulty();
        let f = durable_file(&s, "wal", b"synced");
        f.write_at(6, b"+lost").unwrap();
        s.fail_next_sync();
        assert!(is_io(f.sync(), std::io::ErrorKind::Other));
        assert_eq!(s.syncs(), 1);
        s.crash().unwrap();
        assert_eq!(contents(&s, "wal"), b"synced");
    }

    #[test]
    fn fail_syncs_fails_exactly_n_syncs() {
        let s = faulty();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        s.fail_syncs(2);
        assert!(f.sync().is_err());
        assert!(f.sync().is_err());
        f.sync().unwrap();
        assert_eq!(s.syncs(), 1);
    }

    #[test]
    fn a_full_disk_fails_writes_beyond_the_budget() {
        let s = faulty();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        s.fail_writes_after_bytes(10);
        f.write_at(0, b"123456").unwrap();
        assert!(is_io(
            f.write_at(6, b"789abc"),
            std::io::ErrorKind::StorageFull
        ));
        assert_eq!(contents(&s, "wal"), b"123456789a");
        assert!(is_io(f.write_at(10, b"x"), std::io::ErrorKind::StorageFull));
        assert_eq!(s.writes(), 1);
        s.reset_faults();
        f.write_at(10, b"x").unwrap();
        assert_eq!(contents(&s, "wal"), b"123456789ax");
    }

    #[test]
    fn a_torn_write_writes_a_prefix_then_fails() {
        let s = faulty();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        s.tear_next_write(3);
        assert!(is_io(f.write_at(0, b"abcdef"), std::io::ErrorKind::Other));
        assert_eq!(contents(&s, "wal"), b"abc");
        f.write_at(3, b"def").unwrap();
        assert_eq!(contents(&s, "wal"), b"abcdef");
    }

    #[test]
    fn counters_count_successful_writes_and_syncs() {
        let s = faulty();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        f.write_at(0, b"a").unwrap();
        f.write_at(1, b"b").unwrap();
        f.sync().unwrap();
        s.sync_dir().unwrap();
        assert_eq!((s.writes(), s.syncs(), s.dir_syncs()), (2, 1, 1));
    }

    #[test]
    fn faults_can_be_armed_from_another_thread_while_handles_are_open() {
        let s = faulty();
        let f = s.open("wal", OpenMode::CreateNew).unwrap();
        let control = s.clone();
        std::thread::spawn(move || control.fail_next_sync())
            .join()
            .unwrap();
        assert!(f.sync().is_err());
        let writers: Vec<_> = (0..4u64)
            .map(|i| {
                let f = f.clone();
                std::thread::spawn(move || f.write_at(i * 8, &[i as u8; 8]).unwrap())
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(s.writes(), 4);
    }
}
