//! Reading one block (format in [`super::block_builder`]): restart-point binary search, and a
//! cursor that moves forward and backward over the prefix-compressed entries.
//!
//! A block comes from a checksummed RecordIO record, but it is still parsed defensively: any
//! inconsistency is an [`Error::Corruption`] naming the file and the block's offset.

use std::cmp::Ordering;
use std::sync::Arc;

use super::format::{get_varint, get_varint32};
use crate::key::{compare_internal, ValueKind};
use crate::{Error, Result};

/// A parsed, immutable block. Shared through the block cache as `Arc<Block>`.
#[derive(Debug)]
pub struct Block {
    data: Vec<u8>,
    /// Offset of the restart array (= end of the entries).
    restarts_at: usize,
    num_restarts: usize,
    /// Offset of the block's record in its file (for error messages).
    offset: u64,
    file: Arc<str>,
}

impl Block {
    /// Checks the restart array of `data`, a block read at `offset` of `file`.
    pub fn new(data: Vec<u8>, file: Arc<str>, offset: u64) -> Result<Block> {
        let bad = |why: &str| Error::corruption(&*file, offset, format!("bad block: {why}"));
        let n = data.len();
        let (restarts_at, num_restarts) = {
            if n < 4 {
                return Err(bad("shorter than its restart count"));
            }
            let num_restarts = read_u32(&data, n - 4) as usize;
            let max = (n - 4) / 4;
            if num_restarts == 0 || num_restarts > max {
                return Err(bad("restart count out of range"));
            }
            let restarts_at = n - 4 - num_restarts * 4;
            let mut prev = 0usize;
            for i in 0..num_restarts {
                let r = read_u32(&data, restarts_at + 4 * i) as usize;
                if r > restarts_at || (i > 0 && r <= prev) || (i == 0 && r != 0) {
                    return Err(bad("restart offsets not increasing within the block"));
                }
                prev = r;
            }
            (restarts_at, num_restarts)
        };
        Ok(Block {
            data,
            restarts_at,
            num_restarts,
            offset,
            file,
        })
    }

    /// Offset of the block's record in its file.
    pub fn offset_in_file(&self) -> u64 {
        self.offset
    }

    /// The block's size in memory (for the cache's byte budget).
    pub fn size(&self) -> usize {
        self.data.len() + std::mem::size_of::<Block>()
    }

    #[inline]
    fn restart(&self, i: usize) -> usize {
        if i == 0 {
            // Checked to be 0 in `new`; skipping the load saves a cache miss per point read.
            return 0;
        }
        read_u32(&self.data, self.restarts_at + 4 * i) as usize
    }

    fn corrupt(&self, at: usize) -> Error {
        Error::corruption(
            &*self.file,
            self.offset,
            format!("bad block entry at byte {at} of the block"),
        )
    }
}

#[inline]
fn read_u32(b: &[u8], at: usize) -> u32 {
    let mut v = [0u8; 4];
    if let Some(src) = b.get(at..at + 4) {
        v.copy_from_slice(src);
    }
    u32::from_le_bytes(v)
}

/// A position in one block. Invalid (`!valid()`) before a seek or after moving off either end.
#[derive(Debug)]
pub struct BlockCursor {
    block: Arc<Block>,
    /// Offset of the current entry; `restarts_at` when invalid.
    current: usize,
    /// Offset of the entry after the current one.
    next: usize,
    /// Index of the restart point at or before `current`.
    restart_index: usize,
    key: Vec<u8>,
    trailer: u64,
    value: (usize, usize),
}

impl BlockCursor {
    /// A cursor over `block`, not yet positioned.
    pub fn new(block: Arc<Block>) -> BlockCursor {
        let end = block.restarts_at;
        BlockCursor {
            block,
            current: end,
            next: end,
            restart_index: 0,
            key: Vec::new(),
            trailer: 0,
            value: (0, 0),
        }
    }

    /// The block under the cursor.
    pub fn block(&self) -> &Arc<Block> {
        &self.block
    }

    /// Whether the cursor is on an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        self.current < self.block.restarts_at
    }

    /// The current user key. Requires `valid()`.
    #[inline]
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current entry's `seq << 8 | kind` trailer.
    #[inline]
    pub fn trailer(&self) -> u64 {
        self.trailer
    }

    /// The current sequence number.
    #[inline]
    pub fn seq(&self) -> u64 {
        self.trailer >> 8
    }

    /// The current kind, checked when the entry was decoded.
    #[inline]
    pub fn kind(&self) -> ValueKind {
        ValueKind::from_code((self.trailer & 0xff) as u8).unwrap_or(ValueKind::Value)
    }

    /// The current value. Requires `valid()`.
    #[inline]
    pub fn value(&self) -> &[u8] {
        self.block
            .data
            .get(self.value.0..self.value.1)
            .unwrap_or_default()
    }

    fn invalidate(&mut self) {
        self.current = self.block.restarts_at;
        self.next = self.block.restarts_at;
        self.key.clear();
        self.value = (0, 0);
    }

    /// Decodes the entry at `self.next`, building on `self.key`.
    #[inline]
    fn parse_next(&mut self) -> Result<bool> {
        let at = self.next;
        let limit = self.block.restarts_at;
        if at >= limit {
            self.invalidate();
            return Ok(false);
        }
        let data = self.block.data.get(..limit).unwrap_or_default();
        let mut pos = at;
        let (Some(shared), Some(unshared), Some(vlen)) = (
            get_varint32(data, &mut pos),
            get_varint32(data, &mut pos),
            get_varint32(data, &mut pos),
        ) else {
            return Err(self.block.corrupt(at));
        };
        if shared > self.key.len() {
            return Err(self.block.corrupt(at));
        }
        let Some(suffix) = data.get(pos..pos.saturating_add(unshared)) else {
            return Err(self.block.corrupt(at));
        };
        self.key.truncate(shared);
        self.key.extend_from_slice(suffix);
        pos += unshared;
        let Some(trailer) = get_varint(data, &mut pos) else {
            return Err(self.block.corrupt(at));
        };
        if ValueKind::from_code((trailer & 0xff) as u8).is_none() {
            return Err(self.block.corrupt(at));
        }
        let end = pos.saturating_add(vlen);
        if end > limit {
            return Err(self.block.corrupt(at));
        }
        self.trailer = trailer;
        self.value = (pos, end);
        self.current = at;
        self.next = end;
        while self.restart_index + 1 < self.block.num_restarts
            && self.block.restart(self.restart_index + 1) <= at
        {
            self.restart_index += 1;
        }
        Ok(true)
    }

    fn seek_to_restart(&mut self, index: usize) {
        self.key.clear();
        self.restart_index = index;
        self.next = self.block.restart(index);
        self.current = self.block.restarts_at;
    }

    /// Moves to the first entry.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.seek_to_restart(0);
        self.parse_next().map(|_| ())
    }

    /// Moves to the last entry.
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.seek_to_restart(self.block.num_restarts - 1);
        let mut any = false;
        while self.next < self.block.restarts_at {
            any = self.parse_next()?;
        }
        if !any {
            self.invalidate();
        }
        Ok(())
    }

    /// Moves to the next entry (invalid past the last).
    #[inline]
    #[allow(
        clippy::should_implement_trait,
        reason = "a fallible cursor step, not an Iterator"
    )]
    pub fn next(&mut self) -> Result<()> {
        if !self.valid() {
            return Ok(());
        }
        self.parse_next().map(|_| ())
    }

    /// Moves to the previous entry (invalid before the first).
    pub fn prev(&mut self) -> Result<()> {
        if !self.valid() {
            return Ok(());
        }
        let original = self.current;
        // Find the restart point strictly before the current entry.
        let mut index = self.restart_index;
        while self.block.restart(index) >= original {
            if index == 0 {
                self.invalidate();
                return Ok(());
            }
            index -= 1;
        }
        self.seek_to_restart(index);
        loop {
            if !self.parse_next()? {
                return Err(self.block.corrupt(original));
            }
            if self.next >= original {
                return Ok(());
            }
        }
    }

    /// Moves to the first entry at or after (`key`, `seq`) in table order (key ascending, seq
    /// descending); invalid if there is none in this block.
    pub fn seek(&mut self, key: &[u8], seq: u64) -> Result<()> {
        // Binary search for the last restart point whose key is < target.
        let mut lo = 0usize;
        let mut hi = self.block.num_restarts - 1;
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            let (mkey, mtrailer) = self.restart_key(mid)?;
            if compare_internal(mkey, mtrailer >> 8, key, seq) == Ordering::Less {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        self.seek_to_restart(lo);
        while self.parse_next()? {
            if compare_internal(&self.key, self.seq(), key, seq) != Ordering::Less {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The full key and trailer of the entry at restart point `i` (shared is 0 there).
    fn restart_key(&self, i: usize) -> Result<(&[u8], u64)> {
        let at = self.block.restart(i);
        let data = self
            .block
            .data
            .get(..self.block.restarts_at)
            .unwrap_or_default();
        let mut pos = at;
        let (Some(0), Some(unshared), Some(_)) = (
            get_varint32(data, &mut pos),
            get_varint32(data, &mut pos),
            get_varint32(data, &mut pos),
        ) else {
            return Err(self.block.corrupt(at));
        };
        let Some(key) = data.get(pos..pos.saturating_add(unshared)) else {
            return Err(self.block.corrupt(at));
        };
        pos += unshared;
        let Some(trailer) = get_varint(data, &mut pos) else {
            return Err(self.block.corrupt(at));
        };
        Ok((key, trailer))
    }
}

#[cfg(test)]
mod tests {
    use super::super::block_builder::BlockBuilder;
    use super::*;

    fn build(entries: &[(Vec<u8>, u64)], interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(interval, 4096);
        for (k, seq) in entries {
            b.add(k, seq << 8 | 1, format!("v{seq}").as_bytes());
        }
        Arc::new(Block::new(b.finish().to_vec(), "t".into(), 0).unwrap())
    }

    fn sample() -> Vec<(Vec<u8>, u64)> {
        let mut v = Vec::new();
        for i in 0..50u64 {
            let k = format!("key{:03}", i / 2 * 2).into_bytes();
            v.push((k, 100 - i % 2));
        }
        v
    }

    #[test]
    fn forward_and_backward_visit_every_entry() {
        for interval in [1, 3, 16] {
            let entries = sample();
            let mut c = BlockCursor::new(build(&entries, interval));
            c.seek_to_first().unwrap();
            let mut fwd = Vec::new();
            while c.valid() {
                fwd.push((c.key().to_vec(), c.seq()));
                c.next().unwrap();
            }
            assert_eq!(fwd, entries);
            c.seek_to_last().unwrap();
            let mut back = Vec::new();
            while c.valid() {
                back.push((c.key().to_vec(), c.seq()));
                c.prev().unwrap();
            }
            back.reverse();
            assert_eq!(back, entries);
        }
    }

    #[test]
    fn seek_finds_first_entry_at_or_after_target() {
        let entries = sample();
        let mut c = BlockCursor::new(build(&entries, 4));
        c.seek(b"key010", 100).unwrap();
        assert_eq!((c.key(), c.seq()), (&b"key010"[..], 100));
        c.seek(b"key010", 99).unwrap();
        assert_eq!((c.key(), c.seq()), (&b"key010"[..], 99));
        c.seek(b"key010", 98).unwrap();
        assert_eq!((c.key(), c.seq()), (&b"key012"[..], 100));
        c.seek(b"key011", 5).unwrap();
        assert_eq!(c.key(), b"key012");
        c.seek(b"", 0).unwrap();
        assert_eq!(c.key(), b"key000");
        c.seek(b"zzz", 0).unwrap();
        assert!(!c.valid());
        assert_eq!(c.value(), b"");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for len in 0..40 {
            let data: Vec<u8> = (0..len).map(|i| (i * 37) as u8).collect();
            if let Ok(b) = Block::new(data, "t".into(), 0) {
                let mut c = BlockCursor::new(Arc::new(b));
                let _ = c.seek_to_first();
                let _ = c.seek(b"k", 1);
                let _ = c.seek_to_last();
                let _ = c.prev();
            }
        }
    }
}
