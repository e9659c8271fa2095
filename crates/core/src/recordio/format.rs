//! Byte layouts of RecordIO versions (`docs/FORMAT.md`, part "RecordIO", is authoritative).
//!
//! All fixed-width integers are little-endian; "uvarint" is unsigned LEB128 (Go's
//! `encoding/binary`, at most 10 bytes). Every file starts with an 8-byte file header:
//!
//! | offset | size   | field |
//! |--------|--------|-------|
//! | 0      | u32 LE | version: 1..=4 go-sstables; `0x5348_0001` ShaleDB RecordIO v1 |
//! | 4      | u32 LE | go-sstables: file compression (0 none, 1 gzip, 2 snappy, 3 lzw); ShaleDB: flags, must be 0 |
//!
//! Records follow back to back from offset 8.
//!
//! **go-sstables v1**: `u32 magic 0x00130691`, `u64 ulen`, `u64 clen` (20 bytes), payload.
//! **v2**: `uvarint magic 0x130691` (`91 8d 4c`), `uvarint ulen`, `uvarint clen`, payload.
//! **v3**: v2 with a `u8 nil` flag after the magic (1 = nil record, no payload).
//! **v4**: v3 followed by `uvarint crc`, CRC-32C of the header bytes before it.
//! The payload is `clen` bytes when the file is compressed, else `ulen` bytes; none for nil.
//!
//! **ShaleDB RecordIO v1** record:
//!
//! | field | size | meaning |
//! |-------|------|---------|
//! | magic | u8 | `0xB7` (never `0x00`, so zero-filled tails are recognizable) |
//! | flags | u8 | bits 0-1 compression (0 none, 1 snappy, 2 gzip, 3 reserved); bit 2 nil; others 0 |
//! | stored_len | uvarint | payload bytes on disk (0 for nil) |
//! | raw_len | uvarint | only when compressed: length after decompression |
//! | payload_crc | u32 LE | CRC-32C of the stored payload bytes |
//! | header_crc | u32 LE | CRC-32C of every header byte before it (magic .. payload_crc) |
//! | payload | stored_len | |

use crate::recordio::compression::Compression;
use crate::varint::{get_uvarint, VarintError};

/// The format of a RecordIO file, as read from its file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// go-sstables version 1..=4 (`u32` LE in the file header).
    Go(u32),
    /// ShaleDB's own format, with its own version number (1 for the first release).
    Shale(u32),
}

/// Size of the file header of every version.
pub const FILE_HEADER_LEN: u64 = 8;

/// go-sstables' record magic number.
pub const GO_MAGIC: u64 = 0x0013_0691;

/// Marker in the high 16 bits of a ShaleDB RecordIO version word (`'S' 'H'`).
pub const SHALE_MARKER: u32 = 0x5348_0000;

/// The ShaleDB RecordIO format version this code writes (and the newest it reads).
pub const SHALE_VERSION: u32 = 1;

/// The version word of ShaleDB RecordIO v1 in the file header.
pub const SHALE_VERSION_WORD: u32 = SHALE_MARKER | SHALE_VERSION;

/// First byte of every ShaleDB record header.
pub const SHALE_MAGIC: u8 = 0xB7;

/// ShaleDB record flags: compression field mask.
pub const FLAG_COMPRESSION_MASK: u8 = 0b011;
/// ShaleDB record flags: nil record.
pub const FLAG_NIL: u8 = 0b100;

/// Longest record header of any version (ShaleDB: 1 + 1 + 10 + 10 + 4 + 4 = 30; go v4: 29).
pub const MAX_HEADER_LEN: usize = 32;

/// go-sstables' numeric code of a file compression.
pub fn go_code(c: Compression) -> u32 {
    match c {
        Compression::None => 0,
        Compression::Gzip => 1,
        Compression::Snappy => 2,
        Compression::Lzw => 3,
    }
}

/// The compression of go-sstables' code `code`, if defined.
pub fn go_compression(code: u32) -> Option<Compression> {
    match code {
        0 => Some(Compression::None),
        1 => Some(Compression::Gzip),
        2 => Some(Compression::Snappy),
        3 => Some(Compression::Lzw),
        _ => None,
    }
}

/// ShaleDB's flag bits for `c`; `None` for a compression the format cannot store (LZW).
pub fn shale_code(c: Compression) -> Option<u8> {
    match c {
        Compression::None => Some(0),
        Compression::Snappy => Some(1),
        Compression::Gzip => Some(2),
        Compression::Lzw => None,
    }
}

/// A decoded record header, any version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordHeader {
    /// Bytes of header before the payload.
    pub header_len: usize,
    /// Bytes of payload on disk.
    pub stored_len: u64,
    /// Length of the record after decompression (= `stored_len` when not compressed).
    pub raw_len: u64,
    /// Nil record (no payload).
    pub nil: bool,
    /// How the payload is compressed.
    pub compression: Compression,
    /// ShaleDB: CRC-32C of the payload.
    pub payload_crc: Option<u32>,
}

/// Why a record header could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// The bytes ran out inside the header.
    Incomplete,
    /// The header does not start with the magic number.
    BadMagic,
    /// The header checksum does not match.
    Checksum {
        stored: u32,
        computed: u32,
        header_len: usize,
    },
    /// Checksum fine, content impossible (reserved bits, nil with a payload...).
    Invalid(&'static str),
    /// Reserved compression code (ShaleDB code 3).
    UnknownCompression(u32),
}

fn varint(b: &[u8], pos: &mut usize, bad_magic_on_overflow: bool) -> Result<u64, HeaderError> {
    get_uvarint(b, pos).map_err(|e| match e {
        VarintError::Incomplete => HeaderError::Incomplete,
        VarintError::Overflow if bad_magic_on_overflow => HeaderError::BadMagic,
        VarintError::Overflow => HeaderError::Invalid("length varint overflows 64 bits"),
    })
}

fn u32_at(b: &[u8], pos: usize) -> Result<u32, HeaderError> {
    let bytes = b
        .get(pos..pos + 4)
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .ok_or(HeaderError::Incomplete)?;
    Ok(u32::from_le_bytes(bytes))
}

fn u64_at(b: &[u8], pos: usize) -> Result<u64, HeaderError> {
    let bytes = b
        .get(pos..pos + 8)
        .and_then(|s| <[u8; 8]>::try_from(s).ok())
        .ok_or(HeaderError::Incomplete)?;
    Ok(u64::from_le_bytes(bytes))
}

/// Decodes the record header at the start of `b` (which may hold more bytes than the header).
/// `file_compression` is the go-sstables file-wide compression (ignored for ShaleDB).
pub(crate) fn parse_header(
    version: Version,
    file_compression: Compression,
    b: &[u8],
) -> Result<RecordHeader, HeaderError> {
    match version {
        Version::Shale(_) => parse_shale(b),
        Version::Go(v) => parse_go(v, file_compression, b),
    }
}

#[inline]
fn parse_shale(b: &[u8]) -> Result<RecordHeader, HeaderError> {
    match b.first() {
        None => return Err(HeaderError::Incomplete),
        Some(&SHALE_MAGIC) => {}
        Some(_) => return Err(HeaderError::BadMagic),
    }
    let flags = *b.get(1).ok_or(HeaderError::Incomplete)?;
    let mut pos = 2usize;
    let stored_len = varint(b, &mut pos, false)?;
    let code = flags & FLAG_COMPRESSION_MASK;
    let raw_len = if code != 0 {
        varint(b, &mut pos, false)?
    } else {
        stored_len
    };
    let payload_crc = u32_at(b, pos)?;
    let stored_hcrc = u32_at(b, pos + 4)?;
    let computed = crc32c::crc32c(b.get(..pos + 4).ok_or(HeaderError::Incomplete)?);
    if computed != stored_hcrc {
        return Err(HeaderError::Checksum {
            stored: stored_hcrc,
            computed,
            header_len: pos + 8,
        });
    }
    if flags & !(FLAG_COMPRESSION_MASK | FLAG_NIL) != 0 {
        return Err(HeaderError::Invalid("reserved record flag bits are set"));
    }
    let compression = match code {
        0 => Compression::None,
        1 => Compression::Snappy,
        2 => Compression::Gzip,
        c => return Err(HeaderError::UnknownCompression(u32::from(c))),
    };
    let nil = flags & FLAG_NIL != 0;
    if nil && (code != 0 || stored_len != 0) {
        return Err(HeaderError::Invalid(
            "nil record with a payload or compression",
        ));
    }
    Ok(RecordHeader {
        header_len: pos + 8,
        stored_len,
        raw_len,
        nil,
        compression,
        payload_crc: Some(payload_crc),
    })
}

fn parse_go(v: u32, comp: Compression, b: &[u8]) -> Result<RecordHeader, HeaderError> {
    let (ulen, clen, nil, header_len) = if v == 1 {
        let magic = u32_at(b, 0)?;
        if u64::from(magic) != GO_MAGIC {
            return Err(HeaderError::BadMagic);
        }
        (u64_at(b, 4)?, u64_at(b, 12)?, false, 20usize)
    } else {
        let mut pos = 0usize;
        if varint(b, &mut pos, true)? != GO_MAGIC {
            return Err(HeaderError::BadMagic);
        }
        let nil = if v >= 3 {
            let flag = *b.get(pos).ok_or(HeaderError::Incomplete)?;
            pos += 1;
            flag == 1
        } else {
            false
        };
        let ulen = varint(b, &mut pos, false)?;
        let clen = varint(b, &mut pos, false)?;
        if v >= 4 {
            let body = b.get(..pos).ok_or(HeaderError::Incomplete)?;
            let computed = crc32c::crc32c(body);
            let stored = varint(b, &mut pos, false)?;
            let stored32 = u32::try_from(stored).map_err(|_| HeaderError::Checksum {
                stored: stored as u32,
                computed,
                header_len: pos,
            })?;
            if stored32 != computed {
                return Err(HeaderError::Checksum {
                    stored: stored32,
                    computed,
                    header_len: pos,
                });
            }
        }
        (ulen, clen, nil, pos)
    };
    let compressed = comp != Compression::None;
    let stored_len = if nil {
        0
    } else if compressed {
        clen
    } else {
        ulen
    };
    Ok(RecordHeader {
        header_len,
        stored_len,
        raw_len: if nil { 0 } else { ulen },
        nil,
        compression: comp,
        payload_crc: None,
    })
}
