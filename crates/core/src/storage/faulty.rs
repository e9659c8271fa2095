//! A fault-injecting [`Storage`] wrapper for crash tests, in the style of LevelDB's
//! `FaultInjectionTestEnv` and RocksDB's `FaultInjectionTestFS`.
//!
//! [`FaultyStorage`] passes every call to an inner storage and remembers, per file, how many
//! bytes were durable at the file's last successful [`StorageFile::sync`]. A test can then
//! simulate a power loss ([`FaultyStorage::crash`], [`FaultyStorage::crash_torn`]) and reopen
//! the database on the same storage, or make syncs and writes fail.
//!
//! # What a crash models
//!
//! ShaleDB's files are append-only, so the model only tracks a *synced length* per file:
//! - Bytes at or beyond the synced length are lost by a crash; `crash_torn` keeps a random prefix
//!   of them (possibly with its last bytes garbled or zeroed), as a torn write would.
//! - Overwrites *below* the synced length are durable at once (not modelled as lost).
//! - `truncate` is durable at once: cutting a file lowers its synced length; extending it adds
//!   unsynced zeros. Opening an existing file with [`OpenMode::Create`] is such a truncation.
//! - A file created (through this wrapper) since the last [`Storage::sync_dir`] and never
//!   successfully synced is removed by `crash` (by `crash_torn`: removed, or kept with a random
//!   prefix, by a coin toss). A file that was synced once is kept even without `sync_dir`.
//! - `rename` and `remove` are durable when they return. A renamed file keeps its tracking
//!   (synced length, whether it is new and never synced) under its new name.
//! - Files that existed before the wrapper first saw them count as fully synced.
//! - A failed sync (injected) makes nothing durable; a later successful sync makes everything
//!   durable (Linux may in fact drop dirty pages after a failed fsync: the engine must not
//!   retry, it poisons the database).
//!
//! After a crash, every handle opened before it fails with an [`Error::Io`] saying "crashed";
//! new opens see the post-crash files. Crashes do not release locks: drop the crashed database
//! (which drops its lock guard) before reopening. Injected faults stay armed across a crash until
//! [`FaultyStorage::reset_faults`]. All changes must go through the wrapper: changes made to the
//! inner storage directly are not tracked.
//!
//! Everything is deterministic: `crash_torn` draws from a xorshift generator seeded by the
//! caller, and files are visited in name order.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::storage::{FileHandle, OpenMode, Storage, StorageFile, StorageLock};
use crate::{Error, Result};

/// Identifies one file (an inode) across renames.
type FileId = u64;

/// A [`Storage`] wrapper that simulates crashes and injects I/O faults. Cloning gives another
/// handle to the same storage and the same controls.
#[derive(Debug, Clone)]
pub struct FaultyStorage {
    inner: Arc<dyn Storage>,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Held across every inner write, sync, truncate, open, rename and remove, so that a crash
    /// never interleaves with one.
    state: Mutex<State>,
    /// Incremented by every crash; handles from an older epoch are dead.
    epoch: AtomicU64,
    syncs: AtomicU64,
    dir_syncs: AtomicU64,
    writes: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    names: BTreeMap<String, FileId>,
    files: HashMap<FileId, Tracked>,
    next_id: FileId,
    faults: Faults,
}

#[derive(Debug, Clone, Copy)]
struct Tracked {
    /// Length durable as of the last successful sync (or truncation).
    synced_len: u64,
    /// Created through the wrapper since the last `sync_dir`.
    new_since_dir_sync: bool,
    /// A sync of this file has succeeded at least once.
    ever_synced: bool,
}

#[derive(Debug, Default, Clone, Copy)]
struct Faults {
    failing_syncs: u64,
    write_budget: Option<u64>,
    tear_next_write: Option<usize>,
}

impl FaultyStorage {
    /// Wraps `inner`. Files already in it count as fully synced.
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

    /// Simulates a power loss: every file is cut back to its last synced length, and files
    /// created since the last `sync_dir` and never synced are removed. Handles opened before
    /// fail from now on. Errors only if the inner storage fails.
    pub fn crash(&self) -> Result<()> {
        self.crash_with(None)
    }

    /// Like [`FaultyStorage::crash`], but each file keeps a pseudo-random prefix of its unsynced
    /// tail, whose last few bytes may be garbled or zeroed (a torn write); a new, never-synced
    /// file is removed or kept with a random prefix. The same seed over the same files gives the
    /// same result.
    pub fn crash_torn(&self, seed: u64) -> Result<()> {
        self.crash_with(Some(XorShift::new(seed)))
    }

    /// The next `n` file syncs fail with [`Error::Io`] and make nothing durable.
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
    /// fail likewise. Extending a file with `truncate` does not count.
    pub fn fail_writes_after_bytes(&self, n: u64) {
        self.state().faults.write_budget = Some(n);
    }

    /// The next `write_at` writes only its first `keep` bytes, then fails with [`Error::Io`].
    pub fn tear_next_write(&self, keep: usize) {
        self.state().faults.tear_next_write = Some(keep);
    }

    /// Disarms every injected fault (not the effects of crashes).
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
        let mut state = self.state();
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
        // Whatever happens below, the old tracking is void: files that survive are durable.
        let names = std::mem::take(&mut state.names);
        let files = std::mem::take(&mut state.files);
        for (name, id) in names {
            let Some(tracked) = files.get(&id) else {
                continue;
            };
            let never_durable = tracked.new_since_dir_sync && !tracked.ever_synced;
            let keep_some = rng.as_mut().is_some_and(|r| r.next() & 1 == 1);
            if never_durable && !keep_some {
                match self.inner.remove(&name) {
                    Ok(()) | Err(Error::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
                continue;
            }
            let file = match self.inner.open(&name, OpenMode::ReadWrite) {
                Ok(file) => file,
                Err(Error::NotFound { .. }) => continue,
                Err(e) => return Err(e),
            };
            let size = file.size()?;
            let synced = tracked.synced_len.min(size);
            if size == synced {
                continue;
            }
            let kept = match rng.as_mut() {
                None => 0,
                Some(r) => r.below(size - synced + 1),
            };
            file.truncate(synced + kept)?;
            if let Some(r) = rng.as_mut() {
                damage_tail(&*file, r, synced, synced + kept)?;
            }
        }
        Ok(())
    }

    /// Registers a handle to `name` as opened: creates its tracking entry if it has none.
    fn track(
        &self,
        state: &mut State,
        name: &str,
        existed: bool,
        file: &FileHandle,
    ) -> Result<FileId> {
        if let Some(id) = state.names.get(name) {
            return Ok(*id);
        }
        let tracked = if existed {
            Tracked {
                synced_len: file.size()?,
                new_since_dir_sync: false,
                ever_synced: true,
            }
        } else {
            Tracked {
                synced_len: 0,
                new_since_dir_sync: true,
                ever_synced: false,
            }
        };
        let id = state.next_id;
        state.next_id += 1;
        state.names.insert(name.to_owned(), id);
        state.files.insert(id, tracked);
        Ok(id)
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// In a torn tail `[synced, end)`, garbles or zeroes up to its last 8 bytes, or leaves them, by
/// the roll of `rng`. Never touches synced bytes.
fn damage_tail(file: &dyn StorageFile, rng: &mut XorShift, synced: u64, end: u64) -> Result<()> {
    let n = (end - synced).min(8);
    let how = rng.below(3);
    if n == 0 || how == 0 {
        return Ok(());
    }
    let mut bytes = [0u8; 8];
    let bytes = bytes.get_mut(..n as usize).unwrap_or_default();
    if how == 1 {
        file.read_exact_at(end - n, bytes)?;
        for b in bytes.iter_mut() {
            // Xor with a non-zero value: every byte changes.
            *b ^= (rng.below(255) + 1) as u8;
        }
    }
    file.write_at(end - n, bytes)
}

impl Storage for FaultyStorage {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        let mut state = self.state();
        let existed = self.inner.exists(name)?;
        let file = self.inner.open(name, mode)?;
        let id = self.track(&mut state, name, existed, &file)?;
        if mode == OpenMode::Create {
            if let Some(tracked) = state.files.get_mut(&id) {
                tracked.synced_len = 0; // truncation is durable at once
            }
        }
        Ok(Arc::new(FaultyFile {
            inner: file,
            id,
            epoch: self.shared.epoch.load(Ordering::SeqCst),
            shared: self.shared.clone(),
        }))
    }

    fn exists(&self, name: &str) -> Result<bool> {
        self.inner.exists(name)
    }

    fn remove(&self, name: &str) -> Result<()> {
        let mut state = self.state();
        self.inner.remove(name)?;
        if let Some(id) = state.names.remove(name) {
            state.files.remove(&id);
        }
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let mut state = self.state();
        self.inner.rename(from, to)?;
        let moved = state.names.remove(from);
        let replaced = match moved {
            Some(id) => state.names.insert(to.to_owned(), id),
            None => state.names.remove(to),
        };
        if let Some(old) = replaced {
            state.files.remove(&old);
        }
        Ok(())
    }

    fn list(&self) -> Result<Vec<String>> {
        self.inner.list()
    }

    fn sync_dir(&self) -> Result<()> {
        let mut state = self.state();
        self.inner.sync_dir()?;
        for tracked in state.files.values_mut() {
            tracked.new_since_dir_sync = false;
        }
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
    /// Fails if a crash happened since this handle was opened.
    fn check_alive(&self, op: &'static str) -> Result<()> {
        if self.shared.epoch.load(Ordering::SeqCst) == self.epoch {
            return Ok(());
        }
        Err(Error::io(
            op,
            self.inner.name(),
            io::Error::other("crashed: handle opened before a simulated crash"),
        ))
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
        self.check_alive("read")?;
        self.inner.read_at(offset, buf)
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        let mut state = self.shared.state();
        self.check_alive("write")?;
        let mut len = data.len();
        let mut failure = None;
        if let Some(keep) = state.faults.tear_next_write.take() {
            len = len.min(keep);
            failure = Some(self.injected(
                "write",
                io::ErrorKind::Other,
                "torn write (injected): only a prefix was written",
            ));
        }
        if let Some(budget) = state.faults.write_budget.as_mut() {
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
        let mut state = self.shared.state();
        self.check_alive("sync")?;
        if state.faults.failing_syncs > 0 {
            state.faults.failing_syncs -= 1;
            return Err(self.injected(
                "sync",
                io::ErrorKind::Other,
                "sync failed (injected); nothing was made durable",
            ));
        }
        let size = self.inner.size()?;
        self.inner.sync()?;
        if let Some(tracked) = state.files.get_mut(&self.id) {
            tracked.synced_len = size;
            tracked.ever_synced = true;
        }
        self.shared.syncs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn size(&self) -> Result<u64> {
        self.check_alive("size")?;
        self.inner.size()
    }

    fn truncate(&self, len: u64) -> Result<()> {
        let mut state = self.shared.state();
        self.check_alive("truncate")?;
        self.inner.truncate(len)?;
        if let Some(tracked) = state.files.get_mut(&self.id) {
            tracked.synced_len = tracked.synced_len.min(len);
        }
        Ok(())
    }
}

/// A small deterministic generator (xorshift64), seeded through splitmix64 so that nearby
/// seeds give unrelated streams.
#[derive(Debug, Clone)]
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift(if z == 0 { 1 } else { z })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A value in `0..n` (`0` if `n == 0`).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
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
        let f = s.open(name, OpenMode::Read).unwrap();
        let mut buf = vec![0; f.size().unwrap() as usize];
        f.read_exact_at(0, &mut buf).unwrap();
        buf
    }

    #[test]
    fn xorshift_is_deterministic_and_seeds_differ() {
        let draw = |seed| {
            let mut r = XorShift::new(seed);
            (0..4).map(|_| r.next()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(0), draw(1));
        assert!(draw(0).iter().all(|&x| x != 0));
        assert_eq!(XorShift::new(3).below(0), 0);
        assert!((0..100).all(|_| XorShift::new(9).below(5) < 5));
    }

    #[test]
    fn damage_tail_changes_only_the_last_bytes_of_the_unsynced_tail() {
        let (mut garbled, mut zeroed, mut intact) = (0, 0, 0);
        for seed in 0..60 {
            let s = MemoryStorage::new();
            let f = s.open("f", OpenMode::Create).unwrap();
            f.write_at(0, &[0xAA; 20]).unwrap();
            damage_tail(&*f, &mut XorShift::new(seed), 10, 20).unwrap();
            let after = contents(&s, "f");
            assert_eq!(after.len(), 20);
            assert!(after[..12].iter().all(|&b| b == 0xAA), "seed {seed}");
            let tail = &after[12..];
            if tail.iter().all(|&b| b == 0xAA) {
                intact += 1;
            } else if tail.iter().all(|&b| b == 0) {
                zeroed += 1;
            } else {
                assert!(tail.iter().all(|&b| b != 0xAA), "seed {seed}: {tail:?}");
                garbled += 1;
            }
        }
        assert!(garbled > 0 && zeroed > 0 && intact > 0);
    }

    #[test]
    fn damage_tail_never_touches_synced_bytes_of_a_short_tail() {
        for seed in 0..20 {
            let s = MemoryStorage::new();
            let f = s.open("f", OpenMode::Create).unwrap();
            f.write_at(0, &[0xAA; 12]).unwrap();
            damage_tail(&*f, &mut XorShift::new(seed), 10, 12).unwrap();
            assert!(contents(&s, "f")[..10].iter().all(|&b| b == 0xAA));
        }
    }

    #[test]
    fn crash_torn_sometimes_keeps_a_never_synced_new_file() {
        let mut kept = 0;
        for seed in 0..32 {
            let s = faulty();
            let f = s.open("new", OpenMode::CreateNew).unwrap();
            f.write_at(0, &[1; 40]).unwrap();
            s.crash_torn(seed).unwrap();
            if s.exists("new").unwrap() {
                kept += 1;
                assert!(contents(&s, "new").len() <= 40);
            }
        }
        assert!(kept > 0 && kept < 32, "kept {kept} of 32");
    }

    #[test]
    fn create_over_a_durable_file_makes_the_truncation_durable() {
        let s = faulty();
        let f = s.open("f", OpenMode::CreateNew).unwrap();
        f.write_at(0, b"old contents").unwrap();
        f.sync().unwrap();
        s.sync_dir().unwrap();
        let g = s.open("f", OpenMode::Create).unwrap();
        g.write_at(0, b"new").unwrap();
        s.crash().unwrap();
        assert_eq!(contents(&s, "f"), b"");
    }

    #[test]
    fn rename_over_a_tracked_file_forgets_the_replaced_one() {
        let s = faulty();
        let a = s.open("a", OpenMode::CreateNew).unwrap();
        a.write_at(0, b"aaaa").unwrap();
        a.sync().unwrap();
        let _b = s.open("b", OpenMode::CreateNew).unwrap();
        s.rename("a", "b").unwrap();
        {
            let state = s.state();
            assert_eq!(state.names.len(), 1);
            assert_eq!(state.files.len(), 1);
        }
        s.crash().unwrap();
        assert_eq!(contents(&s, "b"), b"aaaa");
    }

    #[test]
    fn writes_through_a_handle_to_a_removed_file_are_not_tracked() {
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
}
