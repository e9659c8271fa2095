//! The properties record: facts about a table, read at open.
//!
//! Encoding (version 1): varints `format_version, entries, data_blocks, data_size,
//! raw_key_bytes, raw_value_bytes, tombstones, min_seq, max_seq`, then `smallest_key` and
//! `largest_key`, each as varint length + bytes. Version 2 appends varints `range_tombstones,
//! range_del_offset, range_del_len` (written only when the table holds range tombstones; absent
//! means none). Later versions may append fields; readers ignore bytes after the fields they
//! know.

use super::format::{get_varint, put_varint, BlockHandle};
use crate::{Error, Result};

/// Facts about one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    /// The table format version that wrote the table.
    pub format_version: u32,
    /// Number of entries (all versions, tombstones included).
    pub entries: u64,
    /// Number of data blocks.
    pub data_blocks: u64,
    /// Bytes of the data section on disk (record headers included, file header excluded).
    pub data_size: u64,
    /// Sum of the user keys' lengths.
    pub raw_key_bytes: u64,
    /// Sum of the values' lengths.
    pub raw_value_bytes: u64,
    /// Number of tombstone entries.
    pub tombstones: u64,
    /// Smallest sequence number of any entry, range tombstones included (0 in an empty table).
    pub min_seq: u64,
    /// Largest sequence number of any entry, range tombstones included (0 in an empty table).
    pub max_seq: u64,
    /// First user key (empty in an empty table).
    pub smallest_key: Vec<u8>,
    /// Last user key (empty in an empty table).
    pub largest_key: Vec<u8>,
    /// Number of range tombstones (format version 2; not counted in `entries`).
    pub range_tombstones: u64,
    /// The range-tombstone record (format version 2; `0/0` when there are none).
    pub range_del: BlockHandle,
}

impl Properties {
    /// Appends the encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        for v in [
            u64::from(self.format_version),
            self.entries,
            self.data_blocks,
            self.data_size,
            self.raw_key_bytes,
            self.raw_value_bytes,
            self.tombstones,
            self.min_seq,
            self.max_seq,
        ] {
            put_varint(out, v);
        }
        for k in [&self.smallest_key, &self.largest_key] {
            put_varint(out, k.len() as u64);
            out.extend_from_slice(k);
        }
        if self.range_tombstones > 0 {
            for v in [
                self.range_tombstones,
                self.range_del.offset,
                self.range_del.len,
            ] {
                put_varint(out, v);
            }
        }
    }

    /// Decodes a properties record read at `offset` of `file`.
    pub fn decode(b: &[u8], file: &str, offset: u64) -> Result<Properties> {
        let bad = || Error::corruption(file, offset, "malformed properties record");
        let mut pos = 0;
        let mut next = || get_varint(b, &mut pos).ok_or_else(bad);
        let format_version = u32::try_from(next()?).map_err(|_| bad())?;
        let (entries, data_blocks, data_size) = (next()?, next()?, next()?);
        let (raw_key_bytes, raw_value_bytes, tombstones) = (next()?, next()?, next()?);
        let (min_seq, max_seq) = (next()?, next()?);
        let mut key = || -> Result<Vec<u8>> {
            let len = get_varint(b, &mut pos).ok_or_else(bad)?;
            let len = usize::try_from(len).map_err(|_| bad())?;
            let k = b.get(pos..pos.saturating_add(len)).ok_or_else(bad)?;
            pos += len;
            Ok(k.to_vec())
        };
        let smallest_key = key()?;
        let largest_key = key()?;
        let (mut range_tombstones, mut range_del) = (0, BlockHandle::default());
        if pos < b.len() || format_version >= 2 {
            let mut next = || get_varint(b, &mut pos).ok_or_else(bad);
            range_tombstones = next()?;
            range_del = BlockHandle {
                offset: next()?,
                len: next()?,
            };
        }
        Ok(Properties {
            format_version,
            entries,
            data_blocks,
            data_size,
            raw_key_bytes,
            raw_value_bytes,
            tombstones,
            min_seq,
            max_seq,
            smallest_key,
            largest_key,
            range_tombstones,
            range_del,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_truncation() {
        let p = Properties {
            format_version: 1,
            entries: 10,
            data_blocks: 2,
            data_size: 9000,
            raw_key_bytes: 40,
            raw_value_bytes: 8000,
            tombstones: 3,
            min_seq: 5,
            max_seq: 1 << 40,
            smallest_key: b"a".to_vec(),
            largest_key: b"zz".to_vec(),
            ..Properties::default()
        };
        let mut b = Vec::new();
        p.encode(&mut b);
        assert_eq!(Properties::decode(&b, "t", 0).unwrap(), p);
        for n in 0..b.len() {
            assert!(Properties::decode(&b[..n], "t", 0).is_err());
        }
        let v2 = Properties {
            format_version: 2,
            range_tombstones: 3,
            range_del: BlockHandle {
                offset: 100,
                len: 20,
            },
            ..p
        };
        let mut b2 = Vec::new();
        v2.encode(&mut b2);
        assert_eq!(Properties::decode(&b2, "t", 0).unwrap(), v2);
        assert!(Properties::decode(&b2[..b.len()], "t", 0).is_err());
    }
}
