//! On-disk constants, varints, block handles and the table footer (layout: `docs/FORMAT.md` (section "SSTable")).
//!
//! The footer is the last [`FOOTER_LEN`] bytes of a table file, outside the RecordIO record
//! stream. Every field is fixed-width little-endian:
//!
//! ```text
//! off  len  field
//!   0    8  index handle: record offset        (u64 LE)
//!   8    8  index handle: record length        (u64 LE, header included)
//!  16    8  filter handle: record offset
//!  24    8  filter handle: record length       (0/0: no filter)
//!  32    8  properties handle: record offset
//!  40    8  properties handle: record length
//!  48    8  data end: offset just past the last data block record
//!  56    4  CRC-32C of bytes 0..56 and 60..72
//!  60    4  table format version              (u32 LE, 1 or 2)
//!  64    8  magic "SHALESST"
//! ```
//!
//! Future versions keep version and magic as the last 12 bytes, so a reader can always tell a
//! newer table (refused with [`crate::Error::VersionUnsupported`]) from a damaged one.

use crate::{Error, Result};

/// The newest table format version this code writes and reads; tables with a larger version
/// are refused. Version 2 adds range tombstones (a range-del record, see `docs/FORMAT.md`); a
/// table without range tombstones is still written as version 1, byte for byte.
pub const TABLE_FORMAT_VERSION: u32 = 2;

/// The table format version of tables without range tombstones.
pub const TABLE_FORMAT_VERSION_V1: u32 = 1;

/// The last 8 bytes of every table file.
pub const TABLE_MAGIC: [u8; 8] = *b"SHALESST";

/// Size of the fixed footer at the end of the file.
pub const FOOTER_LEN: usize = 72;

pub use crate::key::{KIND_RANGE_TOMBSTONE, KIND_TOMBSTONE, KIND_VALUE, MAX_SEQ};

/// Where a record lives in the table file: its header's offset and its total length (header
/// included), so it can be fetched with one `read_at_sized`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset of the record header.
    pub offset: u64,
    /// Total record length, header included.
    pub len: u64,
}

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// The index record.
    pub index: BlockHandle,
    /// The Bloom filter record (`len == 0`: none).
    pub filter: BlockHandle,
    /// The properties record.
    pub properties: BlockHandle,
    /// Offset just past the last data block record.
    pub data_end: u64,
    /// Table format version.
    pub version: u32,
}

impl Footer {
    /// Encodes the footer (with [`TABLE_FORMAT_VERSION`] and the checksum).
    pub fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut b = [0u8; FOOTER_LEN];
        let fields = [
            self.index.offset,
            self.index.len,
            self.filter.offset,
            self.filter.len,
            self.properties.offset,
            self.properties.len,
            self.data_end,
        ];
        for (chunk, v) in b.chunks_exact_mut(8).zip(fields) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        put_at(&mut b, 60, &self.version.to_le_bytes());
        put_at(&mut b, 64, &TABLE_MAGIC);
        let crc = footer_crc(&b);
        put_at(&mut b, 56, &crc.to_le_bytes());
        b
    }

    /// Decodes and checks a footer read from the end of `file` (`offset` is where it starts).
    ///
    /// Errors: bad magic or checksum → `Corruption`; a version above
    /// [`TABLE_FORMAT_VERSION`] (or 0) → `VersionUnsupported`.
    pub fn decode(b: &[u8; FOOTER_LEN], file: &str, offset: u64) -> Result<Footer> {
        if b[64..72] != TABLE_MAGIC {
            return Err(Error::corruption(
                file,
                offset + 64,
                "not a ShaleDB table: footer magic missing",
            ));
        }
        let version = u32_at(b, 60);
        if version == 0 || version > TABLE_FORMAT_VERSION {
            return Err(Error::VersionUnsupported {
                file: file.to_owned(),
                version,
            });
        }
        let stored = u32_at(b, 56);
        let computed = footer_crc(b);
        if stored != computed {
            return Err(Error::corruption(
                file,
                offset + 56,
                format!("footer checksum mismatch: stored {stored:#x}, computed {computed:#x}"),
            ));
        }
        let f = |i: usize| u64_at(b, i * 8);
        Ok(Footer {
            index: BlockHandle {
                offset: f(0),
                len: f(1),
            },
            filter: BlockHandle {
                offset: f(2),
                len: f(3),
            },
            properties: BlockHandle {
                offset: f(4),
                len: f(5),
            },
            data_end: f(6),
            version,
        })
    }
}

fn footer_crc(b: &[u8; FOOTER_LEN]) -> u32 {
    let c = crc32c::crc32c(&b[..56]);
    crc32c::crc32c_append(c, &b[60..])
}

fn put_at(b: &mut [u8; FOOTER_LEN], at: usize, v: &[u8]) {
    if let Some(dst) = b.get_mut(at..at + v.len()) {
        dst.copy_from_slice(v);
    }
}

fn u32_at(b: &[u8; FOOTER_LEN], at: usize) -> u32 {
    let mut v = [0u8; 4];
    if let Some(src) = b.get(at..at + 4) {
        v.copy_from_slice(src);
    }
    u32::from_le_bytes(v)
}

fn u64_at(b: &[u8; FOOTER_LEN], at: usize) -> u64 {
    let mut v = [0u8; 8];
    if let Some(src) = b.get(at..at + 8) {
        v.copy_from_slice(src);
    }
    u64::from_le_bytes(v)
}

pub use crate::varint::put_uvarint_vec as put_varint;

/// Decodes a varint from `b` at `*pos`, advancing `*pos`. `None` if truncated or over 64 bits.
#[inline]
pub fn get_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    crate::varint::get_uvarint(b, pos).ok()
}

/// Decodes a varint that must fit in 32 bits (lengths inside a block).
#[inline]
pub fn get_varint32(b: &[u8], pos: &mut usize) -> Option<usize> {
    let v = get_varint(b, pos)?;
    u32::try_from(v).ok().map(|v| v as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trips() {
        let f = Footer {
            index: BlockHandle { offset: 1, len: 2 },
            filter: BlockHandle { offset: 3, len: 4 },
            properties: BlockHandle { offset: 5, len: 6 },
            data_end: 7,
            version: TABLE_FORMAT_VERSION,
        };
        let b = f.encode();
        assert_eq!(Footer::decode(&b, "t", 0).unwrap(), f);
    }

    #[test]
    fn footer_rejects_damage_and_newer_versions() {
        let f = Footer {
            index: BlockHandle { offset: 1, len: 2 },
            filter: BlockHandle::default(),
            properties: BlockHandle { offset: 5, len: 6 },
            data_end: 7,
            version: TABLE_FORMAT_VERSION,
        };
        let mut b = f.encode();
        b[3] ^= 1;
        assert!(matches!(
            Footer::decode(&b, "t", 0),
            Err(Error::Corruption { .. })
        ));
        let mut newer = Footer {
            version: TABLE_FORMAT_VERSION + 1,
            ..f
        }
        .encode();
        assert!(matches!(
            Footer::decode(&newer, "t", 0),
            Err(Error::VersionUnsupported { version, .. }) if version == TABLE_FORMAT_VERSION + 1
        ));
        newer[70] ^= 1;
        assert!(matches!(
            Footer::decode(&newer, "t", 0),
            Err(Error::Corruption { .. })
        ));
    }

    #[test]
    fn varints_round_trip_and_reject_garbage() {
        let mut out = Vec::new();
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            out.clear();
            put_varint(&mut out, v);
            let mut pos = 0;
            assert_eq!(get_varint(&out, &mut pos), Some(v));
            assert_eq!(pos, out.len());
            let mut pos = 0;
            assert_eq!(get_varint(&out[..out.len() - 1], &mut pos), None);
        }
        let mut pos = 0;
        assert_eq!(get_varint(&[0xff; 11], &mut pos), None);
    }
}
