//! The write-ahead log: one RecordIO file (ShaleDB format, CRC-32C over every byte) per log
//! number, named `wal-{number:06}.log`, holding one record per write batch (the batch's
//! encoding, [`crate::batch`], with its first sequence number).
//!
//! # Writing
//!
//! [`WalWriter::append`] hands the record to the storage before it returns (one `write_at` per
//! call, or per [`WalWriter::append_all`] group), so an appended batch survives the process
//! being killed; [`WalWriter::sync`] makes everything appended durable. After any failed write
//! or sync the writer is *poisoned*: every later call fails with an error of the same kind whose
//! message carries the original cause. A failed fsync is never retried as if nothing happened
//! (Linux may have dropped the dirty pages).
//!
//! # Replaying
//!
//! [`WalReader::replay`] hands every intact batch to a callback in log order and reports how the
//! log ended ([`WalEnd`]):
//! - [`WalEnd::Clean`]: the last record ends exactly at the end of the file.
//! - [`WalEnd::TornTail`] `{ valid_up_to }`: the file ends in damage that no intact record
//!   follows — a write cut short by a crash. Batches before `valid_up_to` were all replayed;
//!   recovery must cut the file there ([`WalWriter::resume`] does) before appending to it, or
//!   before a newer log is written, so that the damage never ends up in the middle of the log.
//! - Damage followed by at least one intact record is corruption: a typed error (for example
//!   [`Error::ChecksumMismatch`]) naming the file and the damaged record's offset. The caller
//!   decides the policy (refuse to open, or salvage).
//!
//! Damage inside the *last* record is indistinguishable from a torn write and is reported as a
//! torn tail, which is right for unsynced data; a synced last record damaged later (bit rot)
//! would be dropped the same way.

use std::io;

use crate::batch::{WriteBatch, BATCH_HEADER_LEN, MAX_BATCH_SIZE};
use crate::recordio::format::{FILE_HEADER_LEN, SHALE_MAGIC};
use crate::recordio::{Compression, Reader, ReaderOptions, Version, Writer, WriterOptions};
use crate::storage::{FileHandle, OpenMode, Storage};
use crate::{Error, Result};

/// The file name of log `number`: `wal-000007.log`.
pub fn wal_file_name(number: u64) -> String {
    format!("wal-{number:06}.log")
}

/// The log number in a WAL file name, if `name` is one (`wal-<digits>.log`).
pub fn parse_wal_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("wal-")?.strip_suffix(".log")?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Options for [`WalWriter`].
#[derive(Debug, Clone)]
pub struct WalOptions {
    /// Compression of each record (kept only where it saves at least 1/8).
    pub compression: Compression,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            compression: Compression::None,
        }
    }
}

/// In-memory buffer of the RecordIO writer: records of one append (or group) are gathered in it
/// and handed to the storage in one `write_at`; larger ones are written through.
const WRITE_BUFFER: usize = 1024 * 1024;

/// Copies `e` for a later caller: the same variant for I/O errors (same operation, file and
/// `io::ErrorKind`), [`Error::Closed`] for anything else, with `context` and the original
/// message.
pub fn repeat_error(e: &Error, context: &str) -> Error {
    match e {
        Error::Io { op, file, source } => Error::Io {
            op,
            file: file.clone(),
            source: io::Error::new(source.kind(), format!("{context}; first failure: {source}")),
        },
        other => Error::Closed(format!("{context}; first failure: {other}")),
    }
}

/// Appends write batches to one log file. Not shared between threads by itself: see
/// [`crate::group_commit`].
#[derive(Debug)]
pub struct WalWriter {
    number: u64,
    file: FileHandle,
    writer: Writer,
    synced: u64,
    poisoned: Option<Error>,
}

impl WalWriter {
    /// Creates log `number` (which must not exist: else [`Error::AlreadyExists`]), writes the
    /// RecordIO file header and makes the file and its directory entry durable (`sync` and
    /// `sync_dir`), so that synced appends survive a power loss.
    pub fn create(storage: &dyn Storage, number: u64, options: WalOptions) -> Result<WalWriter> {
        let file = storage.open(&wal_file_name(number), OpenMode::CreateNew)?;
        let writer = Writer::new(file.clone(), writer_options(&options))?;
        let mut w = WalWriter::with(number, file, writer);
        w.sync()?;
        storage.sync_dir()?;
        Ok(w)
    }

    /// Reopens log `number` to append after a replay: cuts the file to `end` (the
    /// [`WalReplay::valid_up_to`] of its replay) if it is longer, and syncs, so a torn tail is
    /// gone for good before anything new is written. `InvalidArgument` if the file is shorter
    /// than `end`; `NotFound` if it does not exist. An `end` below the file header restarts
    /// the file.
    pub fn resume(
        storage: &dyn Storage,
        number: u64,
        end: u64,
        options: WalOptions,
    ) -> Result<WalWriter> {
        let name = wal_file_name(number);
        let file = storage.open(&name, OpenMode::ReadWrite)?;
        let size = file.size()?;
        if size < end {
            return Err(Error::InvalidArgument(format!(
                "{name:?} is {size} bytes, shorter than the resume offset {end}"
            )));
        }
        let end = if end < FILE_HEADER_LEN { 0 } else { end };
        if size > end {
            file.truncate(end)?;
        }
        let writer = Writer::append(file.clone(), writer_options(&options))?;
        let mut w = WalWriter::with(number, file, writer);
        w.sync()?;
        Ok(w)
    }

    fn with(number: u64, file: FileHandle, writer: Writer) -> WalWriter {
        WalWriter {
            number,
            file,
            writer,
            synced: 0,
            poisoned: None,
        }
    }

    /// Appends one encoded write batch ([`WriteBatch::as_bytes`], sequence number set) as one
    /// record. When this returns `Ok`, the record has reached the OS (survives a process kill,
    /// not a power loss). `InvalidArgument` (the writer stays usable) for bytes shorter than a
    /// batch header or over [`MAX_BATCH_SIZE`]; a storage failure poisons the writer.
    pub fn append(&mut self, batch_bytes: &[u8]) -> Result<()> {
        self.append_all(&[batch_bytes])
    }

    /// Appends several encoded batches, one record each, handed to the storage together (one
    /// `write_at` when they fit the 1 MiB buffer). Each batch stays atomic on replay; after a
    /// crash a prefix of them may survive. Errors as [`WalWriter::append`]; nothing is written
    /// if any batch is invalid.
    pub fn append_all(&mut self, batches: &[&[u8]]) -> Result<()> {
        self.check()?;
        for b in batches {
            if b.len() < BATCH_HEADER_LEN || b.len() > MAX_BATCH_SIZE {
                return Err(Error::InvalidArgument(format!(
                    "a WAL record must be an encoded write batch of {BATCH_HEADER_LEN} to \
                     {MAX_BATCH_SIZE} bytes, not {}",
                    b.len()
                )));
            }
        }
        let mut r = Ok(());
        for b in batches {
            r = self.writer.write(b).map(drop);
            if r.is_err() {
                break;
            }
        }
        let r = r.and_then(|()| self.writer.flush());
        self.poison_on_error(r)
    }

    /// Makes every appended record durable (fdatasync / `F_FULLFSYNC`). A failure poisons the
    /// writer: what reached the disk is unknown.
    pub fn sync(&mut self) -> Result<()> {
        self.check()?;
        let r = self.writer.sync();
        self.poison_on_error(r)?;
        self.synced = self.writer.offset();
        Ok(())
    }

    /// The log number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The log's file, for syncing it without holding the writer (group commit).
    pub fn file(&self) -> FileHandle {
        self.file.clone()
    }

    /// The log's file name.
    pub fn file_name(&self) -> &str {
        self.file.name()
    }

    /// Bytes in the log, file header included (all of them handed to the storage).
    pub fn size(&self) -> u64 {
        self.writer.offset()
    }

    /// Bytes known durable (as of the last successful sync).
    pub fn synced_size(&self) -> u64 {
        self.synced
    }

    /// The error that poisoned the writer, if any.
    pub fn poisoned(&self) -> Option<&Error> {
        self.poisoned.as_ref()
    }

    fn check(&self) -> Result<()> {
        match &self.poisoned {
            None => Ok(()),
            Some(e) => Err(repeat_error(
                e,
                &format!(
                    "the WAL {:?} failed earlier and accepts no more writes; reopen the database",
                    self.file.name()
                ),
            )),
        }
    }

    fn poison_on_error(&mut self, r: Result<()>) -> Result<()> {
        if let Err(e) = r {
            let copy = repeat_error(&e, "WAL writer poisoned");
            self.poisoned = Some(copy);
            return Err(e);
        }
        Ok(())
    }
}

fn writer_options(options: &WalOptions) -> WriterOptions {
    WriterOptions {
        compression: options.compression,
        buffer_size: WRITE_BUFFER,
        min_saving_divisor: 8,
        ..WriterOptions::default()
    }
}

/// How a replayed log ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalEnd {
    /// The last record ends exactly at the end of the file.
    Clean,
    /// The file ends in damage no intact record follows (a torn write); valid data ends at
    /// `valid_up_to`, where recovery must cut the file.
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
    /// Offset just past the last intact record (the file size for a clean end).
    pub valid_up_to: u64,
    /// The file's size.
    pub file_size: u64,
    /// Batches handed to the callback.
    pub batches: u64,
    /// The sequence number of the last operation replayed, if any.
    pub last_seq: Option<u64>,
}

/// Replays a log.
#[derive(Debug)]
pub struct WalReader;

impl WalReader {
    /// Reads log `number` from the start and calls `f(first_seq, batch)` for every intact batch,
    /// in order; stops at the first error `f` returns and returns it. Sequence numbers must
    /// increase from batch to batch, else [`Error::Corruption`].
    ///
    /// Returns how the log ended (module doc): a clean end or a torn tail (`Ok`), or a typed
    /// corruption error naming the file and offset when intact data follows damage. A file
    /// shorter than its header, or whose header is damaged with nothing after it, is a torn
    /// tail at 0 (a crash while the log was being created). I/O errors are returned as is.
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
        };
        let options = ReaderOptions {
            max_record_size: MAX_BATCH_SIZE as u64,
            verify_checksums: true,
        };
        if file_size < FILE_HEADER_LEN {
            return Ok(out);
        }
        let mut reader = match Reader::open(file.clone(), options) {
            Ok(r) => r,
            Err(e @ (Error::Corruption { .. } | Error::VersionUnsupported { .. })) => {
                if all_zero(&file, FILE_HEADER_LEN, file_size)? {
                    return Ok(out);
                }
                return Err(e);
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
        let mut next_seq = 0u64;
        let end = loop {
            let offset = reader.offset();
            match reader.read_next() {
                Ok(Some(rec)) => {
                    let Some(data) = rec.data else {
                        return Err(Error::corruption(&name, rec.offset, "nil record in a WAL"));
                    };
                    let (first_seq, batch) = WriteBatch::decode(data, &name, rec.offset)?;
                    if first_seq < next_seq {
                        return Err(Error::corruption(
                            &name,
                            rec.offset,
                            format!(
                                "batch starts at sequence number {first_seq}, not after {}",
                                next_seq - 1
                            ),
                        ));
                    }
                    let count = batch.len() as u64;
                    if count > 0 {
                        next_seq = first_seq + count;
                        out.last_seq = Some(next_seq - 1);
                    }
                    out.valid_up_to = rec.next_offset;
                    out.batches += 1;
                    f(first_seq, batch)?;
                }
                Ok(None) => break WalEnd::Clean,
                Err(Error::TornTail { valid_up_to, .. }) => break WalEnd::TornTail { valid_up_to },
                Err(e) if is_damage(&e) => {
                    if intact_record_after(&reader, &file, offset + 1, file_size)? {
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
            WalEnd::Clean => file_size,
            WalEnd::TornTail { valid_up_to } => valid_up_to,
        };
        out.end = end;
        Ok(out)
    }
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

/// Calls `f(offset, bytes)` on `file`'s bytes in `from..end`, 64 KiB at a time, until `f`
/// returns `true` (then returns `true`) or the range ends (`false`).
fn any_chunk(
    file: &FileHandle,
    from: u64,
    end: u64,
    mut f: impl FnMut(u64, &[u8]) -> bool,
) -> Result<bool> {
    let mut chunk = vec![0u8; 64 * 1024];
    let mut pos = from;
    while pos < end {
        let n = file.read_at(pos, &mut chunk)?;
        if n == 0 {
            break;
        }
        if f(pos, chunk.get(..n).unwrap_or_default()) {
            return Ok(true);
        }
        pos += n as u64;
    }
    Ok(false)
}

/// Whether an intact record (both checksums good) starts anywhere in `from..end`.
fn intact_record_after(reader: &Reader, file: &FileHandle, from: u64, end: u64) -> Result<bool> {
    any_chunk(file, from, end, |pos, bytes| {
        bytes.iter().enumerate().any(|(i, &b)| {
            b == SHALE_MAGIC
                && matches!(reader.read_at(pos + i as u64), Ok(Some(rec)) if rec.data.is_some())
        })
    })
}

/// Whether every byte of `file` in `from..end` is zero (true for an empty range).
fn all_zero(file: &FileHandle, from: u64, end: u64) -> Result<bool> {
    Ok(!any_chunk(file, from, end, |_, bytes| {
        bytes.iter().any(|&b| b != 0)
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;

    fn batch(seq: u64, key: &[u8]) -> WriteBatch {
        let mut b = WriteBatch::new();
        b.put(key, b"value").unwrap();
        b.set_first_seq(seq);
        b
    }

    fn replay_all(s: &dyn Storage, n: u64) -> (WalReplay, Vec<(u64, WriteBatch)>) {
        let mut got = Vec::new();
        let r = WalReader::replay(s, n, |seq, b| {
            got.push((seq, b));
            Ok(())
        })
        .unwrap();
        (r, got)
    }

    #[test]
    fn file_names_round_trip() {
        assert_eq!(wal_file_name(7), "wal-000007.log");
        assert_eq!(wal_file_name(1234567), "wal-1234567.log");
        assert_eq!(parse_wal_file_name("wal-000007.log"), Some(7));
        assert_eq!(parse_wal_file_name("wal-1234567.log"), Some(1234567));
        for bad in [
            "wal-7.log",
            "wal-00000x.log",
            "000007.sst",
            "wal-000007.log.tmp",
        ] {
            assert_eq!(parse_wal_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn appended_batches_replay_in_order_with_a_clean_end() {
        let s = MemoryStorage::new();
        let mut w = WalWriter::create(&s, 3, WalOptions::default()).unwrap();
        assert_eq!(w.number(), 3);
        assert_eq!(w.size(), FILE_HEADER_LEN);
        w.append(batch(1, b"a").as_bytes()).unwrap();
        w.append_all(&[batch(2, b"b").as_bytes(), batch(3, b"c").as_bytes()])
            .unwrap();
        let size = w.size();
        let (r, got) = replay_all(&s, 3);
        assert_eq!(r.end, WalEnd::Clean);
        assert_eq!((r.valid_up_to, r.file_size, r.batches), (size, size, 3));
        assert_eq!(r.last_seq, Some(3));
        let seqs: Vec<u64> = got.iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, vec![1, 2, 3]);
        assert_eq!(got[2].1, batch(3, b"c"));
    }

    #[test]
    fn invalid_records_are_refused_without_poisoning() {
        let s = MemoryStorage::new();
        let mut w = WalWriter::create(&s, 1, WalOptions::default()).unwrap();
        assert_eq!(w.append(b"short").unwrap_err().code(), "INVALID_ARGUMENT");
        w.append(batch(1, b"a").as_bytes()).unwrap();
        assert!(w.poisoned().is_none());
    }

    #[test]
    fn decreasing_sequence_numbers_are_corruption() {
        let s = MemoryStorage::new();
        let mut w = WalWriter::create(&s, 1, WalOptions::default()).unwrap();
        w.append(batch(5, b"a").as_bytes()).unwrap();
        w.append(batch(5, b"b").as_bytes()).unwrap();
        let e = WalReader::replay(&s, 1, |_, _| Ok(())).unwrap_err();
        assert_eq!(e.code(), "CORRUPTION");
    }

    #[test]
    fn compressed_logs_replay() {
        let s = MemoryStorage::new();
        let opts = WalOptions {
            compression: Compression::Snappy,
        };
        let mut w = WalWriter::create(&s, 1, opts).unwrap();
        let mut b = WriteBatch::new();
        b.put(b"k", &[7u8; 10_000]).unwrap();
        b.set_first_seq(1);
        w.append(b.as_bytes()).unwrap();
        assert!(w.size() < 2_000);
        let (r, got) = replay_all(&s, 1);
        assert_eq!(r.end, WalEnd::Clean);
        assert_eq!(got, vec![(1, b)]);
    }

    #[test]
    fn a_missing_log_is_not_found() {
        let s = MemoryStorage::new();
        let e = WalReader::replay(&s, 9, |_, _| Ok(())).unwrap_err();
        assert_eq!(e.code(), "NOT_FOUND");
    }

    #[test]
    fn callback_errors_stop_the_replay() {
        let s = MemoryStorage::new();
        let mut w = WalWriter::create(&s, 1, WalOptions::default()).unwrap();
        w.append(batch(1, b"a").as_bytes()).unwrap();
        w.append(batch(2, b"b").as_bytes()).unwrap();
        let mut calls = 0;
        let e = WalReader::replay(&s, 1, |_, _| {
            calls += 1;
            Err(Error::InvalidArgument("stop".into()))
        })
        .unwrap_err();
        assert_eq!((calls, e.code()), (1, "INVALID_ARGUMENT"));
    }
}
