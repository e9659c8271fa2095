//! The lock-file protocol, version 1: the one implementation, run natively by
//! [`super::std_fs::StdFsStorage`] and, in the WebAssembly bindings, by Node.js's storage, so
//! that native processes and Node.js processes exclude each other on one directory.
//!
//! The protocol is described once, in `docs/FORMAT.md` ("LOCK file"); the step numbers below
//! are its. It runs over [`LockPrimitives`]: single file-system and process-table steps that
//! each platform implements, while every decision is taken here.
//!
//! - Steps 1 and 2 (`create_complete`): write the text into `NAME.<pid>.<hex>.tmp`, hard-link
//!   it to `NAME`, remove the temporary file; without hard links, create `NAME` and write it.
//! - Step 3 (`judge`): parse what `NAME` holds and ask the platform about its owner.
//! - Step 4: remove a stale `NAME` if it still holds what was judged, and start again.
//! - Step 5 (the guard's drop): remove `NAME` if it still holds our text.

use std::io;
use std::time::Duration;

use crate::storage::lock_primitives::{LockPrimitives, ProcessStat, SmallFile};
use crate::storage::{OpenMode, Storage, StorageLock};
use crate::{Error, Result};

/// How old an unparseable lock file must be (by modification time) before it counts as stale
/// (step 3: only the fallback of step 2 or an older version leaves one).
pub const GARBLED_LOCK_STALE_AFTER: Duration = Duration::from_secs(5);

/// How many create / take-over rounds [`acquire`] tries before reporting `Locked` (and how
/// many temporary names it draws before giving up on them).
pub const LOCK_ATTEMPTS: usize = 8;

/// The most of a lock file that is read (step 3: "at most 4 KiB"); anything longer is garbled
/// anyway.
pub const MAX_LOCK_FILE: usize = 4096;

/// Takes the lock file `name` of `storage` by the protocol: held until the returned guard is
/// dropped. Held by another process, or by this one: [`Error::Locked`], naming the holder.
pub fn acquire<S>(storage: &S, name: &str) -> Result<Box<dyn StorageLock>>
where
    S: LockPrimitives + Clone + 'static,
{
    let me = Owner::current(storage)?;
    let text = me.to_text().into_bytes();
    for _ in 0..LOCK_ATTEMPTS {
        if create_complete(storage, name, &text, me.pid)? {
            return hold(storage, name, text);
        }
        let seen = match storage.read_small(name, MAX_LOCK_FILE) {
            Ok(seen) => seen,
            Err(Error::NotFound { .. }) => continue, // released meanwhile: create it again
            Err(e) => return Err(unexpected(name, e)),
        };
        match judge(storage, &seen, &me, name) {
            Verdict::Held(holder) => {
                return Err(Error::Locked {
                    file: name.into(),
                    holder,
                })
            }
            // Step 4: only if it still holds what was judged.
            Verdict::Stale => {
                storage
                    .remove_if_unchanged(name, &seen.bytes, MAX_LOCK_FILE)
                    .map_err(|e| unexpected(name, e))?;
            }
        }
    }
    Err(Error::Locked {
        file: name.into(),
        holder: format!("other processes (it changed hands {LOCK_ATTEMPTS} times meanwhile)"),
    })
}

/// The guard of a lock just created, after telling the storage it is held.
fn hold<S>(storage: &S, name: &str, text: Vec<u8>) -> Result<Box<dyn StorageLock>>
where
    S: LockPrimitives + Clone + 'static,
{
    let guard = LockFileGuard {
        storage: storage.clone(),
        name: name.to_owned(),
        text,
    };
    // On error the guard is dropped here, which releases the lock.
    storage.lock_held(name, &guard.text)?;
    Ok(Box::new(guard))
}

/// Steps 1 and 2: makes `name` appear holding `text`. `Ok(false)` if it exists already.
fn create_complete<S: LockPrimitives>(
    storage: &S,
    name: &str,
    text: &[u8],
    pid: u32,
) -> Result<bool> {
    let temp = write_temporary(storage, name, text, pid)?;
    let linked = storage.hard_link(&temp, name);
    // Whatever the outcome: a leftover would block nothing, but would clutter the directory.
    let _ = storage.remove(&temp);
    match linked {
        Ok(()) => Ok(true),
        Err(Error::AlreadyExists { .. }) => Ok(false),
        // No hard links on this file system: create and write (the file is briefly empty).
        Err(_) => create_with(storage, name, text).map_err(|e| unexpected(name, e)),
    }
}

/// Step 1: a new temporary file `NAME.<pid>.<16 hex digits>.tmp` holding `text`; its name.
fn write_temporary<S: LockPrimitives>(
    storage: &S,
    name: &str,
    text: &[u8],
    pid: u32,
) -> Result<String> {
    for _ in 0..LOCK_ATTEMPTS {
        let temp = format!("{name}.{pid}.{:016x}.tmp", storage.random_u64());
        if create_with(storage, &temp, text).map_err(|e| unexpected(name, e))? {
            return Ok(temp);
        }
    }
    Err(Error::io(
        "lock",
        name,
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{LOCK_ATTEMPTS} temporary file names drawn for it all exist"),
        ),
    ))
}

/// Creates `name` exclusively and writes `text` into it. `Ok(false)` if it exists already; if
/// the write fails, the file is removed (best effort) and the error returned.
fn create_with<S: Storage>(storage: &S, name: &str, text: &[u8]) -> Result<bool> {
    let file = match storage.open(name, OpenMode::CreateNew) {
        Ok(file) => file,
        Err(Error::AlreadyExists { .. }) => return Ok(false),
        Err(e) => return Err(e),
    };
    if let Err(e) = file.write_at(0, text) {
        drop(file);
        let _ = storage.remove(name);
        return Err(e);
    }
    Ok(true)
}

/// A primitive's failure where the protocol expects none: `NotFound` and `AlreadyExists`
/// would say something false about the lock itself, so they become I/O errors of `lock`.
fn unexpected(name: &str, e: Error) -> Error {
    match e {
        Error::NotFound { file } => Error::io(
            "lock",
            name,
            io::Error::new(io::ErrorKind::NotFound, format!("{file:?} not found")),
        ),
        Error::AlreadyExists { file } => Error::io(
            "lock",
            name,
            io::Error::new(io::ErrorKind::AlreadyExists, format!("{file:?} exists")),
        ),
        e => e,
    }
}

/// A held lock file; dropping it removes the file if it still holds our text (step 5).
#[derive(Debug)]
struct LockFileGuard<S: LockPrimitives> {
    storage: S,
    name: String,
    text: Vec<u8>,
}

impl<S: LockPrimitives> StorageLock for LockFileGuard<S> {}

impl<S: LockPrimitives> Drop for LockFileGuard<S> {
    fn drop(&mut self) {
        // Nothing to report a failure to: the file then stays, and the next owner judges it.
        let _ = self
            .storage
            .remove_if_unchanged(&self.name, &self.text, MAX_LOCK_FILE);
    }
}

/// Who holds a lock, as written in the lock file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    pid: u32,
    start: u64,
    /// The holding thread, where the host gives one ([`LockPrimitives::thread_id`]).
    thread: Option<u64>,
}

impl Owner {
    /// This process: its pid, and its start time where the platform has one, else `0`.
    fn current<S: LockPrimitives>(storage: &S) -> Result<Owner> {
        let pid = storage.process_id()?;
        let start = match storage.process_stat(None) {
            ProcessStat::Text(stat) => parse_stat(&stat).map_or(0, |(_, start)| start),
            _ => 0,
        };
        Ok(Owner {
            pid,
            start,
            thread: storage.thread_id(),
        })
    }

    fn to_text(self) -> String {
        let mut text = format!("shaledb-lock 1\npid {}\nstart {}\n", self.pid, self.start);
        if let Some(thread) = self.thread {
            text.push_str(&format!("thread {thread}\n"));
        }
        text
    }

    /// Whether `self` is this process (`me`), whatever the thread.
    fn same_process(&self, me: &Owner) -> bool {
        self.pid == me.pid && self.start == me.start
    }

    /// Parses a lock file's contents; `None` if garbled.
    fn parse(bytes: &[u8]) -> Option<Owner> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.lines();
        lines.next()?.strip_prefix("shaledb-lock ")?;
        let (mut pid, mut start, mut thread) = (None, 0u64, None);
        for line in lines {
            if let Some(v) = line.strip_prefix("pid ") {
                pid = Some(v.trim().parse().ok()?);
            } else if let Some(v) = line.strip_prefix("start ") {
                start = v.trim().parse().ok()?;
            } else if let Some(v) = line.strip_prefix("thread ") {
                thread = Some(v.trim().parse().ok()?);
            }
        }
        Some(Owner {
            pid: pid?,
            start,
            thread,
        })
    }
}

enum Verdict {
    /// Held by a live process (or one we cannot check); the holder's description.
    Held(String),
    /// The owner is gone: take the lock over.
    Stale,
}

/// Step 3: whether the lock file `name`, seen holding `seen`, is held or stale.
fn judge<S: LockPrimitives>(storage: &S, seen: &SmallFile, me: &Owner, name: &str) -> Verdict {
    let Some(owner) = Owner::parse(&seen.bytes) else {
        return match seen.age {
            Some(age) if age >= GARBLED_LOCK_STALE_AFTER => Verdict::Stale,
            _ => Verdict::Held(
                "a process that is writing the lock file right now (its contents are incomplete)"
                    .into(),
            ),
        };
    };
    if owner.same_process(me) {
        // A thread of this process that is gone (a Node.js worker thread stopped by
        // `terminate()`) released nothing: its lock is stale.
        return match owner.thread {
            Some(thread)
                if owner.thread != me.thread && !storage.thread_alive(owner.pid, thread) =>
            {
                Verdict::Stale
            }
            _ => Verdict::Held(format!("pid {} (this process)", owner.pid)),
        };
    }
    match liveness(storage, &owner) {
        Liveness::Dead => Verdict::Stale,
        Liveness::Alive => Verdict::Held(format!("pid {}", owner.pid)),
        Liveness::Unknown => Verdict::Held(format!(
            "pid {} (whether it still runs cannot be checked on this platform; if no ShaleDB \
             process is running, remove {})",
            owner.pid,
            storage.display_name(name)
        )),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Liveness {
    Alive,
    Dead,
    Unknown,
}

/// Whether the process that wrote `owner` still runs: gone, a zombie, or another process
/// under the same pid (another start time) is dead; a status that cannot be read or parsed
/// counts as alive.
fn liveness<S: LockPrimitives>(storage: &S, owner: &Owner) -> Liveness {
    match storage.process_stat(Some(owner.pid)) {
        ProcessStat::Unsupported => Liveness::Unknown,
        ProcessStat::NoProcess => Liveness::Dead,
        ProcessStat::Unreadable => Liveness::Alive,
        ProcessStat::Text(stat) => match parse_stat(&stat) {
            Some(('Z' | 'X', _)) => Liveness::Dead,
            Some((_, start)) if owner.start != 0 && start != owner.start => Liveness::Dead,
            _ => Liveness::Alive,
        },
    }
}

/// Parses a `/proc/<pid>/stat` line into (state, starttime): fields 3 and 22. Field 2, the
/// command name, is in parentheses and may contain anything, so fields are counted from the
/// last `)`.
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let after = stat.get(stat.rfind(')')? + 1..)?;
    let mut fields = after.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?; // field 3
    let start = fields.nth(18)?.parse().ok()?; // field 22 = 3 + 19
    Some((state, start))
}

#[cfg(test)]
mod tests;
