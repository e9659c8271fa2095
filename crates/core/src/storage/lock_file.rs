//! The lock file behind [`super::std_fs::StdFsStorage::lock`]. Node.js follows the same
//! protocol (`packages/js/src/node-lock.ts`); the text from "The lock-file protocol" to the end
//! of its limits is the same, byte for byte, there and in `docs/FORMAT.md` (a test compares them).
//!
//! The lock-file protocol, version 1. The lock is a *lock file*, not `flock`/`fcntl`, so that
//! native ShaleDB and Node.js (whose `fs` has no `flock`) follow one protocol on one directory.
//! To take lock `NAME` in a directory:
//!
//! 1. Write, in UTF-8, exactly this text, each line ending in `\n`:
//!    ```text
//!    shaledb-lock 1
//!    pid <decimal process id>
//!    start <decimal process start time>
//!    ```
//!    into a new temporary file `NAME.<pid>.<16 random hex digits>.tmp` in the same directory
//!    (created exclusively; if the name exists, draw another). The start time tells a reused
//!    pid from the original process: on Linux it is field 22 of `/proc/self/stat` (`starttime`,
//!    clock ticks since boot; the command name in field 2 is parenthesised and may contain
//!    spaces, so count fields after the *last* `)`); elsewhere `0`.
//! 2. Hard-link the temporary file to `NAME` (`link(2)`; Rust `std::fs::hard_link`, Node
//!    `fs.linkSync`), then remove the temporary file, whatever the outcome. The link fails if
//!    `NAME` exists, so it is the exclusive create, and `NAME` appears with its whole text: no
//!    reader ever sees it empty or half written. Linked: the lock is held. `NAME` exists: go to
//!    step 3. The link failed otherwise (file systems without hard links fail with `EPERM`,
//!    `ENOTSUP`, `EOPNOTSUPP`, `EXDEV` or `ENOSYS`): fall back to creating `NAME` exclusively
//!    (`O_CREAT|O_EXCL`; Node `fs.openSync(path, "wx")`) and writing the text into it; created:
//!    the lock is held; `NAME` exists: go to step 3.
//! 3. Read `NAME` (at most 4 KiB) and parse it: the first line starts with `shaledb-lock `, a
//!    `pid` line is required, `start` defaults to `0`, unknown lines are ignored.
//!    - Same pid and start as the caller: held by this very process (a second open in one
//!      process conflicts): locked.
//!    - Linux: `/proc/<pid>/stat` is absent, or the process is a zombie (state `Z` or `X`), or
//!      the recorded start is not `0` and differs from the process's: the owner is gone, the
//!      lock is **stale**. Otherwise it is held: locked, naming the pid.
//!    - Where liveness cannot be checked (no `/proc`: macOS, Windows, ...) the lock counts as
//!      held, and the error says to remove the file by hand if no ShaleDB process runs.
//!    - Contents that do not parse are stale once the file's modification time is at least 5
//!      seconds old, and held before. Step 2 never shows a partial file, so only the fallback
//!      or an older version of ShaleDB (which created the file, then wrote it) leaves one, when
//!      killed or stalled between its create and its write; the 5 seconds let a stalled writer
//!      finish rather than have its live lock broken.
//! 4. To take over a stale lock: read `NAME` again; if its bytes are unchanged, remove it and go
//!    back to step 1. Give up (locked) after 8 rounds.
//! 5. To release: read `NAME`; remove it only if it still holds exactly the text written in
//!    step 1 (a lock taken over after its owner was presumed dead is not the owner's to remove).
//!
//! A temporary file left behind (its process was killed between steps 1 and 2) blocks nothing:
//! only `NAME` is judged. It may be removed by hand once no ShaleDB process uses the directory.
//!
//! Limits, shared by any implementation of this protocol without `flock`: two processes that
//! take over the *same* stale lock at the same instant can both succeed if one removes the file
//! between the other's re-read and remove (the window is microseconds, and only ever opens after
//! a crash); processes in different PID namespaces (containers) sharing one directory cannot
//! see each other's pids, so they must not share a database directory.

use std::collections::hash_map::RandomState;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::storage::StorageLock;
use crate::{Error, Result};

/// How old an unparseable lock file must be (by modification time) before it counts as stale
/// (step 3: only the fallback of step 2 or an older version leaves one).
pub const GARBLED_LOCK_STALE_AFTER: Duration = Duration::from_secs(5);

/// How many create / take-over rounds [`Storage::lock`] tries before reporting `Locked`.
pub const LOCK_ATTEMPTS: usize = 8;

/// The largest lock file read; anything longer is garbled anyway.
const MAX_LOCK_FILE: u64 = 4096;

/// Takes the lock file at `path` (named `name` in errors) by the protocol above.
pub(crate) fn acquire(path: PathBuf, name: &str) -> Result<Box<dyn StorageLock>> {
    acquire_with(path, name, &|from, to| fs::hard_link(from, to))
}

/// How the lock file is linked into place: `std::fs::hard_link` (tests fail it instead).
type LinkFn = dyn Fn(&Path, &Path) -> io::Result<()>;

/// [`acquire`], linking with `link`.
fn acquire_with(path: PathBuf, name: &str, link: &LinkFn) -> Result<Box<dyn StorageLock>> {
    let me = Owner::current().map_err(|e| Error::io("lock", name, e))?;
    let text = me.to_text();
    for _ in 0..LOCK_ATTEMPTS {
        match create_complete(&path, text.as_bytes(), me.pid, link) {
            Ok(true) => return Ok(Box::new(StdFsLock { path, text })),
            Ok(false) => {}
            Err(e) => return Err(Error::io("lock", name, e)),
        }
        let seen = match read_lock_file(&path) {
            Ok(seen) => seen,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("lock", name, e)),
        };
        match judge(&seen, &me, &path) {
            Verdict::Held(holder) => {
                return Err(Error::Locked {
                    file: name.into(),
                    holder,
                })
            }
            Verdict::Stale => match read_lock_file(&path) {
                Ok(again) if again.bytes == seen.bytes => match fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io("lock", name, e)),
                },
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("lock", name, e)),
            },
        }
    }
    Err(Error::Locked {
        file: name.into(),
        holder: format!("other processes (it changed hands {LOCK_ATTEMPTS} times meanwhile)"),
    })
}

/// Steps 1 and 2: makes `path` appear holding `text`. `Ok(false)` if it exists already.
fn create_complete(path: &Path, text: &[u8], pid: u32, link: &LinkFn) -> io::Result<bool> {
    let temp = write_temporary(path, text, pid)?;
    let linked = link(&temp, path);
    // Whatever the outcome: a leftover would block nothing, but would clutter the directory.
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        // No hard links on this file system: create and write (the file is briefly empty).
        Err(_) => create_then_write(path, text),
    }
}

/// Step 1: a new temporary file beside `path` holding `text`; returns its path.
fn write_temporary(path: &Path, text: &[u8], pid: u32) -> io::Result<PathBuf> {
    let mut clash = None;
    for _ in 0..LOCK_ATTEMPTS {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{pid}.{:016x}.tmp", random_u64()));
        let temp = PathBuf::from(name);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(mut file) => {
                if let Err(e) = file.write_all(text) {
                    drop(file);
                    let _ = fs::remove_file(&temp);
                    return Err(e);
                }
                return Ok(temp);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => clash = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(clash.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into()))
}

/// The fallback of step 2: creates `path` exclusively, then writes `text`. `Ok(false)` if it
/// exists already.
fn create_then_write(path: &Path, text: &[u8]) -> io::Result<bool> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => {
            if let Err(e) = file.write_all(text) {
                drop(file);
                let _ = fs::remove_file(path);
                return Err(e);
            }
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// 64 random bits for a temporary file's name: std's per-process random hash keys, mixed with a
/// counter and the clock.
fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(now);
    hasher.finish()
}

/// A held lock file; removed on drop if it is still ours.
#[derive(Debug)]
struct StdFsLock {
    path: PathBuf,
    text: String,
}

impl StorageLock for StdFsLock {}

impl Drop for StdFsLock {
    fn drop(&mut self) {
        if let Ok(seen) = read_lock_file(&self.path) {
            if seen.bytes == self.text.as_bytes() {
                let _ = fs::remove_file(&self.path);
            }
        }
    }
}

/// Who holds a lock, as written in the lock file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    pid: u32,
    start: u64,
}

impl Owner {
    /// This process.
    #[cfg(any(unix, windows))]
    fn current() -> io::Result<Owner> {
        Ok(Owner {
            pid: std::process::id(),
            start: own_start_time().unwrap_or(0),
        })
    }

    /// Targets without processes (wasm32): `std::process::id` would panic there.
    #[cfg(not(any(unix, windows)))]
    fn current() -> io::Result<Owner> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no process ids on this platform",
        ))
    }

    fn to_text(self) -> String {
        format!("shaledb-lock 1\npid {}\nstart {}\n", self.pid, self.start)
    }

    /// Parses a lock file's contents; `None` if garbled.
    fn parse(bytes: &[u8]) -> Option<Owner> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.lines();
        lines.next()?.strip_prefix("shaledb-lock ")?;
        let (mut pid, mut start) = (None, 0u64);
        for line in lines {
            if let Some(v) = line.strip_prefix("pid ") {
                pid = Some(v.trim().parse().ok()?);
            } else if let Some(v) = line.strip_prefix("start ") {
                start = v.trim().parse().ok()?;
            }
        }
        Some(Owner { pid: pid?, start })
    }
}

/// A lock file's contents and age.
struct SeenLock {
    bytes: Vec<u8>,
    /// Time since the last modification; `None` if unknown (or in the future).
    age: Option<Duration>,
}

fn read_lock_file(path: &Path) -> io::Result<SeenLock> {
    let file = File::open(path)?;
    let age = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok());
    let mut bytes = Vec::new();
    file.take(MAX_LOCK_FILE).read_to_end(&mut bytes)?;
    Ok(SeenLock { bytes, age })
}

enum Verdict {
    /// Held by a live process (or one we cannot check); the holder's description.
    Held(String),
    /// The owner is gone: take the lock over.
    Stale,
}

fn judge(seen: &SeenLock, me: &Owner, path: &Path) -> Verdict {
    let Some(owner) = Owner::parse(&seen.bytes) else {
        return match seen.age {
            Some(age) if age >= GARBLED_LOCK_STALE_AFTER => Verdict::Stale,
            _ => Verdict::Held(
                "a process that is writing the lock file right now (its contents are incomplete)"
                    .into(),
            ),
        };
    };
    if owner == *me {
        return Verdict::Held(format!("pid {} (this process)", owner.pid));
    }
    match liveness(&owner) {
        Liveness::Dead => Verdict::Stale,
        Liveness::Alive => Verdict::Held(format!("pid {}", owner.pid)),
        Liveness::Unknown => Verdict::Held(format!(
            "pid {} (whether it still runs cannot be checked on this platform; if no ShaleDB \
             process is running, remove {})",
            owner.pid,
            path.display()
        )),
    }
}

#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "only Linux can tell alive from dead")
)]
enum Liveness {
    Alive,
    Dead,
    Unknown,
}

/// Whether the process that wrote `owner` still runs.
#[cfg(target_os = "linux")]
fn liveness(owner: &Owner) -> Liveness {
    if !Path::new("/proc/self/stat").exists() {
        return Liveness::Unknown;
    }
    match fs::read_to_string(format!("/proc/{}/stat", owner.pid)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Liveness::Dead,
        // It exists but we may not read it (another user's process): alive.
        Err(_) => Liveness::Alive,
        Ok(stat) => match parse_stat(&stat) {
            Some(('Z' | 'X', _)) => Liveness::Dead,
            Some((_, start)) if owner.start != 0 && start != owner.start => Liveness::Dead,
            _ => Liveness::Alive,
        },
    }
}

#[cfg(not(target_os = "linux"))]
fn liveness(_owner: &Owner) -> Liveness {
    Liveness::Unknown
}

/// This process's start time, field 22 of `/proc/self/stat`.
#[cfg(target_os = "linux")]
fn own_start_time() -> Option<u64> {
    let stat = fs::read_to_string("/proc/self/stat").ok()?;
    parse_stat(&stat).map(|(_, start)| start)
}

#[cfg(all(any(unix, windows), not(target_os = "linux")))]
fn own_start_time() -> Option<u64> {
    None
}

/// Parses a `/proc/<pid>/stat` line into (state, starttime): fields 3 and 22. Field 2, the
/// command name, is in parentheses and may contain anything, so fields are counted from the
/// last `)`.
#[cfg(target_os = "linux")]
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let after = stat.get(stat.rfind(')')? + 1..)?;
    let mut fields = after.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?; // field 3
    let start = fields.nth(18)?.parse().ok()?; // field 22 = 3 + 19
    Some((state, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_text_round_trips() {
        let owner = Owner {
            pid: 4242,
            start: 987_654,
        };
        assert_eq!(owner.to_text(), "shaledb-lock 1\npid 4242\nstart 987654\n");
        assert_eq!(Owner::parse(owner.to_text().as_bytes()), Some(owner));
    }

    #[test]
    fn lock_parse_defaults_start_and_ignores_unknown_lines() {
        assert_eq!(
            Owner::parse(b"shaledb-lock 2\nhost x\npid 7\n"),
            Some(Owner { pid: 7, start: 0 })
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
            b"\xff\xfe",
        ] {
            assert_eq!(Owner::parse(bad), None, "{bad:?}");
        }
    }

    /// The entries of `dir`, sorted.
    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn my_text() -> String {
        Owner::current().unwrap().to_text()
    }

    #[test]
    fn the_protocol_text_states_these_limits() {
        // The module docs (and node-lock.ts, docs/FORMAT.md) say "5 seconds" and "8 rounds".
        assert_eq!(GARBLED_LOCK_STALE_AFTER, Duration::from_secs(5));
        assert_eq!(LOCK_ATTEMPTS, 8);
    }

    #[cfg(any(unix, windows))]
    #[test]
    fn a_lock_file_is_never_seen_empty_or_partial() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        use std::time::Instant;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (path, stop) = (path.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let (mut complete, mut incomplete) = (0u64, Vec::new());
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(bytes) = fs::read(&path) {
                        if Owner::parse(&bytes).is_some() {
                            complete += 1;
                        } else {
                            incomplete.push(bytes);
                        }
                    }
                }
                (complete, incomplete)
            })
        };
        // Many acquire/release cycles while the reader polls; long enough for it to see the file
        // many times (the old create-then-write protocol showed it empty within a few hundred).
        let started = Instant::now();
        for _ in 0..3000 {
            let lock = acquire(path.clone(), "LOCK").unwrap();
            assert_eq!(fs::read(&path).unwrap(), my_text().as_bytes());
            drop(lock);
            if started.elapsed() > Duration::from_secs(20) {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let (complete, incomplete) = reader.join().unwrap();
        assert_eq!(incomplete, Vec::<Vec<u8>>::new(), "seen incomplete");
        assert!(complete > 0, "the reader never saw the lock file");
        assert_eq!(
            entries(dir.path()),
            Vec::<String>::new(),
            "no temporary file left"
        );
    }

    #[cfg(any(unix, windows))]
    #[test]
    fn leftover_temporary_files_do_not_block_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let me = Owner::current().unwrap();
        let leftovers = [
            format!("LOCK.{}.0000000000000000.tmp", me.pid),
            "LOCK.1.ffffffffffffffff.tmp".to_string(),
        ];
        fs::write(dir.path().join(&leftovers[0]), me.to_text()).unwrap();
        fs::write(dir.path().join(&leftovers[1]), "").unwrap();
        let lock = acquire(path.clone(), "LOCK").unwrap();
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
        drop(acquire(path.clone(), "LOCK").unwrap());
    }

    #[cfg(any(unix, windows))]
    #[test]
    fn a_held_lock_refuses_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let _held = acquire(path.clone(), "LOCK").unwrap();
        for _ in 0..3 {
            let e = acquire(path.clone(), "LOCK").unwrap_err();
            assert!(matches!(e, Error::Locked { .. }), "{e:?}");
        }
        assert_eq!(entries(dir.path()), vec!["LOCK".to_string()]);
    }

    #[cfg(any(unix, windows))]
    #[test]
    fn without_hard_links_the_lock_falls_back_to_create_and_write() {
        for kind in [
            io::ErrorKind::Unsupported,
            io::ErrorKind::PermissionDenied,
            io::ErrorKind::CrossesDevices,
            io::ErrorKind::Other,
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("LOCK");
            let no_links = move |_: &Path, _: &Path| -> io::Result<()> { Err(kind.into()) };
            let lock = acquire_with(path.clone(), "LOCK", &no_links).unwrap();
            assert_eq!(fs::read_to_string(&path).unwrap(), my_text(), "{kind:?}");
            assert_eq!(entries(dir.path()), vec!["LOCK".to_string()], "{kind:?}");
            // Both paths exclude each other.
            let e = acquire_with(path.clone(), "LOCK", &no_links).unwrap_err();
            assert!(matches!(e, Error::Locked { .. }), "{e:?}");
            let e = acquire(path.clone(), "LOCK").unwrap_err();
            assert!(matches!(e, Error::Locked { .. }), "{e:?}");
            drop(lock);
            assert!(!path.exists(), "{kind:?}");
            let linked = acquire(path.clone(), "LOCK").unwrap();
            let e = acquire_with(path.clone(), "LOCK", &no_links).unwrap_err();
            assert!(matches!(e, Error::Locked { .. }), "{e:?}");
            drop(linked);
            assert_eq!(entries(dir.path()), Vec::<String>::new(), "{kind:?}");
        }
    }

    #[cfg(any(unix, windows))]
    #[test]
    fn an_unparseable_lock_file_is_held_while_young_and_stale_once_5_s_old() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        fs::write(&path, "shaledb-lock 1\npi").unwrap();
        let e = acquire(path.clone(), "LOCK").unwrap_err();
        assert!(
            matches!(&e, Error::Locked { holder, .. } if holder.contains("writing the lock file")),
            "{e:?}"
        );
        let old = SystemTime::now() - Duration::from_secs(6);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let lock = acquire(path.clone(), "LOCK").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), my_text());
        drop(lock);
        assert!(!path.exists());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn parse_stat_counts_fields_after_the_last_parenthesis() {
        let stat = "123 (a) b (c)) S 1 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 55555 \
                    1000 200";
        assert_eq!(parse_stat(stat), Some(('S', 55555)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_start_time_is_known_on_linux() {
        let start = own_start_time();
        assert!(start.is_some_and(|s| s > 0), "{start:?}");
        let me = Owner::current().unwrap();
        assert!(matches!(liveness(&me), Liveness::Alive));
        let reused = Owner {
            start: me.start + 1,
            ..me
        };
        assert!(matches!(liveness(&reused), Liveness::Dead));
    }
}
