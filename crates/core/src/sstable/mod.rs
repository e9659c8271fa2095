//! Sorted string tables on RecordIO.
//!
//! A table is one RecordIO file (ShaleDB format, so every block is covered by CRC-32C):
//! data-block records, then a Bloom filter record, an index record and a properties record,
//! then a fixed 72-byte footer outside the record stream, found from the file size. The byte
//! layout is in `docs/FORMAT.md` (section "SSTable") (and in [`format`], [`block_builder`], [`bloom`],
//! [`properties`]).
//!
//! Entries are (user key, sequence number, kind, value), ordered by key ascending (bytewise),
//! then sequence number descending, so one table may hold several versions of a key.
//!
//! - [`TableBuilder`] writes a table from entries added in order.
//! - [`TableReader`] opens one: [`TableReader::get`] (Bloom filter → in-memory index → block
//!   cache or one read → restart-point binary search), [`TableReader::iter`] (a cursor moving
//!   both ways, across blocks), [`TableReader::scan`] (a sequential full-table read).
//! - [`BlockCache`] is shared by all open tables.

pub mod block;
pub mod block_builder;
pub mod bloom;
pub mod cache;
pub mod format;
pub mod iter;
pub mod properties;
pub mod scan;
pub mod table_builder;
pub mod table_reader;

use std::cmp::Ordering;

pub use cache::BlockCache;
pub use format::{MAX_SEQ, TABLE_FORMAT_VERSION};
pub use iter::TableIter;
pub use properties::Properties;
pub use scan::{ScanEntry, TableScan};
pub use table_builder::{TableBuilder, TableOptions, TableSummary};
pub use table_reader::{TableReadOptions, TableReader};

/// What an entry records about its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueKind {
    /// The key was deleted at this sequence number (code 0).
    Tombstone,
    /// The key was set to the entry's value (code 1).
    Value,
    /// Every key from the entry's key (inclusive) to its value (exclusive) was deleted at this
    /// sequence number (code 2). Written by the engine's `delete_range`. Tables store these in
    /// their range-del record ([`TableReader::range_tombstones`]), never in data blocks.
    RangeTombstone,
}

impl ValueKind {
    /// The on-disk code (the low byte of an entry's trailer).
    pub fn code(self) -> u8 {
        match self {
            ValueKind::Tombstone => format::KIND_TOMBSTONE,
            ValueKind::Value => format::KIND_VALUE,
            ValueKind::RangeTombstone => format::KIND_RANGE_TOMBSTONE,
        }
    }

    /// The kind with on-disk `code`, if this version defines it.
    pub fn from_code(code: u8) -> Option<ValueKind> {
        match code {
            format::KIND_TOMBSTONE => Some(ValueKind::Tombstone),
            format::KIND_VALUE => Some(ValueKind::Value),
            format::KIND_RANGE_TOMBSTONE => Some(ValueKind::RangeTombstone),
            _ => None,
        }
    }
}

/// A range tombstone (the one type shared with the read path): every key in `[start, end)`
/// written before `seq` is deleted at `seq`.
pub use crate::iter::RangeTombstone;

/// One entry, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The user key.
    pub key: Vec<u8>,
    /// The sequence number (at most [`MAX_SEQ`]).
    pub seq: u64,
    /// Value or tombstone.
    pub kind: ValueKind,
    /// The value (empty for a tombstone).
    pub value: Vec<u8>,
}

/// Table order: key ascending (bytewise), then sequence number descending.
#[inline]
pub fn compare_internal(akey: &[u8], aseq: u64, bkey: &[u8], bseq: u64) -> Ordering {
    akey.cmp(bkey).then(bseq.cmp(&aseq))
}

/// The first 8 bytes of `key` as a big-endian number, zero-padded. Keys compare like their
/// prefixes whenever the prefixes differ, so comparing prefixes first skips most memory
/// accesses to the keys themselves.
#[inline]
pub(crate) fn key_prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    if let (Some(dst), Some(src)) = (b.get_mut(..n), key.get(..n)) {
        dst.copy_from_slice(src);
    }
    u64::from_be_bytes(b)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    #[test]
    fn readers_and_the_cache_are_shareable_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<super::TableReader>();
        shareable::<super::BlockCache>();
        fn sendable<T: Send>() {}
        sendable::<super::TableIter>();
        sendable::<super::TableScan>();
        sendable::<super::TableBuilder>();
    }
}
