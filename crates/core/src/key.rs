//! The internal key model, in one place (LevelDB's `dbformat.h`): what every layer — the write
//! path, memtables, tables, iterators, versions — agrees on about keys.
//!
//! - An internal entry is (user key, sequence number, [`ValueKind`], value). Sequence numbers are
//!   at most [`MAX_SEQ`] (they share a `u64` with the 8-bit kind in table trailers).
//! - Internal order ([`compare_internal`]): user key ascending (bytewise), then sequence number
//!   descending, so the newest version of a key comes first.
//! - [`InternalKey`] is a key with its sequence number, ordered that way; a largest key with
//!   [`RANGE_SENTINEL_SEQ`] means "up to, not including, this key" (a range tombstone cut at a
//!   table boundary).
//! - [`RangeTombstone`] is the one range-deletion type of every layer.

use std::cmp::Ordering;

/// Largest sequence number: sequence numbers share a `u64` with the 8-bit kind.
pub const MAX_SEQ: u64 = (1 << 56) - 1;

/// Encoded kind of a value entry.
pub const KIND_VALUE: u8 = 1;
/// Encoded kind of a point tombstone.
pub const KIND_TOMBSTONE: u8 = 0;
/// Encoded kind of a range tombstone: written only in the range-del record (format version 2),
/// never in data blocks.
pub const KIND_RANGE_TOMBSTONE: u8 = 2;

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
    /// their range-del record (`TableReader::range_tombstones`), never in data blocks.
    RangeTombstone,
}

impl ValueKind {
    /// The on-disk code (the low byte of an entry's trailer).
    pub fn code(self) -> u8 {
        match self {
            ValueKind::Tombstone => KIND_TOMBSTONE,
            ValueKind::Value => KIND_VALUE,
            ValueKind::RangeTombstone => KIND_RANGE_TOMBSTONE,
        }
    }

    /// The kind with on-disk `code`, if this version defines it.
    pub fn from_code(code: u8) -> Option<ValueKind> {
        match code {
            KIND_TOMBSTONE => Some(ValueKind::Tombstone),
            KIND_VALUE => Some(ValueKind::Value),
            KIND_RANGE_TOMBSTONE => Some(ValueKind::RangeTombstone),
            _ => None,
        }
    }
}

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
    compare_bytes(akey, bkey).then(bseq.cmp(&aseq))
}

/// Bytewise order of `a` and `b` (as `a.cmp(b)`). In WebAssembly, eight bytes at a time: there
/// `memcmp`, which `<[u8]>::cmp` calls, is a loop over single bytes, and keys are compared on
/// every step of a search.
#[inline]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    #[cfg(target_arch = "wasm32")]
    {
        let n = a.len().min(b.len());
        let (head_a, head_b) = (
            a.get(..n).unwrap_or_default(),
            b.get(..n).unwrap_or_default(),
        );
        let mut words_a = head_a.chunks_exact(8);
        let mut words_b = head_b.chunks_exact(8);
        for (wa, wb) in (&mut words_a).zip(&mut words_b) {
            let (Ok(wa), Ok(wb)) = (<[u8; 8]>::try_from(wa), <[u8; 8]>::try_from(wb)) else {
                break;
            };
            let (x, y) = (u64::from_be_bytes(wa), u64::from_be_bytes(wb));
            if x != y {
                return x.cmp(&y);
            }
        }
        words_a
            .remainder()
            .cmp(words_b.remainder())
            .then(a.len().cmp(&b.len()))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        a.cmp(b)
    }
}

/// The sequence number of a range-tombstone sentinel: a largest key `(K, RANGE_SENTINEL_SEQ)`
/// means "up to, not including, `K`".
pub const RANGE_SENTINEL_SEQ: u64 = MAX_SEQ;

/// A user key with a sequence number, compared in internal order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct InternalKey {
    /// The user key.
    pub key: Vec<u8>,
    /// The sequence number.
    pub seq: u64,
}

impl InternalKey {
    /// Builds an internal key.
    pub fn new(key: impl Into<Vec<u8>>, seq: u64) -> InternalKey {
        InternalKey {
            key: key.into(),
            seq,
        }
    }

    /// Internal order: key ascending, then sequence number descending.
    pub fn cmp_internal(&self, other: &InternalKey) -> Ordering {
        compare_internal(&self.key, self.seq, &other.key, other.seq)
    }
}

/// One range tombstone: every key in `[start, end)` written before `seq` is deleted at `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeTombstone {
    /// First key deleted (inclusive).
    pub start: Vec<u8>,
    /// First key after the range (exclusive).
    pub end: Vec<u8>,
    /// The sequence number of the deletion.
    pub seq: u64,
}

impl From<(Vec<u8>, Vec<u8>, u64)> for RangeTombstone {
    /// From `(start, end exclusive, seq)`, the memtable's side-list form.
    fn from((start, end, seq): (Vec<u8>, Vec<u8>, u64)) -> Self {
        RangeTombstone { start, end, seq }
    }
}
