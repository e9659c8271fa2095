//! The primitives the lock-file protocol runs on ([`super::lock_file`]; the protocol itself is
//! described once, in `docs/FORMAT.md`, "LOCK file").
//!
//! The protocol is implemented once, in Rust, over these: [`super::std_fs::StdFsStorage`]
//! implements them with `std::fs` and `/proc`, and the WebAssembly bindings (`shaledb-wasm`)
//! with calls to a JavaScript host (Node.js implements them with `fs` and `/proc`). Besides
//! them the protocol uses the storage's own files: [`Storage::open`] with
//! [`super::OpenMode::CreateNew`] and [`super::StorageFile::write_at`] to write a new file, and
//! [`Storage::remove`].
//!
//! Every primitive is a single step of the file system or of the process table; the protocol's
//! decisions (what to write, what to link, when a lock is stale, when to give up) are all in
//! [`super::lock_file`].

use std::time::Duration;

use crate::storage::Storage;
use crate::{Error, Result};

/// A storage on a file system shared with other processes, which the lock-file protocol can
/// run on. File names are the storage's plain relative names.
pub trait LockPrimitives: Storage {
    /// Makes `name` a new hard link to the existing file `existing` (`link(2)`).
    ///
    /// `name` exists already: [`Error::AlreadyExists`]. Any other error means that hard links
    /// are not available here (the protocol then falls back to create-then-write).
    fn hard_link(&self, existing: &str, name: &str) -> Result<()>;

    /// The first `max` bytes of `name` (all of it if shorter), and the time since it was last
    /// modified (`None` if unknown, or in the future), both of the same open file.
    /// Missing: [`Error::NotFound`].
    fn read_small(&self, name: &str, max: usize) -> Result<SmallFile>;

    /// Removes `name` if its first `limit` bytes (all of it if shorter) are exactly `bytes`;
    /// returns whether it removed it (`false` if it holds something else or is missing).
    ///
    /// The read and the removal are two steps: another process may change the file between
    /// them (the protocol's documented limit). A host that remembers lock files for
    /// [`LockPrimitives::lock_held`] forgets `name` here if it was held with `bytes`.
    fn remove_if_unchanged(&self, name: &str, bytes: &[u8], limit: usize) -> Result<bool> {
        let seen = match self.read_small(name, limit) {
            Ok(seen) => seen,
            Err(Error::NotFound { .. }) => return Ok(false),
            Err(e) => return Err(e),
        };
        if seen.bytes != bytes {
            return Ok(false);
        }
        match self.remove(name) {
            Ok(()) => Ok(true),
            Err(Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Tells the storage that the lock file `name` is now held, holding `bytes`, until the
    /// protocol releases it with `remove_if_unchanged(name, bytes, ..)`. A host may remember it
    /// to release it so itself should the process exit, or the module die, first (Node.js
    /// does). An error releases the lock and fails the acquisition. Default: nothing.
    fn lock_held(&self, _name: &str, _bytes: &[u8]) -> Result<()> {
        Ok(())
    }

    /// This process's id.
    fn process_id(&self) -> Result<u32>;

    /// The operating system's id of the calling thread (Linux: its task id), for a host whose
    /// threads hold locks each on their own and can be stopped alone (Node.js worker threads,
    /// stopped by `worker.terminate()` with no chance to release what they hold). `None`
    /// (the default): locks are the process's.
    fn thread_id(&self) -> Option<u64> {
        None
    }

    /// Whether thread `thread` of process `pid` (this one) still runs (Linux:
    /// `/proc/<pid>/task/<thread>` exists). Asked only of a host that gives a
    /// [`LockPrimitives::thread_id`]; when it cannot tell: `true` (the default).
    fn thread_alive(&self, _pid: u32, _thread: u64) -> bool {
        true
    }

    /// The status line of process `pid` (Linux: the text of `/proc/<pid>/stat`), or of this
    /// process with `None` (`/proc/self/stat`).
    fn process_stat(&self, pid: Option<u32>) -> ProcessStat;

    /// 64 random bits, for the names of temporary files (unique, not secret).
    fn random_u64(&self) -> u64;

    /// How `name` is shown in messages: its full path where there is one. Default: the name.
    fn display_name(&self, name: &str) -> String {
        name.to_owned()
    }
}

/// The start of a small file and its age, from [`LockPrimitives::read_small`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmallFile {
    /// The bytes read.
    pub bytes: Vec<u8>,
    /// Time since the file's last modification; `None` if unknown or in the future.
    pub age: Option<Duration>,
}

/// What the platform tells of a process, from [`LockPrimitives::process_stat`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessStat {
    /// Its status line (Linux `/proc/<pid>/stat`: pid, `(command)`, state, ..., start time in
    /// field 22).
    Text(String),
    /// No such process.
    NoProcess,
    /// It exists, but its status cannot be read (another user's process).
    Unreadable,
    /// This platform cannot tell (no `/proc`: macOS, Windows, ...).
    Unsupported,
}
