//! The storage seam: every byte ShaleDB reads or writes goes through [`Storage`] and
//! [`StorageFile`].
//!
//! A storage is a flat namespace of plain relative file names (`000123.sst`, `wal-000007.log`,
//! `MANIFEST-000002`) — think LevelDB's `Env` or redb's `StorageBackend`. Implementations:
//! [`std_fs::StdFsStorage`] (a directory on disk), [`memory::MemoryStorage`] (tests and purely
//! in-memory databases), `faulty::FaultyStorage` (feature `testing`) (a wrapper that injects torn writes, failed
//! syncs and crashes), and, in the `shaledb-wasm` crate, one backed by a JavaScript object.
//!
//! A storage on a file system shared with other processes implements [`Storage::lock`] with
//! the lock-file protocol of [`lock_file`], run over its [`lock_primitives::LockPrimitives`]
//! (`std_fs` natively, Node.js through the bindings); the others exclude in their own way.
//!
//! Durability contract, shared by all implementations:
//! - After `write_at` returns, the bytes are visible to every later read through any handle and
//!   survive the process being killed (they have reached the OS or the browser's storage).
//! - After `sync` returns, the file's data survives power loss.
//! - After `sync_dir` returns, creations, renames and removals done before it survive power loss.
//! - Bytes copied into a [`WritableMap`] are where `write_at` puts them: visible to every later
//!   read and surviving the process being killed; the file's `sync` makes them durable.

#[cfg(any(test, feature = "testing"))]
pub mod faulty;
pub mod lock_file;
pub mod lock_primitives;
pub mod memory;
pub mod std_fs;

use std::sync::Arc;

use crate::Result;

/// `Send` on native targets; nothing on wasm32, where JS-backed values are not `Send` and there
/// are no threads to send them to.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSend: Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + ?Sized> MaybeSend for T {}
/// `Send` on native targets; nothing on wasm32.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSend {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSend for T {}

/// `Sync` on native targets; nothing on wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSync: Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Sync + ?Sized> MaybeSync for T {}
/// `Sync` on native targets; nothing on wasm32.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSync {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSync for T {}

/// How [`Storage::open`] treats an existing or missing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Existing file, read only. Missing: [`crate::Error::NotFound`].
    Read,
    /// Existing file, read and write. Missing: [`crate::Error::NotFound`].
    ReadWrite,
    /// Create the file, or truncate it to zero length if it exists; read and write.
    Create,
    /// Create a new file; if it exists: [`crate::Error::AlreadyExists`]. Read and write.
    CreateNew,
}

/// A shared handle to an open file. Dropping the last clone closes it.
pub type FileHandle = Arc<dyn StorageFile>;

/// A flat directory of named files.
pub trait Storage: MaybeSend + MaybeSync + std::fmt::Debug {
    /// Opens `name` as `mode` says.
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle>;

    /// Whether `name` exists.
    fn exists(&self, name: &str) -> Result<bool>;

    /// Removes `name`. Missing: [`crate::Error::NotFound`]. Open handles stay usable until
    /// dropped where the platform allows it (POSIX does).
    fn remove(&self, name: &str) -> Result<()>;

    /// Renames `from` to `to`, atomically replacing `to` if it exists.
    fn rename(&self, from: &str, to: &str) -> Result<()>;

    /// The names of all files, in no particular order.
    fn list(&self) -> Result<Vec<String>>;

    /// Makes earlier creations, renames and removals durable (fsync of the directory).
    fn sync_dir(&self) -> Result<()>;

    /// Takes the exclusive lock `name` (a lock file). Held until the guard is dropped. A second
    /// attempt, from this or another process, fails with [`crate::Error::Locked`] while it is
    /// held; a lock left behind by a process that no longer runs is taken over.
    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>>;
}

/// An open file. All methods take `&self`: one handle may serve many readers at once.
pub trait StorageFile: MaybeSend + MaybeSync + std::fmt::Debug {
    /// The file's name within its storage (used in error messages).
    fn name(&self) -> &str;

    /// Reads up to `buf.len()` bytes at `offset` and returns how many were read. Fewer bytes
    /// than asked are returned only at the end of the file; `0` means `offset >= size`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize>;

    /// Writes all of `data` at `offset`, extending the file if needed (a gap reads as zeros).
    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()>;

    /// Makes every byte written so far durable (fdatasync; `F_FULLFSYNC` on Apple platforms).
    fn sync(&self) -> Result<()>;

    /// The number this open file has for whoever hosts the storage (the WebAssembly bindings'
    /// JavaScript file id), for a host that syncs the file itself (deferred WAL syncs:
    /// [`crate::Db::begin_wal_sync`]); `None` (the default) where there is no such host.
    fn host_id(&self) -> Option<u64> {
        None
    }

    /// The current size in bytes.
    fn size(&self) -> Result<u64>;

    /// Cuts or extends (with zeros) the file to `len` bytes.
    fn truncate(&self, len: u64) -> Result<()>;

    /// Preallocates bytes `[offset, offset + len)`: the file becomes at least `offset + len`
    /// bytes long (never shorter than it was; new bytes read as zeros), and where the platform
    /// can, disk space is reserved for the range so that writing it later does not fail for
    /// lack of space. Returns `false`, changing nothing, if this storage does not preallocate
    /// (the default): callers must work either way. Like a write, the new size is durable after
    /// the next `sync`. Errors as `write_at` (a full disk is an [`crate::Error::Io`] of kind
    /// `StorageFull`); the file may then have grown by part of the range.
    fn allocate(&self, offset: u64, len: u64) -> Result<bool> {
        let _ = (offset, len);
        Ok(false)
    }

    /// Maps bytes `[offset, offset + len)` of the file for writing ([`WritableMap`]), where
    /// this storage can: `Ok(None)` if it cannot (the default: in memory, the fault-injecting
    /// storage, WebAssembly), or not for this range — natively (Linux) only a range reserved
    /// by [`StorageFile::allocate`] through this handle, within the file, is mapped.
    ///
    /// While a mapping lives, the file must not be cut below its end by another handle or
    /// process (a write through the mapping would then kill the process with `SIGBUS`); this
    /// handle's own `truncate` refuses to. Nothing in ShaleDB opens a mapped log twice.
    fn map_writable(&self, offset: u64, len: u64) -> Result<Option<Box<dyn WritableMap>>> {
        let _ = (offset, len);
        Ok(None)
    }

    /// Reads exactly `buf.len()` bytes at `offset`; a short file is an [`crate::Error::Io`] of
    /// kind `UnexpectedEof`.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let mut done = 0usize;
        while done < buf.len() {
            let rest = buf.get_mut(done..).unwrap_or_default();
            let n = self.read_at(offset + done as u64, rest)?;
            if n == 0 {
                return Err(crate::Error::io(
                    "read",
                    self.name(),
                    std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("file ends before offset {}", offset + buf.len() as u64),
                    ),
                ));
            }
            done += n;
        }
        Ok(())
    }
}

/// A shared, writable memory mapping of a range of a file ([`StorageFile::map_writable`]):
/// copying bytes into it puts them in the operating system's page cache, like
/// [`StorageFile::write_at`] without a system call. Dropping it unmaps the range; what was
/// copied stays in the file.
pub trait WritableMap: MaybeSend + MaybeSync + std::fmt::Debug {
    /// The file offset of the first mapped byte.
    fn offset(&self) -> u64;

    /// The file offset just past the last mapped byte.
    fn end(&self) -> u64;

    /// Copies `data` to file offset `at`. When it returns `Ok`, the bytes are visible to every
    /// read of the file and survive the process being killed. `InvalidArgument`, copying
    /// nothing, unless `at..at + data.len()` lies within `offset()..end()`.
    fn write_at(&mut self, at: u64, data: &[u8]) -> Result<()>;
}

/// A held lock; dropping it releases the lock.
pub trait StorageLock: MaybeSend + std::fmt::Debug {}
