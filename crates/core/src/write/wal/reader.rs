//! [`WalReader::replay`]: reads one log back, telling a torn tail from corruption.

use crate::file_names::wal_file_name;
use crate::recordio::format::{FILE_HEADER_LEN, SHALE_MAGIC, SHALE_VERSION};
use crate::recordio::{Compression, Reader, ReaderOptions, Version};
use crate::storage::{FileHandle, OpenMode, Storage};
use crate::write::batch::{WriteBatch, MAX_BATCH_SIZE};
use crate::write::wal::record::{LogHeader, LogRecord, MAX_PREFIX_LEN};
use crate::{Error, Result};

/// How a replayed log ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalEnd {
    /// The last record ends exactly at the end of the file, or it is a sealed record and only
    /// zeros (preallocated bytes) follow it.
    Clean,
    /// The file ends in damage that hit no synced data (a torn or lost write); valid data ends
    /// at `valid_up_to`, and nothing after it may be replayed.
    TornTail {
        /// Offset just past the last intact record.
        valid_up_to: u64,
    },
}

/// The outcome of [`WalReader::replay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalReplay {
    /// How the log ended.
    pub end: WalEnd,
    /// Offset just past the last intact record (for a clean end, the file size, or the end of
    /// the sealed record that zeros follow).
    pub valid_up_to: u64,
    /// The file's size.
    pub file_size: u64,
    /// Batches handed to the callback.
    pub batches: u64,
    /// The sequence number of the last operation replayed, if any.
    pub last_seq: Option<u64>,
    /// The WAL format version: 2 with a log header, 1 without; 0 if no record could be read.
    pub format: u32,
    /// The log header (format 2).
    pub header: Option<LogHeader>,
    /// The first sequence number of the first batch replayed.
    pub first_batch_seq: Option<u64>,
    /// The sequence number the next batch after the replayed ones must have: after the last
    /// batch, or the header's `first_seq` when there is none (format 2).
    pub next_seq: Option<u64>,
    /// The log this one continues in (format 2, a sealed log).
    pub sealed: Option<u64>,
    /// Offset just past the log header (format 2): what the log's creation made durable.
    pub header_end: u64,
    /// The largest synced offset a replayed record claims (format 2; 0 if none): a value past
    /// `header_end` proves that a sync of this log's records once returned.
    pub max_synced: u64,
}

/// Replays logs.
#[derive(Debug)]
pub struct WalReader;

impl WalReader {
    /// Reads log `number` from the start and calls `f(first_seq, batch)` for every batch before
    /// the first damage, in order; stops at the first error `f` returns and returns it.
    ///
    /// In format 2 batches must be dense (each starts where the previous one ended, the first
    /// where the header says), else [`Error::Corruption`] naming the missing sequence numbers;
    /// in format 1 their sequence numbers must increase. The end (module doc of [`crate::write::wal`]):
    /// - a clean end (`Ok`): the end of the file, or zeros after a sealed record (a
    ///   preallocated log's tail);
    /// - a torn tail (`Ok`): damage that no intact record follows — zeros after the data
    ///   included, as a preallocated log that was not sealed ends —, or (format 2) damage that
    ///   every intact record after it says was never synced;
    /// - a typed corruption error naming the file and the damaged record's offset: damage in
    ///   data a later record says was synced (format 2), or followed by any intact record
    ///   (format 1, which cannot tell);
    /// - a file shorter than its header, or whose file header is damaged with no intact record
    ///   after it, is a torn tail at 0 (a crash while the log was being created: zeros, or a
    ///   torn sector's noise). I/O errors are returned as is.
    pub fn replay(
        storage: &dyn Storage,
        number: u64,
        mut f: impl FnMut(u64, WriteBatch) -> Result<()>,
    ) -> Result<WalReplay> {
        let name = wal_file_name(number);
        let file = storage.open(&name, OpenMode::Read)?;
        let file_size = file.size()?;
        let mut out = WalReplay {
            end: WalEnd::TornTail { valid_up_to: 0 },
            valid_up_to: 0,
            file_size,
            batches: 0,
            last_seq: None,
            format: 0,
            header: None,
            first_batch_seq: None,
            next_seq: None,
            sealed: None,
            header_end: 0,
            max_synced: 0,
        };
        let options = WalReader::reader_options();
        if file_size < FILE_HEADER_LEN {
            return Ok(out);
        }
        let mut reader = match Reader::open(file.clone(), options.clone()) {
            Ok(r) => r,
            Err(e @ (Error::Corruption { .. } | Error::VersionUnsupported { .. })) => {
                // The file header is durable before any record is: with no intact record after
                // it that proves a sync, the log's creation was cut short (zeros, or a torn
                // sector's noise after a power loss; a switch creates logs unsynced); with one,
                // a used log was damaged.
                let assumed = Reader::assuming(
                    file.clone(),
                    Version::Shale(SHALE_VERSION),
                    Compression::None,
                    options,
                )?;
                let after =
                    intact_records_after(&assumed, &file, FILE_HEADER_LEN, file_size, &name)?;
                if after.proves_sync() {
                    return Err(e);
                }
                return Ok(out);
            }
            Err(e) => return Err(e),
        };
        if !matches!(reader.version(), Version::Shale(_)) {
            return Err(Error::corruption(
                &name,
                0,
                "a WAL must be a ShaleDB-format RecordIO file",
            ));
        }
        out.valid_up_to = FILE_HEADER_LEN;
        // Where the data of a cleanly ended log ends, if not at the end of the file.
        let mut data_end = None;
        let end = loop {
            let offset = reader.offset();
            match reader.read_next() {
                Ok(Some(rec)) => {
                    let Some(data) = rec.data else {
                        return Err(Error::corruption(&name, rec.offset, "nil record in a WAL"));
                    };
                    let (at, next_offset) = (rec.offset, rec.next_offset);
                    if out.format == 0 {
                        match LogHeader::decode(data, &name)? {
                            Some(h) => {
                                if h.number != number {
                                    return Err(Error::corruption(
                                        &name,
                                        at,
                                        format!("the log header names log {}", h.number),
                                    ));
                                }
                                out.format = 2;
                                out.header = Some(h);
                                out.next_seq = Some(h.first_seq);
                                out.valid_up_to = next_offset;
                                out.header_end = next_offset;
                                continue;
                            }
                            None => out.format = 1,
                        }
                    }
                    if out.sealed.is_some() {
                        return Err(Error::corruption(&name, at, "a record after the seal"));
                    }
                    let batch = if out.format == 2 {
                        let record = LogRecord::decode(data, &name, at)?;
                        out.max_synced = out.max_synced.max(record.synced());
                        match record {
                            LogRecord::Batch { batch, .. } => batch,
                            LogRecord::Sealed { next, .. } => {
                                out.sealed = Some(next);
                                out.valid_up_to = next_offset;
                                continue;
                            }
                            LogRecord::SyncedMark { .. } => {
                                out.valid_up_to = next_offset;
                                continue;
                            }
                        }
                    } else {
                        data
                    };
                    let (first_seq, batch) = WriteBatch::decode(batch, &name, at)?;
                    check_order(&name, at, out.next_seq, first_seq, out.format == 2)?;
                    let count = batch.len() as u64;
                    out.first_batch_seq.get_or_insert(first_seq);
                    out.next_seq = Some(first_seq + count);
                    if count > 0 {
                        out.last_seq = Some(first_seq + count - 1);
                    }
                    out.valid_up_to = next_offset;
                    out.batches += 1;
                    f(first_seq, batch)?;
                }
                Ok(None) => break WalEnd::Clean,
                // A sealed log took no more writes: zeros after its sealed record are
                // preallocated bytes that the seal's trim did not cut (or whose cut a crash
                // undid), not lost data.
                Err(Error::TornTail { valid_up_to, .. })
                    if out.sealed.is_some() && all_zero(&file, valid_up_to, file_size)? =>
                {
                    data_end = Some(valid_up_to);
                    break WalEnd::Clean;
                }
                Err(Error::TornTail { valid_up_to, .. }) => break WalEnd::TornTail { valid_up_to },
                Err(e) if is_damage(&e) => {
                    let after = intact_records_after(&reader, &file, offset + 1, file_size, &name)?;
                    let synced_past_damage = match out.format {
                        2 => after.max_synced > offset,
                        // A damaged log header: corruption if a later record proves a sync.
                        0 => after.proves_sync(),
                        // Format 1 cannot tell what was synced.
                        _ => after.any,
                    };
                    if synced_past_damage {
                        return Err(e);
                    }
                    break WalEnd::TornTail {
                        valid_up_to: offset,
                    };
                }
                Err(e) => return Err(e),
            }
        };
        out.valid_up_to = match end {
            WalEnd::Clean => data_end.unwrap_or(file_size),
            WalEnd::TornTail { valid_up_to } => valid_up_to,
        };
        out.end = end;
        Ok(out)
    }
}

impl WalReader {
    /// How a log's records are read: checksums verified, records up to the largest batch.
    pub fn reader_options() -> ReaderOptions {
        ReaderOptions {
            max_record_size: (MAX_BATCH_SIZE + MAX_PREFIX_LEN) as u64,
            verify_checksums: true,
        }
    }

    /// The format of log `number`, from its first record: 2 (a log header), 1 (a batch), or 0
    /// when no intact first record can be read (a log whose creation was cut short, or damage:
    /// [`WalReader::replay`] tells which). I/O errors are returned as is.
    pub fn format(storage: &dyn Storage, number: u64) -> Result<u32> {
        let name = wal_file_name(number);
        let file = storage.open(&name, OpenMode::Read)?;
        if file.size()? < FILE_HEADER_LEN {
            return Ok(0);
        }
        let mut reader = match Reader::open(file, WalReader::reader_options()) {
            Ok(r) => r,
            Err(e @ Error::Io { .. }) => return Err(e),
            Err(_) => return Ok(0),
        };
        match reader.read_next() {
            Ok(Some(rec)) => match rec.data.map(|d| LogHeader::decode(d, &name)) {
                Some(Ok(Some(_))) => Ok(2),
                Some(Ok(None)) => Ok(1),
                _ => Ok(0),
            },
            Err(e @ Error::Io { .. }) => Err(e),
            _ => Ok(0),
        }
    }
}

/// `Corruption` unless a batch at `first_seq` may follow batches that end before `expected`:
/// exactly there (`dense`, format 2), or anywhere after (format 1, which only promised order).
fn check_order(
    name: &str,
    at: u64,
    expected: Option<u64>,
    first_seq: u64,
    dense: bool,
) -> Result<()> {
    let Some(expected) = expected else {
        return Ok(());
    };
    if first_seq == expected || (!dense && first_seq > expected) {
        return Ok(());
    }
    let why = if first_seq > expected {
        format!(
            "batch starts at sequence number {first_seq}, not {expected}: the writes \
             {expected}..{} are missing",
            first_seq - 1
        )
    } else {
        format!(
            "batch starts at sequence number {first_seq}, not after {}",
            expected - 1
        )
    };
    Err(Error::corruption(name, at, why))
}

/// Errors that mean "the bytes of a record are damaged".
fn is_damage(e: &Error) -> bool {
    matches!(
        e,
        Error::MagicMismatch { .. }
            | Error::HeaderChecksumMismatch { .. }
            | Error::ChecksumMismatch { .. }
            | Error::Corruption { .. }
            | Error::RecordTooLarge { .. }
    )
}

/// What follows a damaged record.
struct After {
    /// An intact record (both checksums good) starts somewhere after the damage.
    any: bool,
    /// The largest synced offset claimed by an intact log record after the damage.
    max_synced: u64,
    /// An intact record after the damage is not a log record (format 1).
    foreign: bool,
}

impl After {
    /// Whether the records after damage to a log's headers prove a sync of the log (which
    /// would have made the headers durable first): one claims a synced offset, or is of
    /// format 1, which cannot tell.
    fn proves_sync(&self) -> bool {
        self.max_synced > 0 || self.foreign
    }
}

/// Looks for intact records in `from..end`: a byte scan for a record start, then record by
/// record from each one found (so bytes inside a record's payload are not taken for records).
fn intact_records_after(
    reader: &Reader,
    file: &FileHandle,
    from: u64,
    end: u64,
    name: &str,
) -> Result<After> {
    let mut after = After {
        any: false,
        max_synced: 0,
        foreign: false,
    };
    let mut chunk = vec![0u8; 64 * 1024];
    let mut pos = from;
    'scan: while pos < end {
        let n = file.read_at(pos, &mut chunk)?;
        if n == 0 {
            break;
        }
        for (i, &b) in chunk.get(..n).unwrap_or_default().iter().enumerate() {
            if b != SHALE_MAGIC {
                continue;
            }
            let mut at = pos + i as u64;
            let mut found = false;
            while let Ok(Some(rec)) = reader.read_at(at) {
                let Some(data) = rec.data.as_deref() else {
                    break;
                };
                found = true;
                after.any = true;
                match LogRecord::decode(data, name, at) {
                    Ok(r) => after.max_synced = after.max_synced.max(r.synced()),
                    // A log header proves nothing; anything else is of format 1.
                    Err(_) => {
                        after.foreign |= !matches!(LogHeader::decode(data, name), Ok(Some(_)))
                    }
                }
                at = rec.next_offset;
            }
            if found {
                pos = at.max(pos + i as u64 + 1);
                continue 'scan;
            }
        }
        pos += n as u64;
    }
    Ok(after)
}

/// Whether every byte of `file` in `from..end` is zero (true for an empty range).
pub(crate) fn all_zero(file: &FileHandle, from: u64, end: u64) -> Result<bool> {
    let mut chunk = vec![0u8; 64 * 1024];
    let mut pos = from;
    while pos < end {
        let n = file.read_at(pos, &mut chunk)?;
        if n == 0 {
            break;
        }
        if chunk.get(..n).unwrap_or_default().iter().any(|&b| b != 0) {
            return Ok(false);
        }
        pos += n as u64;
    }
    Ok(true)
}
