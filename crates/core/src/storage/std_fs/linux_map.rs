//! Linux: disk space reserved with `fallocate(2)`, and shared writable mappings (`mmap(2)`) of
//! reserved ranges. One of the crate's three places with `unsafe` code (the others: `memtable/`,
//! `db/thread_priority.rs`).
//!
//! A copy into a `MAP_SHARED` mapping of a file fills the page-cache page that backs the file,
//! the page `pwrite(2)` would fill: it survives the process being killed, every read of the
//! file sees it at once, and `fdatasync` writes it back (the kernel tracks pages dirtied
//! through mappings). What a mapping adds is a way to fail without an error code: touching a
//! mapped page the kernel cannot back raises `SIGBUS` — a page beyond the end of the file, a
//! hole on a full disk, or a page that has to be read back from disk and cannot be (an I/O
//! error). So a [`FileMap`] covers only
//! - bytes inside the file, whose blocks `fallocate` reserved through the same handle
//!   ([`MapGuard::reserved`]): no hole to fill on a full disk, and reserved blocks that were
//!   never written read as zeros without a disk read;
//! - and the handle refuses to cut the file below a live mapping ([`MapGuard::check_truncate`]).
//!
//! What stays: a page of the mapping that was written, written back and evicted from the page
//! cache is read back from disk when it is touched again; a disk that fails that read kills the
//! process (`SIGBUS`) where `pwrite` would have returned `EIO`. A log is written sequentially,
//! so this takes a partly filled page being evicted between two appends and the disk failing
//! its read.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use crate::storage::WritableMap;
use crate::{Error, Result};

/// Reserved space and live mappings of one open file.
#[derive(Debug, Default)]
pub(super) struct MapGuard {
    state: Mutex<GuardState>,
}

#[derive(Debug, Default)]
struct GuardState {
    /// One contiguous range `start..end` whose blocks `fallocate` reserved through this handle
    /// (the last such range, extended while allocations are adjacent).
    reserved: (u64, u64),
    /// Mappings alive.
    live: usize,
    /// The largest end of a mapping made since `live` was last 0.
    mapped_end: u64,
}

impl MapGuard {
    fn lock(&self) -> MutexGuard<'_, GuardState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that `fallocate` reserved `start..end`.
    pub(super) fn reserved(&self, start: u64, end: u64) {
        let mut st = self.lock();
        let (s, e) = st.reserved;
        st.reserved = if start <= e && end >= s && e > s {
            (s.min(start), e.max(end))
        } else {
            (start, end)
        };
    }

    /// `Err` if cutting the file to `len` bytes would leave a live mapping past its end;
    /// otherwise forgets reserved space past `len`.
    pub(super) fn check_truncate(&self, len: u64) -> Result<(), String> {
        let mut st = self.lock();
        if st.live > 0 && len < st.mapped_end {
            return Err(format!(
                "cannot cut the file to {len} bytes while bytes up to {} are mapped",
                st.mapped_end
            ));
        }
        let (s, e) = st.reserved;
        st.reserved = (s.min(len), e.min(len));
        Ok(())
    }
}

/// Reserves blocks for bytes `offset..offset + len` of `file` and extends it to cover them
/// (`fallocate` mode 0). `Unsupported` where the file system cannot.
pub(super) fn fallocate(file: &File, offset: u64, len: u64) -> io::Result<()> {
    let too_large = || io::Error::new(io::ErrorKind::InvalidInput, "range beyond i64");
    let off = libc::off_t::try_from(offset).map_err(|_| too_large())?;
    let n = libc::off_t::try_from(len).map_err(|_| too_large())?;
    loop {
        if fallocate_raw(file, off, n) == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP) => {
                return Err(io::Error::new(io::ErrorKind::Unsupported, e));
            }
            _ => return Err(e),
        }
    }
}

#[expect(
    unsafe_code,
    reason = "fallocate(2) takes a file descriptor and numbers, no memory: the descriptor is \
              valid while `file` is borrowed"
)]
fn fallocate_raw(file: &File, offset: libc::off_t, len: libc::off_t) -> libc::c_int {
    // SAFETY: see the `expect` reason; the call reads and writes no memory of this process.
    unsafe { libc::fallocate(file.as_raw_fd(), 0, offset, len) }
}

/// The system's page size (mapping offsets are multiples of it).
fn page_size() -> u64 {
    static PAGE: OnceLock<u64> = OnceLock::new();
    *PAGE.get_or_init(|| {
        let n = sysconf_page_size();
        u64::try_from(n).ok().filter(|&p| p > 0).unwrap_or(4096)
    })
}

#[expect(
    unsafe_code,
    reason = "sysconf(3) takes a constant and touches no memory of the caller"
)]
fn sysconf_page_size() -> libc::c_long {
    // SAFETY: see the `expect` reason.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) }
}

/// A shared writable mapping of bytes `offset..end` of a file (the mapping itself starts at
/// the page boundary at or before `offset`). Writes go through `&mut self` only, and no Rust
/// reference ever points into the mapping: it is written with raw copies, never read.
#[derive(Debug)]
pub(super) struct FileMap {
    /// Start of the mapping (page aligned, at file offset `map_start`).
    base: NonNull<u8>,
    map_len: usize,
    map_start: u64,
    offset: u64,
    end: u64,
    guard: Arc<MapGuard>,
}

#[expect(
    unsafe_code,
    reason = "the mapping is memory owned by this value alone: moving it to another thread \
              moves that ownership; no reference into it exists"
)]
// SAFETY: see the `expect` reason.
unsafe impl Send for FileMap {}

#[expect(
    unsafe_code,
    reason = "`&FileMap` allows no access to the mapped memory (writes take `&mut self`)"
)]
// SAFETY: see the `expect` reason.
unsafe impl Sync for FileMap {}

impl FileMap {
    /// Maps bytes `offset..offset + len` of `file` (opened for reading and writing) shared and
    /// writable. `None` (nothing mapped) unless the range is non-empty, reserved through
    /// `guard` ([`MapGuard::reserved`]) and inside the file's current size `file_size`.
    pub(super) fn new(
        file: &File,
        file_size: u64,
        offset: u64,
        len: u64,
        guard: &Arc<MapGuard>,
    ) -> io::Result<Option<FileMap>> {
        let Some(end) = offset.checked_add(len) else {
            return Ok(None);
        };
        let mut st = guard.lock();
        let (r_start, r_end) = st.reserved;
        if len == 0 || offset < r_start || end > r_end || end > file_size {
            return Ok(None);
        }
        let map_start = offset - offset % page_size();
        let (Ok(map_len), Ok(file_offset)) = (
            usize::try_from(end - map_start),
            libc::off_t::try_from(map_start),
        ) else {
            return Ok(None);
        };
        let Some(base) = mmap_shared(file, map_len, file_offset) else {
            return Err(io::Error::last_os_error());
        };
        st.live += 1;
        st.mapped_end = st.mapped_end.max(end);
        Ok(Some(FileMap {
            base,
            map_len,
            map_start,
            offset,
            end,
            guard: Arc::clone(guard),
        }))
    }

    #[expect(
        unsafe_code,
        reason = "a raw copy into the mapping, at a range checked to lie inside it"
    )]
    fn copy_in(&mut self, index: usize, data: &[u8]) {
        debug_assert!(index + data.len() <= self.map_len);
        // SAFETY: `index + data.len() <= map_len` (the caller checked the range against
        // `offset..end`, which lies inside the mapping), so the destination is inside the live
        // mapping, which lies inside the file (checked at creation; the guard refuses cutting
        // the file below it through this handle, and ShaleDB holds no other writable handle to
        // a mapped log), on reserved blocks. No Rust reference points into the mapping, and
        // `&mut self` excludes any other copy into it, so the copy aliases nothing; `data` is
        // caller memory outside the mapping, so the ranges do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.base.as_ptr().add(index), data.len());
        }
    }
}

impl WritableMap for FileMap {
    fn offset(&self) -> u64 {
        self.offset
    }

    fn end(&self) -> u64 {
        self.end
    }

    fn write_at(&mut self, at: u64, data: &[u8]) -> Result<()> {
        let index = at
            .checked_add(data.len() as u64)
            .filter(|&data_end| at >= self.offset && data_end <= self.end)
            .and_then(|_| usize::try_from(at - self.map_start).ok());
        let Some(index) = index else {
            return Err(Error::InvalidArgument(format!(
                "a write of {} bytes at {at} is outside the mapped bytes {}..{}",
                data.len(),
                self.offset,
                self.end
            )));
        };
        self.copy_in(index, data);
        Ok(())
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        munmap(self.base, self.map_len);
        let mut st = self.guard.lock();
        st.live = st.live.saturating_sub(1);
        if st.live == 0 {
            st.mapped_end = 0;
        }
    }
}

#[expect(
    unsafe_code,
    reason = "mmap(2) of a new shared mapping at an address the kernel picks: it replaces no \
              existing memory"
)]
fn mmap_shared(file: &File, len: usize, offset: libc::off_t) -> Option<NonNull<u8>> {
    // SAFETY: a null address hint lets the kernel pick fresh address space, so no memory of
    // this process is replaced; the descriptor is valid while `file` is borrowed (the mapping
    // outlives it by design: it keeps the file referenced).
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            offset,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(p.cast::<u8>())
}

#[expect(
    unsafe_code,
    reason = "munmap(2) of a mapping this module made, once, when its owner is dropped"
)]
fn munmap(base: NonNull<u8>, len: usize) {
    // SAFETY: `base..base + len` is exactly a mapping made by `mmap_shared` and owned by the
    // `FileMap` being dropped; nothing refers into it. A failure (impossible for a valid
    // mapping) would leave the address space mapped, which is harmless.
    unsafe {
        libc::munmap(base.as_ptr().cast(), len);
    }
}
