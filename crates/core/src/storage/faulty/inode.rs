//! What a power loss can leave of one file: the page-level durability model of an inode.
//!
//! Linux keeps written data in the page cache and writes it back in 4 KiB pages, in any order,
//! until an `fsync` forces it out. So for every file the model knows its *durable size* (as of
//! the last successful sync) and, for every page changed since then, the page's *durable
//! contents* (what is on disk). A crash keeps, per changed page, the durable or the new contents
//! (or a mix at a 512-byte sector boundary), and a size between the durable and the current one.
//!
//! A failed `fsync` is Linux's: the pages whose writeback failed are marked clean, so they are
//! *lost* — a crash leaves their durable contents, and later syncs, which succeed, never write
//! them (until they are written again).

use std::collections::BTreeMap;

use super::xorshift::XorShift;
use crate::storage::FileHandle;
use crate::Result;

/// The page size of the model.
pub(super) const PAGE: u64 = 4096;
/// The sector size: a page may be torn at a multiple of it.
const SECTOR: u64 = 512;

/// One file's contents as the disk holds them, against the current contents in its handle.
#[derive(Debug)]
pub(super) struct Inode {
    /// A handle to the current contents in the inner storage; it stays readable after the file
    /// is unlinked, so a removal that a crash undoes can bring the contents back.
    pub(super) handle: FileHandle,
    /// The size a crash leaves at least (and, without randomness, exactly).
    pub(super) durable_size: u64,
    /// Pages changed since the last successful sync: page index → durable contents (a whole
    /// page, zeros past the durable size).
    dirty: BTreeMap<u64, Box<[u8]>>,
    /// Pages whose writeback failed: they keep these durable contents at a crash.
    lost: BTreeMap<u64, Box<[u8]>>,
}

impl Inode {
    /// An inode whose first `durable_size` bytes of `handle` are on disk.
    pub(super) fn new(handle: FileHandle, durable_size: u64) -> Inode {
        Inode {
            handle,
            durable_size,
            dirty: BTreeMap::new(),
            lost: BTreeMap::new(),
        }
    }

    /// Call before bytes `[from, to)` of the current contents change (a write; a truncation
    /// changes everything past the new length): remembers the durable contents of each page
    /// touched that is not remembered yet.
    pub(super) fn before_change(&mut self, from: u64, to: u64) -> Result<()> {
        if from >= to {
            return Ok(());
        }
        for page in from / PAGE..=(to - 1) / PAGE {
            if self.dirty.contains_key(&page) {
                continue;
            }
            if let Some(old) = self.lost.remove(&page) {
                self.dirty.insert(page, old);
                continue;
            }
            // A clean page: its current contents below the durable size are the durable ones.
            let mut old = vec![0u8; PAGE as usize];
            let start = page * PAGE;
            if start < self.durable_size {
                let n = (self.durable_size - start).min(PAGE) as usize;
                let mut done = 0;
                while done < n {
                    let buf = old.get_mut(done..n).unwrap_or_default();
                    let read = self.handle.read_at(start + done as u64, buf)?;
                    if read == 0 {
                        break;
                    }
                    done += read;
                }
            }
            self.dirty.insert(page, old.into_boxed_slice());
        }
        Ok(())
    }

    /// A successful sync made the current contents, `size` bytes, durable — except lost pages.
    pub(super) fn synced(&mut self, size: u64) {
        self.durable_size = size;
        self.dirty.clear();
    }

    /// A sync failed: the writeback of every dirty page failed, and Linux marked them clean.
    pub(super) fn sync_failed(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        self.lost.extend(dirty);
    }

    /// Whether a crash leaves the current contents as they are.
    pub(super) fn is_clean(&self, current_size: u64) -> bool {
        self.dirty.is_empty() && self.lost.is_empty() && self.durable_size == current_size
    }

    /// The contents a power loss leaves: without `rng` the durable contents exactly; with it,
    /// per changed page the durable or the new contents or a mix at a sector boundary (lost
    /// pages always durable), and a size between the durable and the current one.
    pub(super) fn after_power_loss(&self, mut rng: Option<&mut XorShift>) -> Result<Vec<u8>> {
        let current_size = self.handle.size()?;
        let mut bytes = vec![0u8; current_size as usize];
        let mut done = 0;
        while done < bytes.len() {
            let buf = bytes.get_mut(done..).unwrap_or_default();
            let n = self.handle.read_at(done as u64, buf)?;
            if n == 0 {
                break;
            }
            done += n;
        }
        let (lo, hi) = (
            self.durable_size.min(current_size),
            self.durable_size.max(current_size),
        );
        let final_size = match rng.as_deref_mut() {
            None => self.durable_size,
            Some(r) => match r.below(3) {
                0 => self.durable_size,
                1 => current_size,
                _ => lo + r.below(hi - lo + 1),
            },
        };
        bytes.resize(hi.max(final_size) as usize, 0);
        for (&page, old) in &self.lost {
            put_page(&mut bytes, page, old, 0, PAGE);
        }
        for (&page, old) in &self.dirty {
            match rng.as_deref_mut() {
                None => put_page(&mut bytes, page, old, 0, PAGE),
                Some(r) => {
                    let cut = r.below(PAGE / SECTOR + 1) * SECTOR;
                    match r.below(4) {
                        0 => {}                                          // written back
                        1 => put_page(&mut bytes, page, old, 0, PAGE),   // not written back
                        2 => put_page(&mut bytes, page, old, cut, PAGE), // torn: new, then old
                        _ => put_page(&mut bytes, page, old, 0, cut),    // torn: old, then new
                    }
                    if page * PAGE >= self.durable_size && r.below(16) == 0 {
                        garble_sector(&mut bytes, page, r);
                    }
                }
            }
        }
        bytes.truncate(final_size as usize);
        Ok(bytes)
    }
}

/// Copies bytes `[from, to)` of page `page` from `old` into `bytes` (clipped to its length).
fn put_page(bytes: &mut [u8], page: u64, old: &[u8], from: u64, to: u64) {
    let start = (page * PAGE + from) as usize;
    let end = ((page * PAGE + to) as usize).min(bytes.len());
    if start >= end {
        return;
    }
    if let (Some(dst), Some(src)) = (
        bytes.get_mut(start..end),
        old.get(from as usize..from as usize + (end - start)),
    ) {
        dst.copy_from_slice(src);
    }
}

/// Fills one sector of a never-durable page with noise (a sector whose write was cut mid-way).
fn garble_sector(bytes: &mut [u8], page: u64, rng: &mut XorShift) {
    let sector = rng.below(PAGE / SECTOR);
    let start = (page * PAGE + sector * SECTOR) as usize;
    let end = (start + SECTOR as usize).min(bytes.len());
    for b in bytes.get_mut(start..end).unwrap_or_default() {
        *b = rng.next() as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::{OpenMode, Storage};

    fn file(data: &[u8]) -> FileHandle {
        let s = MemoryStorage::new();
        let f = s.open("f", OpenMode::Create).unwrap();
        f.write_at(0, data).unwrap();
        f
    }

    #[test]
    fn without_randomness_a_crash_leaves_the_durable_contents() {
        let f = file(&[1; 5000]);
        let mut inode = Inode::new(f.clone(), 5000);
        inode.before_change(4000, 9000).unwrap();
        f.write_at(4000, &[2; 5000]).unwrap();
        assert_eq!(inode.after_power_loss(None).unwrap(), vec![1; 5000]);
        inode.synced(9000);
        assert!(inode.is_clean(9000));
        let mut want = vec![1; 4000];
        want.extend([2; 5000]);
        assert_eq!(inode.after_power_loss(None).unwrap(), want);
    }

    #[test]
    fn pages_of_a_failed_sync_stay_lost_through_later_successful_syncs() {
        let f = file(&[]);
        let mut inode = Inode::new(f.clone(), 0);
        inode.before_change(0, 100).unwrap();
        f.write_at(0, &[7; 100]).unwrap();
        inode.sync_failed();
        inode.before_change(PAGE, PAGE + 10).unwrap();
        f.write_at(PAGE, &[8; 10]).unwrap();
        inode.synced(PAGE + 10);
        let after = inode.after_power_loss(None).unwrap();
        assert_eq!(after.len() as u64, PAGE + 10);
        assert!(after[..PAGE as usize].iter().all(|&b| b == 0), "a hole");
        assert_eq!(&after[PAGE as usize..], &[8; 10]);
    }

    #[test]
    fn rewriting_a_lost_page_lets_a_later_sync_make_it_durable() {
        let f = file(&[]);
        let mut inode = Inode::new(f.clone(), 0);
        inode.before_change(0, 4).unwrap();
        f.write_at(0, b"abcd").unwrap();
        inode.sync_failed();
        inode.before_change(4, 8).unwrap();
        f.write_at(4, b"efgh").unwrap();
        inode.synced(8);
        assert_eq!(inode.after_power_loss(None).unwrap(), b"abcdefgh");
    }

    #[test]
    fn a_random_crash_keeps_some_pages_and_not_others_in_any_order() {
        let mut holes_before_data = 0;
        for seed in 0..64 {
            let f = file(&[]);
            let mut inode = Inode::new(f.clone(), 0);
            inode.before_change(0, 4 * PAGE).unwrap();
            f.write_at(0, &[9; 4 * PAGE as usize]).unwrap();
            let after = inode
                .after_power_loss(Some(&mut XorShift::new(seed)))
                .unwrap();
            let pages: Vec<bool> = after
                .chunks(PAGE as usize)
                .map(|p| p.iter().all(|&b| b == 9))
                .collect();
            if pages.windows(2).any(|w| !w[0] && w[1]) {
                holes_before_data += 1;
            }
        }
        assert!(holes_before_data > 0, "writeback reorders pages");
    }

    #[test]
    fn a_truncation_is_durable_only_with_a_sync() {
        let f = file(b"0123456789");
        let mut inode = Inode::new(f.clone(), 10);
        inode.before_change(4, 10).unwrap();
        f.truncate(4).unwrap();
        assert_eq!(inode.after_power_loss(None).unwrap(), b"0123456789");
        inode.synced(4);
        assert_eq!(inode.after_power_loss(None).unwrap(), b"0123");
    }
}
