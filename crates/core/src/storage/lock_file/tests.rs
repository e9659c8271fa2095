//! Tests of the lock-file protocol: on disk through `StdFsStorage` (never seen partial,
//! leftovers, the fallback without hard links, unparseable files), and over a scripted host
//! (`FakeHost`) for what a real system makes hard to arrange: every answer about a process, a
//! platform without `/proc`, a lock that changes hands while it is judged, a host that fails.

use std::collections::HashMap;
use std::fs::{self, File};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime};

use super::*;
use crate::storage::memory::MemoryStorage;
use crate::storage::std_fs::StdFsStorage;
use crate::storage::FileHandle;

#[test]
fn lock_text_round_trips() {
    let owner = Owner {
        pid: 4242,
        start: 987_654,
        thread: None,
    };
    assert_eq!(owner.to_text(), "shaledb-lock 1\npid 4242\nstart 987654\n");
    assert_eq!(Owner::parse(owner.to_text().as_bytes()), Some(owner));
}

#[test]
fn lock_parse_defaults_start_and_ignores_unknown_lines() {
    assert_eq!(
        Owner::parse(b"shaledb-lock 2\nhost x\npid 7\n"),
        Some(Owner {
            pid: 7,
            start: 0,
            thread: None
        })
    );
    assert_eq!(
        Owner::parse(b"shaledb-lock 1\r\npid +7 \r\nstart 18446744073709551615"),
        Some(Owner {
            pid: 7,
            start: u64::MAX,
            thread: None
        })
    );
}

#[test]
fn lock_parse_rejects_garbage() {
    for bad in [
        &b""[..],
        b"shaledb-lock 1\n",
        b"shaledb-lock 1\npid\n",
        b"shaledb-lock 1\npid x\n",
        b"hello\npid 1\n",
        b"shaledb-lock 1\npid 1\nstart -3\n",
        b"shaledb-lock 1\npid 4294967296\n",
        b"shaledb-lock 1\npid 1\nstart 18446744073709551616\n",
        b"\xef\xbb\xbfshaledb-lock 1\npid 1\n",
        b"\xff\xfe",
    ] {
        assert_eq!(Owner::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn parse_stat_counts_fields_after_the_last_parenthesis() {
    let stat = "123 (a) b (c)) S 1 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 55555 \
                1000 200";
    assert_eq!(parse_stat(stat), Some(('S', 55555)));
    assert_eq!(parse_stat("garbage"), None);
    assert_eq!(parse_stat("1 (x) S 1 2"), None);
}

#[test]
fn the_protocol_text_states_these_limits() {
    assert_eq!(GARBLED_LOCK_STALE_AFTER, Duration::from_secs(5));
    assert_eq!(LOCK_ATTEMPTS, 8);
    assert_eq!(MAX_LOCK_FILE, 4096);
    // docs/FORMAT.md is the one description of the protocol: it must say the same.
    let format =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/FORMAT.md")).unwrap();
    let section = format
        .split("\n## LOCK file\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap();
    let words = section.split_whitespace().collect::<Vec<_>>().join(" ");
    for phrase in [
        "Read `NAME` (at most 4 KiB)",
        "modification time is at least 5 seconds old",
        "Give up (locked) after 8 rounds",
        "`NAME.<pid>.<16 random hex digits>.tmp`",
        "shaledb-lock 1 pid <decimal process id> start <decimal process start time>",
    ] {
        assert!(
            words.contains(phrase),
            "docs/FORMAT.md no longer says {phrase:?}"
        );
    }
}

// ---- On disk (StdFsStorage) ----

/// The entries of `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn disk() -> (tempfile::TempDir, StdFsStorage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = StdFsStorage::open(dir.path()).unwrap();
    (dir, storage)
}

#[cfg(any(unix, windows))]
fn my_text(storage: &StdFsStorage) -> String {
    Owner::current(storage).unwrap().to_text()
}

#[cfg(any(unix, windows))]
#[test]
fn a_lock_file_is_never_seen_empty_or_partial() {
    let (dir, storage) = disk();
    let path = dir.path().join("LOCK");
    let stop = Arc::new(AtomicBool::new(false));
    // Complete reads so far: the writer goes on until the reader has seen the file often (on a
    // loaded machine the reader may get little time; a fixed count of cycles was flaky).
    let seen = Arc::new(AtomicU64::new(0));
    let reader = {
        let (path, stop, seen) = (path.clone(), Arc::clone(&stop), Arc::clone(&seen));
        std::thread::spawn(move || {
            let mut incomplete = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if let Ok(bytes) = fs::read(&path) {
                    if Owner::parse(&bytes).is_some() {
                        seen.fetch_add(1, Ordering::Relaxed);
                    } else {
                        incomplete.push(bytes);
                    }
                }
            }
            incomplete
        })
    };
    // Many acquire/release cycles while the reader polls; long enough for it to see the file
    // many times (the old create-then-write protocol showed it empty within a few hundred).
    let started = Instant::now();
    let mine = my_text(&storage);
    let mut cycles = 0;
    while (cycles < 3000 || seen.load(Ordering::Relaxed) < 200)
        && started.elapsed() < Duration::from_secs(30)
    {
        let lock = storage.lock("LOCK").unwrap();
        assert_eq!(fs::read(&path).unwrap(), mine.as_bytes());
        drop(lock);
        cycles += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let incomplete = reader.join().unwrap();
    assert_eq!(incomplete, Vec::<Vec<u8>>::new(), "seen incomplete");
    assert!(
        seen.load(Ordering::Relaxed) > 0,
        "the reader never saw the lock file"
    );
    assert_eq!(
        entries(dir.path()),
        Vec::<String>::new(),
        "no temporary file left"
    );
}

#[cfg(any(unix, windows))]
#[test]
fn leftover_temporary_files_do_not_block_the_lock() {
    let (dir, storage) = disk();
    let path = dir.path().join("LOCK");
    let me = Owner::current(&storage).unwrap();
    let leftovers = [
        format!("LOCK.{}.0000000000000000.tmp", me.pid),
        "LOCK.1.ffffffffffffffff.tmp".to_string(),
    ];
    fs::write(dir.path().join(&leftovers[0]), me.to_text()).unwrap();
    fs::write(dir.path().join(&leftovers[1]), "").unwrap();
    let lock = storage.lock("LOCK").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), me.to_text());
    let mut expected = vec![
        "LOCK".to_string(),
        leftovers[0].clone(),
        leftovers[1].clone(),
    ];
    expected.sort();
    assert_eq!(entries(dir.path()), expected, "only LOCK was added");
    drop(lock);
    assert!(!path.exists());
    // Still no obstacle to the next one.
    drop(storage.lock("LOCK").unwrap());
}

#[cfg(any(unix, windows))]
#[test]
fn a_held_lock_refuses_and_leaves_no_temporary_file() {
    let (dir, storage) = disk();
    let _held = storage.lock("LOCK").unwrap();
    for _ in 0..3 {
        let e = storage.lock("LOCK").unwrap_err();
        assert!(
            matches!(&e, Error::Locked { holder, .. } if holder.ends_with("(this process)")),
            "{e:?}"
        );
    }
    assert_eq!(entries(dir.path()), vec!["LOCK".to_string()]);
}

/// `StdFsStorage` on a file system without hard links: `hard_link` fails with `kind`.
#[derive(Debug, Clone)]
struct NoLinks {
    disk: StdFsStorage,
    kind: io::ErrorKind,
}

impl Storage for NoLinks {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        self.disk.open(name, mode)
    }
    fn exists(&self, name: &str) -> Result<bool> {
        self.disk.exists(name)
    }
    fn remove(&self, name: &str) -> Result<()> {
        self.disk.remove(name)
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.disk.rename(from, to)
    }
    fn list(&self) -> Result<Vec<String>> {
        self.disk.list()
    }
    fn sync_dir(&self) -> Result<()> {
        self.disk.sync_dir()
    }
    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
        acquire(self, name)
    }
}

impl LockPrimitives for NoLinks {
    fn hard_link(&self, _existing: &str, name: &str) -> Result<()> {
        Err(Error::io("link", name, self.kind.into()))
    }
    fn read_small(&self, name: &str, max: usize) -> Result<SmallFile> {
        self.disk.read_small(name, max)
    }
    fn process_id(&self) -> Result<u32> {
        self.disk.process_id()
    }
    fn process_stat(&self, pid: Option<u32>) -> ProcessStat {
        self.disk.process_stat(pid)
    }
    fn random_u64(&self) -> u64 {
        self.disk.random_u64()
    }
}

#[cfg(any(unix, windows))]
#[test]
fn without_hard_links_the_lock_falls_back_to_create_and_write() {
    for kind in [
        io::ErrorKind::Unsupported,
        io::ErrorKind::PermissionDenied,
        io::ErrorKind::CrossesDevices,
        io::ErrorKind::NotFound,
        io::ErrorKind::Other,
    ] {
        let (dir, disk) = disk();
        let path = dir.path().join("LOCK");
        let no_links = NoLinks {
            disk: disk.clone(),
            kind,
        };
        let lock = no_links.lock("LOCK").unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            my_text(&disk),
            "{kind:?}"
        );
        assert_eq!(entries(dir.path()), vec!["LOCK".to_string()], "{kind:?}");
        // Both paths exclude each other.
        let e = no_links.lock("LOCK").unwrap_err();
        assert!(matches!(e, Error::Locked { .. }), "{e:?}");
        let e = disk.lock("LOCK").unwrap_err();
        assert!(matches!(e, Error::Locked { .. }), "{e:?}");
        drop(lock);
        assert!(!path.exists(), "{kind:?}");
        let linked = disk.lock("LOCK").unwrap();
        let e = no_links.lock("LOCK").unwrap_err();
        assert!(matches!(e, Error::Locked { .. }), "{e:?}");
        drop(linked);
        assert_eq!(entries(dir.path()), Vec::<String>::new(), "{kind:?}");
    }
}

#[cfg(any(unix, windows))]
#[test]
fn an_unparseable_lock_file_is_held_while_young_and_stale_once_5_s_old() {
    let (dir, storage) = disk();
    let path = dir.path().join("LOCK");
    fs::write(&path, "shaledb-lock 1\npi").unwrap();
    let set_modified = |t: SystemTime| {
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    };
    let e = storage.lock("LOCK").unwrap_err();
    assert!(
        matches!(&e, Error::Locked { holder, .. } if holder.contains("writing the lock file")),
        "{e:?}"
    );
    set_modified(SystemTime::now() + Duration::from_secs(60)); // in the future: unknown age
    assert!(matches!(storage.lock("LOCK"), Err(Error::Locked { .. })));
    set_modified(SystemTime::now() - Duration::from_secs(6));
    let lock = storage.lock("LOCK").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), my_text(&storage));
    drop(lock);
    assert!(!path.exists());
}

#[cfg(target_os = "linux")]
#[test]
fn own_start_time_is_known_on_linux() {
    let (_dir, storage) = disk();
    let me = Owner::current(&storage).unwrap();
    assert_eq!(me.pid, std::process::id());
    assert!(me.start > 0, "{me:?}");
    assert_eq!(liveness(&storage, &me), Liveness::Alive);
    let reused = Owner {
        start: me.start + 1,
        ..me
    };
    assert_eq!(liveness(&storage, &reused), Liveness::Dead);
    assert_eq!(
        storage.display_name("LOCK"),
        storage.root().join("LOCK").display().to_string()
    );
}

// ---- Over a scripted host ----

/// How [`FakeHost::hard_link`] behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    /// Links (by copying the bytes: the memory storage has no links).
    Work,
    /// Another process makes `NAME` appear first, held by a process that is gone, every time.
    LoseTheRace,
}

#[derive(Debug)]
struct FakeState {
    pid: u32,
    /// `None`: a platform without `/proc`. Processes not listed are gone.
    processes: Option<HashMap<u32, ProcessStat>>,
    /// Ages of files by name; unlisted files are new.
    ages: HashMap<String, Duration>,
    links: Links,
    /// When asked about this pid, first replace `LOCK` with these bytes (the lock changes
    /// hands while it is judged).
    rewrite_when_asked: Option<(u32, Vec<u8>)>,
    /// `lock_held` fails.
    refuse_held: bool,
    /// What `lock_held` was told, and `remove_if_unchanged` forgot.
    held: Vec<(String, Vec<u8>)>,
    /// The next `random_u64`: 0, 1, 2, ...
    next_random: u64,
    /// `thread_id`: the calling thread (`None`: locks are the process's).
    thread: Option<u64>,
    /// The threads of this process that run.
    live_threads: Vec<u64>,
}

/// A host over a memory storage whose answers about processes and ages are scripted.
#[derive(Debug, Clone)]
struct FakeHost {
    files: MemoryStorage,
    state: Arc<Mutex<FakeState>>,
}

/// A `/proc/<pid>/stat` line with `state` and `start`.
fn stat(pid: u32, state: char, start: u64) -> ProcessStat {
    ProcessStat::Text(format!(
        "{pid} (cmd with ) and spaces) {state} 1 {pid} {pid} 0 -1 4194560 100 0 0 0 1 2 0 0 20 \
         0 1 0 {start} 1000 200"
    ))
}

const MY_PID: u32 = 100;
const MY_START: u64 = 5000;

impl FakeHost {
    fn new() -> FakeHost {
        let processes = HashMap::from([(MY_PID, stat(MY_PID, 'R', MY_START))]);
        FakeHost {
            files: MemoryStorage::new(),
            state: Arc::new(Mutex::new(FakeState {
                pid: MY_PID,
                processes: Some(processes),
                ages: HashMap::new(),
                links: Links::Work,
                rewrite_when_asked: None,
                refuse_held: false,
                held: Vec::new(),
                next_random: 0,
                thread: None,
                live_threads: Vec::new(),
            })),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, FakeState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn put(&self, name: &str, bytes: &[u8]) {
        self.files
            .open(name, OpenMode::Create)
            .unwrap()
            .write_at(0, bytes)
            .unwrap();
    }

    fn get(&self, name: &str) -> Option<Vec<u8>> {
        let file = self.files.open(name, OpenMode::Read).ok()?;
        let mut bytes = vec![0; file.size().unwrap() as usize];
        file.read_exact_at(0, &mut bytes).unwrap();
        Some(bytes)
    }

    fn names(&self) -> Vec<String> {
        let mut names = self.files.list().unwrap();
        names.sort();
        names
    }

    /// A process `pid` started at `start`, in state `state`.
    fn run(&self, pid: u32, state: char, start: u64) {
        if let Some(processes) = self.state().processes.as_mut() {
            processes.insert(pid, stat(pid, state, start));
        }
    }

    fn mine() -> String {
        Owner {
            pid: MY_PID,
            start: MY_START,
            thread: None,
        }
        .to_text()
    }
}

fn text(pid: u32, start: u64) -> String {
    Owner {
        pid,
        start,
        thread: None,
    }
    .to_text()
}

impl Storage for FakeHost {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        self.files.open(name, mode)
    }
    fn exists(&self, name: &str) -> Result<bool> {
        self.files.exists(name)
    }
    fn remove(&self, name: &str) -> Result<()> {
        self.files.remove(name)
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.files.rename(from, to)
    }
    fn list(&self) -> Result<Vec<String>> {
        self.files.list()
    }
    fn sync_dir(&self) -> Result<()> {
        Ok(())
    }
    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
        acquire(self, name)
    }
}

impl LockPrimitives for FakeHost {
    fn hard_link(&self, existing: &str, name: &str) -> Result<()> {
        if self.state().links == Links::LoseTheRace {
            self.put(name, text(7, 1).as_bytes());
        }
        let bytes = self.get(existing).ok_or_else(|| Error::NotFound {
            file: existing.into(),
        })?;
        self.files
            .open(name, OpenMode::CreateNew)?
            .write_at(0, &bytes)
    }

    fn read_small(&self, name: &str, max: usize) -> Result<SmallFile> {
        let mut bytes = self
            .get(name)
            .ok_or_else(|| Error::NotFound { file: name.into() })?;
        bytes.truncate(max);
        let age = Some(self.state().ages.get(name).copied().unwrap_or_default());
        Ok(SmallFile { bytes, age })
    }

    fn remove_if_unchanged(&self, name: &str, bytes: &[u8], limit: usize) -> Result<bool> {
        self.state()
            .held
            .retain(|(n, b)| !(n == name && b.as_slice() == bytes));
        let same = self.get(name).is_some_and(|mut seen| {
            seen.truncate(limit);
            seen == bytes
        });
        if same {
            self.files.remove(name)?;
        }
        Ok(same)
    }

    fn lock_held(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let mut state = self.state();
        if state.refuse_held {
            return Err(Error::io("held", name, io::Error::other("refused")));
        }
        state.held.push((name.to_owned(), bytes.to_vec()));
        Ok(())
    }

    fn process_id(&self) -> Result<u32> {
        Ok(self.state().pid)
    }

    fn process_stat(&self, pid: Option<u32>) -> ProcessStat {
        let pid = pid.unwrap_or(MY_PID);
        let rewrite = {
            let mut state = self.state();
            match &state.rewrite_when_asked {
                Some((asked, _)) if *asked == pid => state.rewrite_when_asked.take(),
                _ => None,
            }
        };
        if let Some((_, bytes)) = rewrite {
            self.put("LOCK", &bytes);
        }
        match &self.state().processes {
            None => ProcessStat::Unsupported,
            Some(processes) => processes
                .get(&pid)
                .cloned()
                .unwrap_or(ProcessStat::NoProcess),
        }
    }

    fn random_u64(&self) -> u64 {
        let mut state = self.state();
        state.next_random += 1;
        state.next_random - 1
    }

    fn display_name(&self, name: &str) -> String {
        format!("/db/{name}")
    }

    fn thread_id(&self) -> Option<u64> {
        self.state().thread
    }

    fn thread_alive(&self, pid: u32, thread: u64) -> bool {
        let state = self.state();
        pid == state.pid && state.live_threads.contains(&thread)
    }
}

fn holder_of(result: Result<Box<dyn StorageLock>>) -> String {
    match result {
        Err(Error::Locked { holder, .. }) => holder,
        Err(e) => panic!("expected Locked, got {e:?}"),
        Ok(_) => panic!("expected Locked, got the lock"),
    }
}

#[test]
fn a_lock_is_written_with_this_process_and_its_start_and_the_host_is_told() {
    let host = FakeHost::new();
    let lock = host.lock("LOCK").unwrap();
    assert_eq!(host.get("LOCK").unwrap(), FakeHost::mine().as_bytes());
    assert_eq!(host.names(), ["LOCK"], "the temporary file is gone");
    assert_eq!(
        host.state().held,
        [("LOCK".to_owned(), FakeHost::mine().into_bytes())]
    );
    assert_eq!(holder_of(host.lock("LOCK")), "pid 100 (this process)");
    drop(lock);
    assert_eq!(host.names(), Vec::<String>::new());
    assert_eq!(
        host.state().held,
        [],
        "released through remove_if_unchanged"
    );
}

#[test]
fn a_lock_of_a_process_that_is_gone_a_zombie_or_another_start_is_taken_over() {
    for (what, setup) in [
        ("gone", None),
        ("zombie", Some(('Z', 77))),
        ("dead", Some(('X', 77))),
        ("pid reused", Some(('S', 78))),
    ] {
        let host = FakeHost::new();
        if let Some((state, start)) = setup {
            host.run(200, state, start);
        }
        host.put("LOCK", text(200, 77).as_bytes());
        let lock = host.lock("LOCK").unwrap();
        assert_eq!(
            host.get("LOCK").unwrap(),
            FakeHost::mine().as_bytes(),
            "{what}"
        );
        drop(lock);
    }
}

#[test]
fn a_lock_of_a_running_process_is_held_and_names_its_pid() {
    for (what, recorded_start, process) in [
        ("same start", 77, Some(stat(200, 'S', 77))),
        ("no recorded start", 0, Some(stat(200, 'S', 99))),
        ("unreadable status", 77, Some(ProcessStat::Unreadable)),
        (
            "unparseable status",
            77,
            Some(ProcessStat::Text("200 (x) S".into())),
        ),
    ] {
        let host = FakeHost::new();
        if let (Some(processes), Some(p)) = (host.state().processes.as_mut(), process) {
            processes.insert(200, p);
        }
        host.put("LOCK", text(200, recorded_start).as_bytes());
        assert_eq!(holder_of(host.lock("LOCK")), "pid 200", "{what}");
        assert_eq!(
            host.get("LOCK").unwrap(),
            text(200, recorded_start).as_bytes()
        );
        assert_eq!(host.names(), ["LOCK"], "{what}: no temporary file left");
    }
}

#[test]
fn where_liveness_cannot_be_checked_a_lock_is_held_and_the_message_says_what_to_remove() {
    let host = FakeHost::new();
    host.state().processes = None;
    host.put("LOCK", text(200, 0).as_bytes());
    let holder = holder_of(host.lock("LOCK"));
    assert!(holder.starts_with("pid 200 (whether it still runs cannot be checked"));
    assert!(holder.contains("remove /db/LOCK"), "{holder}");
    // This process's own lock still says so, with start 0.
    host.remove("LOCK").unwrap();
    let _lock = host.lock("LOCK").unwrap();
    assert_eq!(host.get("LOCK").unwrap(), text(MY_PID, 0).as_bytes());
    assert_eq!(holder_of(host.lock("LOCK")), "pid 100 (this process)");
}

#[test]
fn an_unparseable_lock_is_held_until_5_s_old() {
    let host = FakeHost::new();
    host.put("LOCK", b"shaledb-lock 1\npi");
    host.state()
        .ages
        .insert("LOCK".into(), Duration::from_millis(4999));
    assert!(holder_of(host.lock("LOCK")).contains("writing the lock file right now"));
    host.state()
        .ages
        .insert("LOCK".into(), Duration::from_secs(5));
    let _lock = host.lock("LOCK").unwrap();
    assert_eq!(host.get("LOCK").unwrap(), FakeHost::mine().as_bytes());
}

#[test]
fn a_lock_file_of_more_than_4_kib_is_read_in_part_and_taken_over_once_old() {
    let host = FakeHost::new();
    host.put("LOCK", &vec![b'x'; 10_000]);
    host.state()
        .ages
        .insert("LOCK".into(), Duration::from_secs(60));
    let _lock = host.lock("LOCK").unwrap();
    assert_eq!(host.get("LOCK").unwrap(), FakeHost::mine().as_bytes());
}

#[test]
fn a_stale_lock_that_changed_hands_while_judged_is_left_to_its_new_owner() {
    let host = FakeHost::new();
    host.run(300, 'S', 3);
    host.put("LOCK", text(200, 77).as_bytes()); // 200 is gone
                                                // While 200 is being judged, live process 300 takes the lock over.
    host.state().rewrite_when_asked = Some((200, text(300, 3).into_bytes()));
    assert_eq!(holder_of(host.lock("LOCK")), "pid 300");
    assert_eq!(host.get("LOCK").unwrap(), text(300, 3).as_bytes());
}

#[test]
fn a_lock_that_keeps_changing_hands_is_given_up_after_8_rounds() {
    let host = FakeHost::new();
    host.state().links = Links::LoseTheRace;
    let holder = holder_of(host.lock("LOCK"));
    assert!(holder.contains("changed hands 8 times"), "{holder}");
    // The eighth stale lock was removed too; no temporary file is left.
    assert_eq!(host.names(), Vec::<String>::new());
}

#[test]
fn dropping_a_lock_that_was_taken_over_leaves_the_new_owner_alone() {
    let host = FakeHost::new();
    let lock = host.lock("LOCK").unwrap();
    host.put("LOCK", text(300, 3).as_bytes());
    drop(lock);
    assert_eq!(host.get("LOCK").unwrap(), text(300, 3).as_bytes());
    assert_eq!(host.state().held, [], "forgotten all the same");
}

#[test]
fn a_host_that_refuses_to_record_the_lock_fails_the_open_and_leaves_no_lock() {
    let host = FakeHost::new();
    host.state().refuse_held = true;
    let e = host.lock("LOCK").unwrap_err();
    assert!(matches!(&e, Error::Io { op: "held", .. }), "{e:?}");
    assert_eq!(host.names(), Vec::<String>::new());
    host.state().refuse_held = false;
    drop(host.lock("LOCK").unwrap());
}

#[test]
fn temporary_names_carry_the_pid_and_a_fresh_draw_on_a_clash() {
    let host = FakeHost::new();
    // The first three names drawn are taken (the fake draws 0, 1, 2, ...).
    for n in 0..3u64 {
        host.put(&format!("LOCK.{MY_PID}.{n:016x}.tmp"), b"leftover");
    }
    let _lock = host.lock("LOCK").unwrap();
    assert_eq!(host.get("LOCK").unwrap(), FakeHost::mine().as_bytes());
    assert_eq!(host.names().len(), 4, "{:?}", host.names());
}

#[test]
fn a_primitive_failing_unexpectedly_is_an_io_error_of_lock_not_not_found() {
    // The directory vanished: creating the temporary file reports NotFound; the caller must
    // not read that as "no database here".
    let dir = tempfile::tempdir().unwrap();
    let storage = StdFsStorage::open(dir.path().join("db")).unwrap();
    fs::remove_dir(dir.path().join("db")).unwrap();
    let e = storage.lock("LOCK").unwrap_err();
    if cfg!(any(unix, windows)) {
        assert!(matches!(&e, Error::Io { op: "lock", .. }), "{e:?}");
    }
}

// Regression: /proc/<pid>/stat was read as strict UTF-8, so a process whose command name is
// not UTF-8 had an "unreadable" status and counted as alive whatever its state or start time
// (a lock of its pid was never taken over, even once the pid was reused).
#[cfg(target_os = "linux")]
#[test]
fn a_process_whose_command_name_is_not_utf8_is_judged_by_its_status() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let (dir, storage) = disk();
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    let link = dir.path().join(OsStr::from_bytes(b"sl\xffeep"));
    std::os::unix::fs::symlink(sleep, &link).unwrap();
    let mut child = std::process::Command::new(&link).arg("30").spawn().unwrap();
    let stat = storage.process_stat(Some(child.id()));
    let result = std::panic::catch_unwind(|| {
        let ProcessStat::Text(text) = &stat else {
            panic!("{stat:?}");
        };
        assert!(text.contains("(sl\u{fffd}eep)"), "{text}");
        let (_, start) = parse_stat(text).unwrap();
        let owner = Owner {
            pid: child.id(),
            start,
            thread: None,
        };
        assert_eq!(liveness(&storage, &owner), Liveness::Alive);
        let reused = Owner {
            start: start + 1,
            ..owner
        };
        assert_eq!(liveness(&storage, &reused), Liveness::Dead);
    });
    let _ = child.kill();
    let _ = child.wait();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// A host whose threads hold locks each (Node.js worker threads): the calling thread `thread`,
/// with `live` the threads that run.
fn threaded_host(thread: u64, live: &[u64]) -> FakeHost {
    let host = FakeHost::new();
    host.state().thread = Some(thread);
    host.state().live_threads = live.to_vec();
    host
}

#[test]
fn a_lock_names_its_thread_where_the_host_gives_one() {
    let host = threaded_host(7, &[7]);
    let _lock = host.lock("LOCK").unwrap();
    assert_eq!(
        host.get("LOCK").unwrap(),
        b"shaledb-lock 1\npid 100\nstart 5000\nthread 7\n"
    );
    assert_eq!(
        Owner::parse(&host.get("LOCK").unwrap()),
        Some(Owner {
            pid: MY_PID,
            start: MY_START,
            thread: Some(7)
        })
    );
}

#[test]
fn a_lock_of_a_gone_thread_of_this_process_is_taken_over() {
    let host = threaded_host(8, &[1]);
    host.put("LOCK", b"shaledb-lock 1\npid 100\nstart 5000\nthread 7\n");
    let _lock = host.lock("LOCK").unwrap();
    assert_eq!(
        host.get("LOCK").unwrap(),
        b"shaledb-lock 1\npid 100\nstart 5000\nthread 8\n"
    );
}

#[test]
fn a_lock_of_a_live_thread_of_this_process_or_of_this_thread_is_held() {
    let host = threaded_host(8, &[7, 8]);
    host.put("LOCK", b"shaledb-lock 1\npid 100\nstart 5000\nthread 7\n");
    assert_eq!(holder_of(host.lock("LOCK")), "pid 100 (this process)");
    let host = threaded_host(7, &[]);
    host.put("LOCK", b"shaledb-lock 1\npid 100\nstart 5000\nthread 7\n");
    assert_eq!(holder_of(host.lock("LOCK")), "pid 100 (this process)");
}
