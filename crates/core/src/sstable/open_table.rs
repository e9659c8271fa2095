//! An open table's shared state ([`Inner`]) and how a block is found: the in-memory index's
//! binary search, then the block cache, then storage (with readahead for a cursor moving
//! forward).

use std::cmp::Ordering;
use std::sync::Arc;

use super::block::Block;
use super::bloom::BloomFilter;
use super::cache::BlockCache;
use super::format::{BlockHandle, Footer};
use super::properties::Properties;
use super::readahead::Readahead;
use crate::key::{compare_internal, RangeTombstone};
use crate::recordio::{Reader, ReaderOptions};
use crate::storage::FileHandle;
use crate::{Error, Result};

/// One index entry: the separator key of a data block and where the block is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexEntry {
    /// The separator key's range in [`Inner::index_keys`].
    pub(super) key: (usize, usize),
    pub(super) seq: u64,
    pub(crate) handle: BlockHandle,
}

/// An open table's state, shared by its [`TableReader`](super::TableReader) and cursors: the
/// file, what was read at open (footer, properties, filter, index, range tombstones) and the
/// block cache. Built by [`TableReader::open`](super::TableReader::open).
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) file: FileHandle,
    pub(crate) file_name: Arc<str>,
    pub(super) reader: Reader,
    pub(crate) reader_options: ReaderOptions,
    pub(crate) footer: Footer,
    pub(super) properties: Properties,
    pub(super) filter: Option<BloomFilter>,
    pub(super) index_keys: Vec<u8>,
    /// Per block: the first 8 bytes of its separator key (big-endian, zero-padded) and its
    /// offset. A compact array the binary search mostly stays in (it fits in L2 for tens of
    /// thousands of blocks), and all a cache hit needs.
    pub(super) index_hot: Vec<(u64, u64)>,
    pub(crate) index: Vec<IndexEntry>,
    pub(super) range_tombstones: Arc<[RangeTombstone]>,
    pub(super) cache: Option<Arc<BlockCache>>,
    pub(super) table_id: u64,
}

impl Inner {
    /// Index of the first block whose separator is at or after (`key`, `seq`); `index.len()`
    /// if none.
    #[inline]
    pub(crate) fn index_lower_bound(&self, key: &[u8], seq: u64) -> usize {
        let target = key_prefix(key);
        let (mut lo, mut hi) = (0usize, self.index.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let p = self.index_hot.get(mid).map_or(u64::MAX, |h| h.0);
            let less = match p.cmp(&target) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => self.index.get(mid).is_some_and(|e| {
                    let k = self.index_keys.get(e.key.0..e.key.1).unwrap_or_default();
                    compare_internal(k, e.seq, key, seq) == Ordering::Less
                }),
            };
            if less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Block `i` of the data section (`None` past the last), from the cache or storage.
    pub(crate) fn block(&self, i: usize) -> Result<Option<Arc<Block>>> {
        self.block_via(i, None)
    }

    /// [`Inner::block`] for a cursor with readahead state `ra` (`readahead.rs`): a block
    /// missing from the cache, loaded right after its predecessor, is read with the blocks
    /// after it in one storage call.
    pub(crate) fn block_via(
        &self,
        i: usize,
        ra: Option<&mut Readahead>,
    ) -> Result<Option<Arc<Block>>> {
        let Some(&(_, offset)) = self.index_hot.get(i) else {
            return Ok(None);
        };
        let forward = match ra {
            Some(ra) => ra.note(i).then_some(ra),
            None => None,
        };
        if let Some(cache) = &self.cache {
            if let Some(b) = cache.get(self.table_id, offset) {
                return Ok(Some(b));
            }
        }
        let Some(entry) = self.index.get(i) else {
            return Ok(None);
        };
        let h = entry.handle;
        let record = match forward {
            Some(ra) => {
                if ra.held(h.offset, h.len).is_none() {
                    let span = self.readahead_span(i, ra.next_window(h.len));
                    ra.fill(h.offset, self.reader.read_span(h.offset, span)?);
                }
                let held = ra.held(h.offset, h.len).unwrap_or_default();
                self.reader.record_in(h.offset, h.len, held)?
            }
            None => self.reader.read_at_sized(h.offset, h.len)?,
        };
        let data = record
            .data
            .ok_or_else(|| Error::corruption(&*self.file_name, h.offset, "data block is nil"))?;
        let block = Arc::new(Block::new(data, self.file_name.clone(), h.offset)?);
        if let Some(cache) = &self.cache {
            cache.insert(self.table_id, h.offset, block.clone());
        }
        Ok(Some(block))
    }

    /// Bytes from block `i`'s start to the end of the last whole block within `window` of it
    /// (block `i` at least).
    fn readahead_span(&self, i: usize, window: u64) -> u64 {
        let Some(first) = self.index.get(i) else {
            return 0;
        };
        let start = first.handle.offset;
        let mut end = start + first.handle.len;
        for e in self.index.iter().skip(i + 1) {
            let e_end = e.handle.offset + e.handle.len;
            if e_end - start > window {
                break;
            }
            end = e_end;
        }
        end - start
    }
}

/// The first 8 bytes of `key` as a big-endian number, zero-padded. Keys compare like their
/// prefixes whenever the prefixes differ, so comparing prefixes first skips most memory
/// accesses to the keys themselves.
#[inline]
pub(super) fn key_prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    if let (Some(dst), Some(src)) = (b.get_mut(..n), key.get(..n)) {
        dst.copy_from_slice(src);
    }
    u64::from_be_bytes(b)
}
