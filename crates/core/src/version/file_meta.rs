//! What the manifest records about one table file ([`FileMeta`]), and how many levels there are.

use crate::key::InternalKey;

/// Number of levels, L0 to L6.
pub const NUM_LEVELS: usize = 7;

/// What the manifest records about one table file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// The file number (the table is `file_names::table_file_name(number)`).
    pub number: u64,
    /// Size of the file in bytes.
    pub size: u64,
    /// Smallest internal key, range tombstone starts included.
    pub smallest: InternalKey,
    /// Largest internal key; `(end, RANGE_SENTINEL_SEQ)` when a range tombstone ending at the
    /// exclusive `end` reaches past the last point entry.
    pub largest: InternalKey,
    /// Smallest sequence number of any entry.
    pub min_seq: u64,
    /// Largest sequence number of any entry.
    pub max_seq: u64,
    /// Number of entries (point entries and range tombstones).
    pub entries: u64,
    /// Whether the table holds range tombstones.
    pub has_range_tombstones: bool,
}

impl FileMeta {
    /// Whether user `key` may lie in this file's range (inclusive on both ends; a sentinel end
    /// counts as inclusive, which is conservative).
    pub fn may_contain_key(&self, key: &[u8]) -> bool {
        self.smallest.key.as_slice() <= key && key <= self.largest.key.as_slice()
    }

    /// Whether the file's user-key range meets `[start, end]` (`None` = unbounded), inclusive.
    pub fn overlaps(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> bool {
        start.is_none_or(|s| s <= self.largest.key.as_slice())
            && end.is_none_or(|e| self.smallest.key.as_slice() <= e)
    }
}
