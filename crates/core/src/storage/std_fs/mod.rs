//! [`Storage`] on a directory of the local file system (`std::fs`).
//!
//! Files are plain relative names inside one root directory. Reads and writes are positional
//! (`pread`/`pwrite` on Unix, `seek_read`/`seek_write` on Windows), so one handle serves many
//! threads without a shared cursor. On targets with neither (wasm32), every call fails with an
//! [`Error::Io`] of kind `Unsupported`; the WebAssembly build uses a JS-backed storage instead.
//!
//! # File names
//!
//! A name must be non-empty and must not contain `/`, `\`, `:`, NUL or `..`, nor be `.`: names
//! never leave the root directory and mean the same on every platform (`:` would name a drive or
//! an alternate data stream on Windows). Other names get [`Error::InvalidArgument`].
//!
//! # Locking
//!
//! [`Storage::lock`] runs the lock-file protocol of [`super::lock_file`] (the same code Node.js
//! runs, through the WebAssembly bindings) over this storage's [`LockPrimitives`]: `link(2)`,
//! file reads with the modification time, and `/proc` for processes (Linux; elsewhere the
//! liveness of another process is unknown).
//!
//! # Preallocation and mappings
//!
//! [`StorageFile::allocate`] reserves disk space with `fallocate(2)` on Linux (falling back to
//! extending the file, sparse, where the file system cannot) and extends the file elsewhere
//! (`set_len`). On Linux, [`StorageFile::map_writable`] maps a range that `allocate` reserved
//! through the same handle (`linux_map.rs`, the crate's only `unsafe` code, says what can go
//! wrong and how it is avoided); elsewhere nothing is mapped.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(target_os = "linux")]
mod linux_map;

use crate::storage::lock_primitives::{LockPrimitives, ProcessStat, SmallFile};
use crate::storage::{FileHandle, OpenMode, Storage, StorageFile, StorageLock};
use crate::{Error, Result};

/// Offsets and lengths beyond this are refused: the OS takes signed 64-bit offsets.
const MAX_OFFSET: u64 = i64::MAX as u64;

/// A directory on disk. Cloning gives another handle to the same directory.
#[derive(Debug, Clone)]
pub struct StdFsStorage {
    root: PathBuf,
}

impl StdFsStorage {
    /// Uses directory `root`, creating it (and its parents) if missing.
    pub fn open(root: impl Into<PathBuf>) -> Result<StdFsStorage> {
        let root = root.into();
        fs::create_dir_all(&root).map_err(|e| Error::io("create_dir", root_name(&root), e))?;
        Ok(StdFsStorage { root })
    }

    /// The directory this storage lives in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of `name`, after checking that it is a plain relative name.
    fn path(&self, name: &str) -> Result<PathBuf> {
        check_name(name)?;
        Ok(self.root.join(name))
    }
}

fn root_name(root: &Path) -> String {
    root.display().to_string()
}

/// Accepts only plain relative names (see the module docs).
fn check_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name == "."
        || name.contains("..")
        || name.contains(['/', '\\', ':', '\0']);
    if bad {
        return Err(Error::InvalidArgument(format!(
            "{name:?} is not a plain file name (no '/', '\\', ':', NUL or \"..\", not empty)"
        )));
    }
    Ok(())
}

/// Maps an OS error: `NotFound` and `AlreadyExists` get their own variants, the rest is `Io`.
fn map_err(op: &'static str, name: &str, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound { file: name.into() },
        io::ErrorKind::AlreadyExists => Error::AlreadyExists { file: name.into() },
        _ => Error::io(op, name, e),
    }
}

impl Storage for StdFsStorage {
    fn open(&self, name: &str, mode: OpenMode) -> Result<FileHandle> {
        let path = self.path(name)?;
        let mut options = OpenOptions::new();
        match mode {
            OpenMode::Read => options.read(true),
            OpenMode::ReadWrite => options.read(true).write(true),
            OpenMode::Create => options.read(true).write(true).create(true).truncate(true),
            OpenMode::CreateNew => options.read(true).write(true).create_new(true),
        };
        let file = options.open(&path).map_err(|e| map_err("open", name, e))?;
        Ok(Arc::new(StdFile {
            name: name.to_owned(),
            file,
            writable: mode != OpenMode::Read,
            #[cfg(target_os = "linux")]
            maps: Arc::default(),
        }))
    }

    fn exists(&self, name: &str) -> Result<bool> {
        let path = self.path(name)?;
        path.try_exists().map_err(|e| map_err("exists", name, e))
    }

    fn remove(&self, name: &str) -> Result<()> {
        let path = self.path(name)?;
        fs::remove_file(path).map_err(|e| map_err("remove", name, e))
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let from_path = self.path(from)?;
        let to_path = self.path(to)?;
        // Both Unix `rename(2)` and Windows `MoveFileExW(MOVEFILE_REPLACE_EXISTING)` (what std
        // uses) replace `to` atomically.
        fs::rename(from_path, to_path).map_err(|e| map_err("rename", from, e))
    }

    fn list(&self) -> Result<Vec<String>> {
        let dir = fs::read_dir(&self.root).map_err(|e| Error::io("list", "", e))?;
        let mut names = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| Error::io("list", "", e))?;
            let is_dir = entry
                .file_type()
                .map_err(|e| Error::io("list", "", e))?
                .is_dir();
            // Names that are not UTF-8 cannot have been written by ShaleDB: skipped.
            if let (false, Ok(name)) = (is_dir, entry.file_name().into_string()) {
                names.push(name);
            }
        }
        Ok(names)
    }

    #[cfg(unix)]
    fn sync_dir(&self) -> Result<()> {
        File::open(&self.root)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| Error::io("sync_dir", "", e))
    }

    /// Windows cannot open a directory for flushing without unsafe Win32 calls, and NTFS
    /// journals directory changes itself: a no-op.
    #[cfg(not(unix))]
    fn sync_dir(&self) -> Result<()> {
        Ok(())
    }

    fn lock(&self, name: &str) -> Result<Box<dyn StorageLock>> {
        check_name(name)?;
        super::lock_file::acquire(self, name)
    }
}

impl LockPrimitives for StdFsStorage {
    fn hard_link(&self, existing: &str, name: &str) -> Result<()> {
        let from = self.path(existing)?;
        let to = self.path(name)?;
        fs::hard_link(from, to).map_err(|e| map_err("link", name, e))
    }

    fn read_small(&self, name: &str, max: usize) -> Result<SmallFile> {
        let path = self.path(name)?;
        let file = File::open(path).map_err(|e| map_err("open", name, e))?;
        let age = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(age_of);
        let mut bytes = Vec::new();
        file.take(max as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io("read", name, e))?;
        Ok(SmallFile { bytes, age })
    }

    #[cfg(any(unix, windows))]
    fn process_id(&self) -> Result<u32> {
        Ok(std::process::id())
    }

    /// Targets without processes (wasm32): `std::process::id` would panic there.
    #[cfg(not(any(unix, windows)))]
    fn process_id(&self) -> Result<u32> {
        Err(Error::io(
            "lock",
            "",
            io::Error::new(
                io::ErrorKind::Unsupported,
                "no process ids on this platform",
            ),
        ))
    }

    fn process_stat(&self, pid: Option<u32>) -> ProcessStat {
        process_stat(pid)
    }

    fn random_u64(&self) -> u64 {
        random_u64()
    }

    fn display_name(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }
}

/// Time since `modified`; `None` if it is in the future.
#[cfg(any(unix, windows))]
fn age_of(modified: std::time::SystemTime) -> Option<std::time::Duration> {
    std::time::SystemTime::now().duration_since(modified).ok()
}

/// No clock here (`SystemTime::now` would panic on wasm32); no file either, in fact.
#[cfg(not(any(unix, windows)))]
fn age_of(_modified: std::time::SystemTime) -> Option<std::time::Duration> {
    None
}

/// `/proc/<pid>/stat`, or `/proc/self/stat`. Read as bytes: a command name that is not UTF-8
/// is replaced, the fields after it are ASCII.
#[cfg(target_os = "linux")]
fn process_stat(pid: Option<u32>) -> ProcessStat {
    if !Path::new("/proc/self/stat").exists() {
        return ProcessStat::Unsupported;
    }
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_owned(),
    };
    match fs::read(path) {
        Ok(bytes) => ProcessStat::Text(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => ProcessStat::NoProcess,
        Err(_) => ProcessStat::Unreadable,
    }
}

#[cfg(not(target_os = "linux"))]
fn process_stat(_pid: Option<u32>) -> ProcessStat {
    ProcessStat::Unsupported
}

/// 64 random bits: std's per-process random hash keys, mixed with a counter (and the clock,
/// where there is one).
fn random_u64() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};

    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    #[cfg(any(unix, windows))]
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// An open file on disk.
#[derive(Debug)]
struct StdFile {
    name: String,
    file: File,
    writable: bool,
    /// Space reserved and ranges mapped through this handle.
    #[cfg(target_os = "linux")]
    maps: Arc<linux_map::MapGuard>,
}

impl StdFile {
    fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::io(
                op,
                &self.name,
                io::Error::new(io::ErrorKind::PermissionDenied, "opened read-only"),
            ))
        }
    }
}

impl StorageFile for StdFile {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset.saturating_add(done as u64);
            if pos > MAX_OFFSET {
                break; // no file is that large
            }
            let rest = buf.get_mut(done..).unwrap_or_default();
            match read_at(&self.file, rest, pos) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io("read", &self.name, e)),
            }
        }
        Ok(done)
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.check_writable("write")?;
        let end = offset.checked_add(data.len() as u64);
        if end.is_none_or(|end| end > MAX_OFFSET) {
            return Err(Error::InvalidArgument(format!(
                "write of {} bytes at offset {offset} is beyond the largest file size",
                data.len()
            )));
        }
        write_all_at(&self.file, data, offset).map_err(|e| Error::io("write", &self.name, e))
    }

    /// `File::sync_data` is `fdatasync` on Linux; on Apple platforms std issues
    /// `fcntl(F_FULLFSYNC)` for it, which really flushes the drive's cache.
    fn sync(&self) -> Result<()> {
        // Windows' FlushFileBuffers needs write access; nothing was written through a
        // read-only handle anyway.
        if cfg!(windows) && !self.writable {
            return Ok(());
        }
        self.file
            .sync_data()
            .map_err(|e| Error::io("sync", &self.name, e))
    }

    fn size(&self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| Error::io("size", &self.name, e))
    }

    fn truncate(&self, len: u64) -> Result<()> {
        self.check_writable("truncate")?;
        if len > MAX_OFFSET {
            return Err(Error::InvalidArgument(format!(
                "length {len} is beyond the largest file size"
            )));
        }
        #[cfg(target_os = "linux")]
        self.maps
            .check_truncate(len)
            .map_err(|why| Error::InvalidArgument(format!("{:?}: {why}", self.name)))?;
        self.file
            .set_len(len)
            .map_err(|e| Error::io("truncate", &self.name, e))
    }

    /// Linux: `fallocate(2)`, which reserves the blocks; where the file system has no
    /// `fallocate`, and on other platforms, the file is extended (`set_len`, sparse where the
    /// file system makes it so) and nothing is reserved.
    fn allocate(&self, offset: u64, len: u64) -> Result<bool> {
        self.check_writable("allocate")?;
        let end = offset
            .checked_add(len)
            .filter(|&end| end <= MAX_OFFSET)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "{len} bytes at offset {offset} are beyond the largest file size"
                ))
            })?;
        if len == 0 {
            return Ok(true);
        }
        #[cfg(target_os = "linux")]
        match linux_map::fallocate(&self.file, offset, len) {
            Ok(()) => {
                self.maps.reserved(offset, end);
                return Ok(true);
            }
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {}
            Err(e) => return Err(Error::io("allocate", &self.name, e)),
        }
        if self.size()? < end {
            self.file
                .set_len(end)
                .map_err(|e| Error::io("allocate", &self.name, e))?;
        }
        Ok(true)
    }

    #[cfg(target_os = "linux")]
    fn map_writable(
        &self,
        offset: u64,
        len: u64,
    ) -> Result<Option<Box<dyn crate::storage::WritableMap>>> {
        if !self.writable {
            return Ok(None);
        }
        let size = self.size()?;
        let map = linux_map::FileMap::new(&self.file, size, offset, len, &self.maps)
            .map_err(|e| Error::io("map", &self.name, e))?;
        Ok(map.map(|m| Box::new(m) as Box<dyn crate::storage::WritableMap>))
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(unix)]
fn write_all_at(file: &File, data: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, data, offset)
}

/// `seek_read` also moves the file cursor, which nothing here uses.
#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(windows)]
fn write_all_at(file: &File, mut data: &[u8], mut offset: u64) -> io::Result<()> {
    while !data.is_empty() {
        match std::os::windows::fs::FileExt::seek_write(file, data, offset) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "wrote 0 bytes")),
            Ok(n) => {
                data = data.get(n..).unwrap_or_default();
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_at(_file: &File, _buf: &mut [u8], _offset: u64) -> io::Result<usize> {
    Err(unsupported())
}

#[cfg(not(any(unix, windows)))]
fn write_all_at(_file: &File, _data: &[u8], _offset: u64) -> io::Result<()> {
    Err(unsupported())
}

#[cfg(not(any(unix, windows)))]
fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "positional file I/O is not available on this platform",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_name_accepts_plain_names_and_rejects_paths() {
        for ok in [
            "000123.sst",
            "wal-000007.log",
            "MANIFEST-000002",
            "LOCK",
            ".hidden",
        ] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", ".", "..", "a/b", "a\\b", "../x", "x..y", "c:x", "a\0b", "/abs",
        ] {
            assert!(
                matches!(check_name(bad), Err(Error::InvalidArgument(_))),
                "{bad:?}"
            );
        }
    }
}
