//! The records of a WAL, format version 2 (docs/FORMAT.md, "Write-ahead log").
//!
//! A v2 log is a ShaleDB RecordIO file whose first record is the **log header**:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `"ShaleWAL"` (`53 68 61 6c 65 57 41 4c`) |
//! | 8 | 4 | u32 LE: WAL format version, `2` |
//! | 12 | 8 | u64 LE: the log's number (its file name's) |
//! | 20 | 8 | u64 LE: `first_seq`, the sequence number the log's first batch gets |
//!
//! Every later record is `u8 kind` then:
//! - kind `1`, **batch**: `uvarint synced`, then a write batch ([`crate::write::batch`]);
//! - kind `2`, **sealed**: `uvarint synced`, `u64 LE next`: the log continues in log `next`;
//!   nothing follows it. Written after a sync of everything before it, so `synced` is its own
//!   offset.
//! - kind `3`, **synced mark**: `uvarint synced`, nothing else. Written at close after the last
//!   sync, so that the last synced bytes have a record vouching for them.
//!
//! `synced` is how many bytes of the file were durable (a sync of them had returned) when the
//! record was appended: recovery's proof that damage *before* that offset hit synced data.
//!
//! A version-1 log has no header: every record is a bare write batch, whose first 8 bytes are
//! a sequence number below 2^56, so its byte 7 is 0 — never `'L'`, so the two cannot be confused.

use crate::varint::{get_uvarint, put_uvarint};
use crate::write::batch::BATCH_HEADER_LEN;
use crate::{Error, Result};

/// The log header's magic.
pub const WAL_MAGIC: &[u8; 8] = b"ShaleWAL";
/// The WAL format version this code writes.
pub const WAL_FORMAT_VERSION: u32 = 2;
/// Length of the v2 log header record.
pub const LOG_HEADER_LEN: usize = 28;
/// Record kind: a write batch.
const KIND_BATCH: u8 = 1;
/// Record kind: the log is sealed and continues in another.
const KIND_SEALED: u8 = 2;
/// Record kind: a synced mark.
const KIND_SYNCED_MARK: u8 = 3;
/// Longest prefix of a batch or sealed record: kind and a uvarint.
pub const MAX_PREFIX_LEN: usize = 1 + 10;

/// The header of a v2 log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogHeader {
    /// The log number the header names.
    pub number: u64,
    /// The sequence number of the log's first batch.
    pub first_seq: u64,
}

impl LogHeader {
    /// The header record's bytes.
    pub fn encode(&self) -> [u8; LOG_HEADER_LEN] {
        let mut out = [0u8; LOG_HEADER_LEN];
        out[..8].copy_from_slice(WAL_MAGIC);
        out[8..12].copy_from_slice(&WAL_FORMAT_VERSION.to_le_bytes());
        out[12..20].copy_from_slice(&self.number.to_le_bytes());
        out[20..28].copy_from_slice(&self.first_seq.to_le_bytes());
        out
    }

    /// `Some(header)` if `record` is a v2 log header; `None` if it is not one (a v1 batch);
    /// `VersionUnsupported` for a header of a newer format.
    pub fn decode(record: &[u8], file: &str) -> Result<Option<LogHeader>> {
        if record.get(..8) != Some(&WAL_MAGIC[..]) {
            return Ok(None);
        }
        let word = |at: usize, len: usize| record.get(at..at + len);
        let version = word(8, 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| Error::corruption(file, 0, "a log header cut short"))?;
        if version != WAL_FORMAT_VERSION {
            return Err(Error::VersionUnsupported {
                file: file.into(),
                version,
            });
        }
        let (Some(number), Some(first_seq), LOG_HEADER_LEN) = (
            word(12, 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes),
            word(20, 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes),
            record.len(),
        ) else {
            return Err(Error::corruption(
                file,
                0,
                format!(
                    "a log header of {} bytes, not {LOG_HEADER_LEN}",
                    record.len()
                ),
            ));
        };
        Ok(Some(LogHeader { number, first_seq }))
    }
}

/// A record of a v2 log after its header, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogRecord<'a> {
    /// A write batch (its encoding) and the synced offset when it was appended.
    Batch {
        /// Bytes of the file durable when the record was appended.
        synced: u64,
        /// The batch encoding.
        batch: &'a [u8],
    },
    /// The log continues in log `next`.
    Sealed {
        /// Bytes of the file durable when the record was appended.
        synced: u64,
        /// The next log's number.
        next: u64,
    },
    /// Only says how many bytes were durable.
    SyncedMark {
        /// Bytes of the file durable when the record was appended.
        synced: u64,
    },
}

impl<'a> LogRecord<'a> {
    /// Decodes a record of a v2 log (not its header); `Corruption` at `offset` of `file` for
    /// anything else.
    pub fn decode(record: &'a [u8], file: &str, offset: u64) -> Result<LogRecord<'a>> {
        let bad = |why: &str| Error::corruption(file, offset, why.to_owned());
        let (&kind, rest) = record
            .split_first()
            .ok_or_else(|| bad("an empty log record"))?;
        let mut pos = 0usize;
        let synced = get_uvarint(rest, &mut pos).map_err(|_| bad("a bad synced offset"))?;
        let body = rest.get(pos..).unwrap_or_default();
        match kind {
            KIND_BATCH if body.len() >= BATCH_HEADER_LEN => Ok(LogRecord::Batch {
                synced,
                batch: body,
            }),
            KIND_SEALED => {
                let next = <[u8; 8]>::try_from(body)
                    .map(u64::from_le_bytes)
                    .map_err(|_| bad("a sealed record must end in a u64 log number"))?;
                Ok(LogRecord::Sealed { synced, next })
            }
            KIND_SYNCED_MARK if body.is_empty() => Ok(LogRecord::SyncedMark { synced }),
            KIND_BATCH => Err(bad("a batch record shorter than a batch header")),
            _ => Err(bad(&format!("unknown log record kind {kind}"))),
        }
    }

    /// The synced offset the record carries.
    pub fn synced(&self) -> u64 {
        match *self {
            LogRecord::Batch { synced, .. }
            | LogRecord::Sealed { synced, .. }
            | LogRecord::SyncedMark { synced } => synced,
        }
    }
}

/// The prefix of a batch record carrying `synced`; the batch encoding follows it.
pub fn batch_prefix(synced: u64, out: &mut [u8; MAX_PREFIX_LEN]) -> usize {
    out[0] = KIND_BATCH;
    let mut n = 1;
    put_uvarint(out, &mut n, synced);
    n
}

/// A sealed record.
pub fn sealed_record(synced: u64, next: u64) -> Vec<u8> {
    let mut v = mark(KIND_SEALED, synced);
    v.extend_from_slice(&next.to_le_bytes());
    v
}

/// A synced mark.
pub fn synced_mark(synced: u64) -> Vec<u8> {
    mark(KIND_SYNCED_MARK, synced)
}

fn mark(kind: u8, synced: u64) -> Vec<u8> {
    let mut out = [0u8; MAX_PREFIX_LEN];
    out[0] = kind;
    let mut n = 1;
    put_uvarint(&mut out, &mut n, synced);
    out.get(..n).unwrap_or_default().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_a_v1_batch_is_not_one() {
        let h = LogHeader {
            number: 7,
            first_seq: 1234,
        };
        let bytes = h.encode();
        assert_eq!(&bytes[..8], b"ShaleWAL");
        assert_eq!(LogHeader::decode(&bytes, "w").unwrap(), Some(h));
        let mut v1 = vec![0u8; 20];
        v1[..8].copy_from_slice(&(1u64 << 55).to_le_bytes());
        assert_eq!(LogHeader::decode(&v1, "w").unwrap(), None);
        let mut newer = bytes;
        newer[8] = 3;
        assert_eq!(
            LogHeader::decode(&newer, "w").unwrap_err().code(),
            "VERSION_UNSUPPORTED"
        );
        assert_eq!(
            LogHeader::decode(&bytes[..20], "w").unwrap_err().code(),
            "CORRUPTION"
        );
    }

    #[test]
    fn batch_and_sealed_records_round_trip() {
        let mut prefix = [0u8; MAX_PREFIX_LEN];
        let n = batch_prefix(300, &mut prefix);
        let mut rec = prefix[..n].to_vec();
        rec.extend_from_slice(&[9u8; BATCH_HEADER_LEN]);
        assert_eq!(
            LogRecord::decode(&rec, "w", 0).unwrap(),
            LogRecord::Batch {
                synced: 300,
                batch: &[9u8; BATCH_HEADER_LEN]
            }
        );
        let sealed = sealed_record(5, 42);
        assert_eq!(
            LogRecord::decode(&sealed, "w", 0).unwrap(),
            LogRecord::Sealed {
                synced: 5,
                next: 42
            }
        );
        assert_eq!(
            LogRecord::decode(&synced_mark(9), "w", 0).unwrap(),
            LogRecord::SyncedMark { synced: 9 }
        );
        for bad in [
            &[][..],
            &[1, 0, 1][..],
            &[9, 0][..],
            &[2, 0, 1, 2][..],
            &[3, 0, 0][..],
        ] {
            assert_eq!(
                LogRecord::decode(bad, "w", 3).unwrap_err().code(),
                "CORRUPTION"
            );
        }
    }
}
