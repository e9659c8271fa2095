//! A fault-injecting [`Storage`] wrapper that models Linux's durability semantics, for crash and
//! fault tests (LevelDB's `FaultInjectionTestEnv`, RocksDB's `FaultInjectionTestFS`, SQLite's
//! crash VFS).
//!
//! [`FaultyStorage`] passes every call to an inner storage (which plays the page cache and, after
//! a simulated power loss, the disk) and keeps, beside it, what the disk holds.
//!
//! # What a power loss ([`FaultyStorage::crash`], [`FaultyStorage::crash_torn`]) leaves
//!
//! - **File contents**, per file (`inode.rs`): data is durable once a sync of the file returns
//!   `Ok`. Unsynced data is lost at page granularity (4 KiB) and in any order: `crash` loses all
//!   of it; `crash_torn` keeps, per changed page, the new or the old contents or a mix at a
//!   512-byte boundary (and now and then noise in a never-durable sector), and a file size
//!   anywhere between the durable and the current one. Truncations and allocations (which
//!   extend a file with zeros) are data changes like writes: durable with the next sync.
//! - **A failed sync** (injected) is Linux's: the dirty pages are marked clean although their
//!   writeback failed, so they are lost at a crash *even if later syncs of the file succeed*,
//!   and those later syncs report success (the error was reported once).
//! - **Directory entries**: creations, renames and removals are durable once a later
//!   [`Storage::sync_dir`] returns `Ok`. At `crash` every later one is undone (a new file
//!   vanishes, a rename is reverted, a removed file comes back with its durable contents); at
//!   `crash_torn` each name independently keeps its new or its old entry.
//! - Files that existed before the wrapper first saw them count as durable, entries and contents.
//!
//! After a crash every handle opened before it fails with an [`Error::Io`] saying "crashed";
//! new opens see the post-crash files. Crashes do not release locks: drop the crashed database
//! (which drops its lock guard) before reopening. Injected faults stay armed across a crash until
//! [`FaultyStorage::reset_faults`]. All changes must go through the wrapper: changes made to the
//! inner storage directly are not tracked.
//!
//! # Faults at the Nth I/O call
//!
//! Every call through the wrapper (each `open`, `exists`, `remove`, `rename`, `list`,
//! `sync_dir`, and each `read_at`, `write_at`, `sync`, `size`, `truncate`, `allocate` of a file;
//! not `lock`)
//! is numbered. [`FaultyStorage::arm`] picks one: with [`Fault::Error`] that call fails (a write
//! first writes half its bytes; a sync loses the dirty pages as above) and later calls work;
//! with [`Fault::Crash`] that call and every later one fail, as if the process died there.
//! Sweeps arm call 1, 2, 3, ... until an operation completes without reaching the fault
//! ([`FaultyStorage::fault_fired`]).
//!
//! Everything is deterministic: `crash_torn` draws from a generator seeded by the caller, and
//! names and pages are visited in order.

mod inode;
mod xorshift;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::storage::{FileHandle, OpenMode, Storage, StorageFile, StorageLock};
use crate::{Error, Result};
use inode::Inode;
use xorshift::XorShift;

/// Identifies one file (an inode) across renames.
type FileId = u64;

/// What happens at the call [`FaultyStorage::arm`] picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// That call fails: writes, truncations, allocations and creations with "no space left on
    /// device" (a write after writing half its bytes), everything else with an I/O error; a
    /// failed sync loses the file's dirty pages. Later calls work.
    Error,
    /// That call and every later one fail: the process died there. Nothing more reaches the
    /// storage until [`FaultyStorage::reset_faults`] or a crash.
    Crash,
}

/// A [`Storage`] wrapper that simulates power losses and injects I/O faults. Cloning gives
/// another handle to the same storage and the same controls.
#[derive(Debug, Clone)]
pub struct FaultyStorage {
    inner: Arc<dyn Storage>,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Held across every inner call, so that a crash never interleaves with one.
    state: Mutex<State>,
    /// Incremented by every crash; handles from an older epoch are dead.
    epoch: AtomicU64,
    syncs: AtomicU64,
    dir_syncs: AtomicU64,
    writes: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    inodes: HashMap<FileId, Inode>,
    /// The directory as it is now.
    names: BTreeMap<String, FileId>,
    /// The directory as of the last successful `sync_dir` (or as first seen).
    durable_names: BTreeMap<String, FileId>,
    next_id: FileId,
    faults: Faults,
    /// I/O calls so far.
    calls: u64,
}

#[derive(Debug, Default, Clone)]
struct Faults {
    failing_syncs: u64,
    write_budget: Option<u64>,
    tear_next_write: Option<usize>,
    armed: Option<Armed>,
}

#[derive(Debug, Clone)]
struct Armed {
    /// Which matching call faults (1 = the first).
    nth: u64,
    /// Matching calls so far.
    seen: u64,
    /// Only calls on files whose name starts with this count (all calls if `None`).
    only: Option<String>,
    fault: Fault,
    fired: bool,
}

/// Whether a call may go ahead.
enum Gate {
    Go,
    /// The call must fail with this error (after doing its partial effect, for a write).
    Fail(Error),
}

impl FaultyStorage {
    /// Wraps `inner`. Files already in it count as durable.
    pub fn new(inner: Arc<dyn Storage>) -> FaultyStorage {
        FaultyStorage {
            inner,
            shared: Arc::default(),
        }
    }

    /// The wrapped storage (for inspection; changes made through it are not tracked).
    pub fn inner(&self) -> &Arc<dyn Storage> {
        &self.inner
    }

    /// Simulates a power loss that keeps nothing unsynced (module doc). Handles opened before
    /// fail from now on. Errors only if the inner storage fails.
    pub fn crash(&self) -> Result<()> {
        self.crash_with(None)
    }

    /// Simulates a power loss that keeps a pseudo-random part of what was not synced, pages in
    /// any order and directory entries each on its own (module doc). The same seed over the same
    /// history gives the same result.
    pub fn crash_torn(&self, seed: u64) -> Result<()> {
        self.crash_with(Some(XorShift::new(seed)))
    }

    /// The next `n` file syncs fail with [`Error::Io`] and lose the dirty pages (Linux).
    /// (`sync_dir` is not affected.)
    pub fn fail_syncs(&self, n: u64) {
        self.state().faults.failing_syncs = n;
    }

    /// The next file sync fails; shorthand for `fail_syncs(1)`.
    pub fn fail_next_sync(&self) {
        self.fail_syncs(1);
    }

    /// Simulates a disk that fills up after `n` more bytes: a write crossing the budget writes
    /// the bytes that fit, then fails with an [`Error::Io`] of kind `StorageFull`; later writes
    /// fail likewise. Extending a file with `truncate` or `allocate` does not count (writes into
    /// allocated bytes still do).
    pub fn fail_writes_after_bytes(&self, n: u64) {
        self.state().faults.write_budget = Some(n);
    }

    /// The next `write_at` writes only its first `keep` bytes, then fails with [`Error::Io`].
    pub fn tear_next_write(&self, keep: usize) {
        self.state().faults.tear_next_write = Some(keep);
    }

    /// Arms `fault` at the `nth` I/O call from now (1 = the next call). Replaces any armed one.
    pub fn arm(&self, nth: u64, fault: Fault) {
        self.arm_with(None, nth, fault);
    }

    /// Arms `fault` at the `nth` I/O call from now on a file whose name starts with `prefix`
    /// (`"MANIFEST-"`, `"wal-"`, ...); other calls do not count. Replaces any armed one.
    pub fn arm_on(&self, prefix: &str, nth: u64, fault: Fault) {
        self.arm_with(Some(prefix.to_owned()), nth, fault);
    }

    fn arm_with(&self, only: Option<String>, nth: u64, fault: Fault) {
        self.state().faults.armed = Some(Armed {
            nth: nth.max(1),
            seen: 0,
            only,
            fault,
            fired: false,
        });
    }

    /// Whether the armed fault was reached.
    pub fn fault_fired(&self) -> bool {
        self.state().faults.armed.as_ref().is_some_and(|a| a.fired)
    }

    /// I/O calls made through the wrapper so far (module doc).
    pub fn io_calls(&self) -> u64 {
        self.state().calls
    }

    /// Disarms every injected fault, and ends a [`Fault::Crash`] "process death" (not the
    /// effects of crashes).
    pub fn reset_faults(&self) {
        self.state().faults = Faults::default();
    }

    /// How many file syncs have succeeded.
    pub fn syncs(&self) -> u64 {
        self.shared.syncs.load(Ordering::SeqCst)
    }

    /// How many `sync_dir` calls have succeeded.
    pub fn dir_syncs(&self) -> u64 {
        self.shared.dir_syncs.load(Ordering::SeqCst)
    }

    /// How many `write_at` calls have succeeded.
    pub fn writes(&self) -> u64 {
        self.shared.writes.load(Ordering::SeqCst)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state()
    }

    fn crash_with(&self, mut rng: Option<XorShift>) -> Result<()> {
        let mut st = self.state();
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
        // Whatever happens below, the old tracking is void: what survives is durable.
        let names = std::mem::take(&mut st.names);
        let durable = std::mem::take(&mut st.durable_names);
        let inodes = std::mem::take(&mut st.inodes);
        let all: BTreeSet<&String> = names.keys().chain(durable.keys()).collect();
        let mut after: BTreeMap<&String, FileId> = BTreeMap::new();
        for &name in &all {
            let (now, then) = (names.get(name), durable.get(name));
            let keep_new = now != then && rng.as_mut().is_some_and(XorShift::coin);
            let pick = if keep_new { now } else { then };
            if let Some(&id) = pick {
                after.insert(name, id);
            }
        }
        // Read every surviving file's post-crash contents before writing any: a name may get
        // the contents of a file that another name holds now.
        let mut contents: HashMap<FileId, Option<Vec<u8>>> = HashMap::new();
        for (&name, &id) in &after {
            let Some(inode) = inodes.get(&id) else {
                continue;
            };
            if contents.contains_key(&id) {
                continue;
            }
            let unchanged = names.get(name) == Some(&id) && inode.is_clean(inode.handle.size()?);
            let bytes = if unchanged {
                None
            } else {
                Some(inode.after_power_loss(rng.as_mut())?)
            };
            contents.insert(id, bytes);
        }
        for &name in &all {
            if !after.contains_key(name) {
                match self.inner.remove(name) {
                    Ok(()) | Err(Error::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        for (&name, id) in &after {
            let bytes = match contents.get(id) {
                Some(Some(bytes)) => bytes.clone(),
                Some(None) if names.get(name) == Some(id) => continue,
                Some(None) => read_all(
                    &*inodes
                        .get(id)
                        .map(|i| i.handle.clone())
                        .ok_or_else(|| Error::Closed("fault model lost an inode".into()))?,
                )?,
                None => continue,
            };
            let file = self.inner.open(name, OpenMode::Create)?;
            if !bytes.is_empty() {
                file.write_at(0, &bytes)?;
            }
        }
        Ok(())
    }
}

/// Every byte of `file`.
fn read_all(file: &dyn StorageFile) -> Result<Vec<u8>> {
    let mut bytes = vec![0u8; file.size()? as usize];
    file.read_exact_at(0, &mut bytes)?;
    Ok(bytes)
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// Counts one I/O call and applies an armed fault to it.
    fn gate(&mut self, op: &'static str, name: &str) -> Result<Gate> {
        self.calls += 1;
        let Some(armed) = self.faults.armed.as_mut() else {
            return Ok(Gate::Go);
        };
        if armed.fired && armed.fault == Fault::Crash {
            return Err(crashed(op, name));
        }
        if armed.fired || armed.only.as_deref().is_some_and(|p| !name.starts_with(p)) {
            return Ok(Gate::Go);
        }
        armed.seen += 1;
        if armed.seen != armed.nth {
            return Ok(Gate::Go);
        }
        armed.fired = true;
        match armed.fault {
            Fault::Crash => Err(crashed(op, name)),
            Fault::Error => Ok(Gate::Fail(injected_error(op, name))),
        }
    }

    /// The file `name` is, registering one that existed before the wrapper saw it as durable.
    fn known(&mut self, inner: &dyn Storage, name: &str) -> Result<Option<FileId>> {
        if let Some(&id) = self.names.get(name) {
            return Ok(Some(id));
        }
        if !inner.exists(name)? {
            return Ok(None);
        }
        let handle = inner.open(name, OpenMode::Read)?;
        let size = handle.size()?;
        let id = self.add_inode(Inode::new(handle, size));
        self.names.insert(name.to_owned(), id);
        self.durable_names.insert(name.to_owned(), id);
        Ok(Some(id))
    }

    fn add_inode(&mut self, inode: Inode) -> FileId {
        let id = self.next_id;
        self.next_id += 1;
        self.inodes.insert(id, inode);
        id
    }
}

/// The error of every call after a [`Fault::Crash`].
fn crashed(op: &'static str, name: &str) -> Error {
    Error::io(
        op,
        name,
        io::Error::other("crashed (injected): the process died at an earlier I/O call"),
    )
}

/// The error a [`Fault::Error`] gives `op`.
fn injected_error(op: &'static str, name: &str) -> Error {
    match op {
        "write" | "truncate" | "allocate" | "open" => Error::io(
            op,
            name,
            io::Error::new(
                io::ErrorKind::StorageFull,
                "no space left on device (injected)",
            ),
        ),
        _ => Error::io(op, name, io::Error::other("I/O error (injected)")),
    }
}

impl Storage for FaultyStorage {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        let mut st = self.state();
        if let Gate::Fail(e) = st.gate("open", name)? {
            return Err(e);
        }
        let existing = st.known(&*self.inner, name)?;
        if let (Some(id), OpenMode::Create) = (existing, mode) {
            if let Some(inode) = st.inodes.get_mut(&id) {
                // `Create` truncates the file: every durable byte changes.
                inode.before_change(0, inode.durable_size)?;
            }
        }
        let file = self.inner.open(name, mode)?;
        let id = match existing {
            Some(id) => id,
            None => {
                let id = st.add_inode(Inode::new(file.clone(), 0));
                st.names.insert(name.to_owned(), id);
                id
            }
        };
        Ok(Arc::new(FaultyFile {
            inner: file,
            id,
            epoch: self.shared.epoch.load(Ordering::SeqCst),
            shared: self.shared.clone(),
        }))
    }

    fn exists(&self, name: &str) -> Result<bool> {
        let mut st = self.state();
        if let Gate::Fail(e) = st.gate("exists", name)? {
            return Err(e);
        }
        self.inner.exists(name)
    }

    fn remove(&self, name: &str) -> Result<()> {
        let mut st = self.state();
        if let Gate::Fail(e) = st.gate("remove", name)? {
            return Err(e);
        }
        st.known(&*self.inner, name)?;
        self.inner.remove(name)?;
        st.names.remove(name);
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let mut st = self.state();
        if let Gate::Fail(e) = st.gate("rename", from)? {
            return Err(e);
        }
        st.known(&*self.inner, from)?;
        st.known(&*self.inner, to)?;
        self.inner.rename(from, to)?;
        match st.names.remove(from) {
            Some(id) => st.names.insert(to.to_owned(), id),
            None => st.names.remove(to),
        };
        Ok(())
    }

    fn list(&self) -> Result<Vec<String>> {
        let mut st = self.state();
        if let Gate::Fail(e) = st.gate("list", "")? {
            return Err(e);
        }
        self.inner.list()
    }

    fn sync_dir(&self) -> Result<()> {
        let mut st = self.state();
        if let Gate::Fail(e) = st.gate("sync_dir", "")? {
            return Err(e);
        }
        self.inner.sync_dir()?;
        st.durable_names = st.names.clone();
        self.shared.dir_syncs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
        self.inner.lock(name)
    }
}

/// A handle through [`FaultyStorage`].
#[derive(Debug)]
struct FaultyFile {
    inner: FileHandle,
    id: FileId,
    /// The crash epoch this handle was opened in.
    epoch: u64,
    shared: Arc<Shared>,
}

impl FaultyFile {
    /// Takes the state lock, fails if a crash happened since this handle was opened, and counts
    /// the call.
    fn enter(&self, op: &'static str) -> Result<(MutexGuard<'_, State>, Gate)> {
        let mut st = self.shared.state();
        if self.shared.epoch.load(Ordering::SeqCst) != self.epoch {
            return Err(Error::io(
                op,
                self.inner.name(),
                io::Error::other("crashed: handle opened before a simulated crash"),
            ));
        }
        let gate = st.gate(op, self.inner.name())?;
        Ok((st, gate))
    }

    fn injected(&self, op: &'static str, kind: io::ErrorKind, what: &str) -> Error {
        Error::io(op, self.inner.name(), io::Error::new(kind, what.to_owned()))
    }
}

impl StorageFile for FaultyFile {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let (_st, gate) = self.enter("read")?;
        if let Gate::Fail(e) = gate {
            return Err(e);
        }
        self.inner.read_at(offset, buf)
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        let (mut st, gate) = self.enter("write")?;
        let mut len = data.len();
        let mut failure = None;
        if let Gate::Fail(e) = gate {
            len /= 2;
            failure = Some(e);
        }
        if let Some(keep) = st.faults.tear_next_write.take() {
            len = len.min(keep);
            failure = Some(self.injected(
                "write",
                io::ErrorKind::Other,
                "torn write (injected): only a prefix was written",
            ));
        }
        if let Some(budget) = st.faults.write_budget.as_mut() {
            let fits = usize::try_from(*budget).unwrap_or(usize::MAX);
            if len > fits {
                len = fits;
                failure = Some(self.injected(
                    "write",
                    io::ErrorKind::StorageFull,
                    "no space left on device (injected)",
                ));
            }
            *budget -= len as u64;
        }
        if len > 0 {
            if let Some(inode) = st.inodes.get_mut(&self.id) {
                inode.before_change(offset, offset + len as u64)?;
            }
            self.inner
                .write_at(offset, data.get(..len).unwrap_or_default())?;
        }
        match failure {
            Some(e) => Err(e),
            None => {
                self.shared.writes.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        }
    }

    fn sync(&self) -> Result<()> {
        let (mut st, gate) = self.enter("sync")?;
        let failure = match gate {
            Gate::Fail(e) => Some(e),
            Gate::Go if st.faults.failing_syncs > 0 => {
                st.faults.failing_syncs -= 1;
                Some(self.injected(
                    "sync",
                    io::ErrorKind::Other,
                    "sync failed (injected); the dirty pages were dropped",
                ))
            }
            Gate::Go => None,
        };
        if let Some(e) = failure {
            if let Some(inode) = st.inodes.get_mut(&self.id) {
                inode.sync_failed();
            }
            return Err(e);
        }
        let size = self.inner.size()?;
        self.inner.sync()?;
        if let Some(inode) = st.inodes.get_mut(&self.id) {
            inode.synced(size);
        }
        self.shared.syncs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn size(&self) -> Result<u64> {
        let (_st, gate) = self.enter("size")?;
        if let Gate::Fail(e) = gate {
            return Err(e);
        }
        self.inner.size()
    }

    fn truncate(&self, len: u64) -> Result<()> {
        let (mut st, gate) = self.enter("truncate")?;
        if let Gate::Fail(e) = gate {
            return Err(e);
        }
        let size = self.inner.size()?;
        if let Some(inode) = st.inodes.get_mut(&self.id) {
            let end = size.max(inode.durable_size);
            inode.before_change(len.min(size), end.max(len))?;
        }
        self.inner.truncate(len)
    }

    /// Models Linux's `fallocate`: the file grows to `offset + len` bytes if it is shorter, and
    /// the new bytes read as zeros until written. The new size is a change like a write: a
    /// crash before the next sync leaves a size between the durable and the new one. The new
    /// bytes are not written (the file system only records the allocation), so no crash turns
    /// them into anything but zeros: they are clean pages until a write changes them. An
    /// injected fault fails it with "no space left on device" before anything changes.
    fn allocate(&self, offset: u64, len: u64) -> Result<bool> {
        let (_st, gate) = self.enter("allocate")?;
        if let Gate::Fail(e) = gate {
            return Err(e);
        }
        let end = offset.checked_add(len).ok_or_else(|| {
            Error::InvalidArgument(format!("offset {offset} + {len} is too large"))
        })?;
        if end > self.inner.size()? {
            self.inner.truncate(end)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;

    fn faulty() -> FaultyStorage {
        FaultyStorage::new(Arc::new(MemoryStorage::new()))
    }

    fn contents(s: &dyn Storage, name: &str) -> Vec<u8> {
        read_all(&*s.open(name, OpenMode::Read).unwrap()).unwrap()
    }

    #[test]
    fn create_over_a_durable_file_is_undone_by_a_crash_unless_synced() {
        let s = faulty();
        let f = s.open("f", OpenMode::CreateNew).unwrap();
        f.write_at(0, b"old contents").unwrap();
        f.sync().unwrap();
        s.sync_dir().unwrap();
        let g = s.open("f", OpenMode::Create).unwrap();
        g.write_at(0, b"new").unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "f"), b"old contents");
        let g = s.open("f", OpenMode::Create).unwrap();
        g.write_at(0, b"new").unwrap();
        g.sync().unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "f"), b"new");
    }

    #[test]
    fn a_rename_over_a_durable_file_is_undone_by_a_crash_without_sync_dir() {
        let s = faulty();
        let a = s.open("a", OpenMode::CreateNew).unwrap();
        a.write_at(0, b"aaaa").unwrap();
        a.sync().unwrap();
        let b = s.open("b", OpenMode::CreateNew).unwrap();
        b.write_at(0, b"bb").unwrap();
        b.sync().unwrap();
        s.sync_dir().unwrap();
        s.rename("a", "b").unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "a"), b"aaaa");
        assert_eq!(contents(&s, "b"), b"bb");
    }

    #[test]
    fn writes_through_a_handle_to_a_removed_file_do_not_resurrect_it() {
        let s = faulty();
        let f = s.open("a", OpenMode::CreateNew).unwrap();
        s.remove("a").unwrap();
        f.write_at(0, b"orphan").unwrap();
        f.sync().unwrap();
        let g = s.open("a", OpenMode::CreateNew).unwrap();
        g.write_at(0, b"x").unwrap();
        s.crash().unwrap();
        assert!(!s.exists("a").unwrap());
    }

    #[test]
    fn an_armed_error_fails_one_call_and_a_crash_every_later_one() {
        let s = faulty();
        let f = s.open("a", OpenMode::CreateNew).unwrap();
        s.arm(2, Fault::Error);
        f.write_at(0, b"1").unwrap();
        assert!(!s.fault_fired());
        let e = f.write_at(1, b"2222").unwrap_err();
        assert_eq!(e.code(), "QUOTA");
        assert!(s.fault_fired());
        f.write_at(3, b"3").unwrap();
        assert_eq!(contents(&s, "a"), b"1223");
        s.arm_on("b", 1, Fault::Error);
        f.sync().unwrap();
        assert!(!s.fault_fired(), "a call on another file does not count");
        s.arm(1, Fault::Crash);
        assert!(f.sync().is_err());
        assert!(s.list().is_err());
        assert!(f.write_at(0, b"x").is_err());
        s.reset_faults();
        assert_eq!(contents(&s, "a"), b"1223");
    }
}
