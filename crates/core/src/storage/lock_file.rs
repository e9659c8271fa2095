//! The lock-file protocol (version 1) behind [`super::std_fs::StdFsStorage::lock`].
//!
//! The lock is a *lock file*, not `flock`/`fcntl`, so that a Node.js process (whose `fs` has no
//! `flock`) can follow the same protocol on the same directory. To take lock `NAME`:
//!
//! 1. Create `NAME` exclusively (`O_CREAT|O_EXCL`; Node: `fs.openSync(path, "wx")`) and write,
//!    in UTF-8, exactly:
//!    ```text
//!    shaledb-lock 1
//!    pid <decimal process id>
//!    start <decimal process start time>
//!    ```
//!    each line ending in `\n`. The start time tells a reused pid from the original process: on
//!    Linux it is field 22 of `/proc/self/stat` (`starttime`, clock ticks since boot; the
//!    command name in field 2 is parenthesised and may contain spaces, so count fields after the
//!    *last* `)`); elsewhere `0`. If the create succeeds, the lock is held.
//! 2. If the file exists, read it (at most 4 KiB) and parse it: the first line starts with
//!    `shaledb-lock `, `pid` is required, `start` defaults to `0`, unknown lines are ignored.
//!    - Same pid and start as the caller: held by this very process (a second open in one
//!      process conflicts) → `Locked`.
//!    - Linux: `/proc/<pid>/stat` is absent, or the process is a zombie (state `Z` or `X`), or
//!      the recorded start is not `0` and differs from the process's → the owner is gone: the
//!      lock is **stale**. Otherwise it is held → `Locked { holder: "pid N" }`.
//!    - Where liveness cannot be checked (no `/proc`: macOS, Windows, ...) the lock counts as
//!      held, and the error says to remove the file by hand if no ShaleDB process runs.
//!    - Contents that do not parse (a process killed between create and write) make the lock
//!      stale once the file's modification time is at least [`GARBLED_LOCK_STALE_AFTER`] old;
//!      before that it counts as held by a process that is still writing it.
//! 3. To take over a stale lock: read the file again; if its bytes are unchanged, remove it and
//!    go back to step 1. Give up with `Locked` after [`LOCK_ATTEMPTS`] rounds.
//! 4. To release: read the file; remove it only if it still holds exactly the text written in
//!    step 1 (a lock taken over after we were presumed dead is not ours to remove).
//!
//! Limits, shared by any implementation of this protocol without `flock`: two processes that
//! take over the *same* stale lock at the same instant can both succeed if one removes the file
//! between the other's re-read and remove (the window is microseconds, and only ever opens after
//! a crash); processes in different PID namespaces (containers) sharing one directory cannot see
//! each other's pids, so they must not share a database directory.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::storage::StorageLock;
use crate::{Error, Result};

/// How old an unparseable lock file must be (by modification time) before it counts as stale.
pub const GARBLED_LOCK_STALE_AFTER: Duration = Duration::from_secs(5);

/// How many create / take-over rounds [`Storage::lock`] tries before reporting `Locked`.
pub const LOCK_ATTEMPTS: usize = 8;

/// The largest lock file read; anything longer is garbled anyway.
const MAX_LOCK_FILE: u64 = 4096;

/// Takes the lock file at `path` (named `name` in errors) by the protocol above.
pub(crate) fn acquire(path: PathBuf, name: &str) -> Result<Box<dyn StorageLock>> {
    let me = Owner::current().map_err(|e| Error::io("lock", name, e))?;
    let text = me.to_text();
    for _ in 0..LOCK_ATTEMPTS {
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                if let Err(e) = file.write_all(text.as_bytes()) {
                    drop(file);
                    let _ = fs::remove_file(&path);
                    return Err(Error::io("lock", name, e));
                }
                return Ok(Box::new(StdFsLock { path, text }));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
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
