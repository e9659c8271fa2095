//! RecordIO reader: go-sstables versions 1..=4 and ShaleDB's own format.
//!
//! # End of data, torn tails and corruption
//!
//! Reading a record at offset `o` of a file (or of the part before [`Reader::set_limit`]):
//!
//! - `o` is exactly the end: `Ok(None)`, a clean end.
//! - go-sstables v2..v4, sequential reading only: a header whose magic does not decode, with
//!   every byte from `o` to the end zero, is a clean end too (DirectIO zero padding).
//! - [`Error::TornTail`] `{ valid_up_to: o }` — the file ends inside a record, as after a crash
//!   during an append; everything before `o` is intact and a log may be cut there:
//!   - fewer bytes remain than the header needs;
//!   - ShaleDB: every remaining byte is zero (a zero-filled tail; no record starts with 0x00);
//!   - the header checks out (or has no checksum) but the payload runs past the end;
//!   - ShaleDB: the header checksum fails and every byte after the header is zero (or there are
//!     none), or the payload checksum fails and every byte after the record is zero (or there
//!     are none) — the damage is the last thing in the file, nothing valid follows it.
//! - Otherwise damage is corruption, a typed error naming the file and `o`:
//!   [`Error::MagicMismatch`], [`Error::HeaderChecksumMismatch`], [`Error::ChecksumMismatch`],
//!   [`Error::Corruption`] (impossible header, undecodable payload), [`Error::RecordTooLarge`].
//!
//! # Resource limits
//!
//! No length read from the file drives an allocation larger than what the file still holds:
//! lengths are checked against the remaining bytes before any buffer grows. Stored and
//! decompressed sizes are capped by [`ReaderOptions::max_record_size`]; decompression stops at
//! the header's raw length.

use crate::recordio::compression;
use crate::recordio::compression::Compression;
use crate::recordio::format::Version;
use crate::recordio::format::{
    go_compression, parse_header, HeaderError, RecordHeader, FILE_HEADER_LEN, MAX_HEADER_LEN,
    SHALE_MARKER, SHALE_VERSION,
};
use crate::storage::FileHandle;
use crate::{Error, Result};

/// Bytes read at a time by sequential reading (more when a record is larger).
const CHUNK: usize = 1024 * 1024;

/// The first refill of a reader reading from a file's tip ([`Reader::read_from_tip`]).
const TIP_CHUNK: usize = 4 * 1024;

/// Bytes read by [`Reader::read_at`] in its first storage read (header and, usually, payload).
const READ_AT_FIRST: u64 = 4096;

/// Default cap on a record's stored and decompressed size: 256 MiB plus room for headers.
pub const DEFAULT_MAX_RECORD_SIZE: u64 = 256 * 1024 * 1024 + 64 * 1024;

/// Options for [`Reader`].
#[derive(Debug, Clone)]
pub struct ReaderOptions {
    /// Largest stored or decompressed record accepted; larger ones are
    /// [`crate::Error::RecordTooLarge`].
    pub max_record_size: u64,
    /// Verify payload checksums (ShaleDB format). Header checksums are always verified.
    pub verify_checksums: bool,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            max_record_size: DEFAULT_MAX_RECORD_SIZE,
            verify_checksums: true,
        }
    }
}

/// A record borrowed from the reader's buffer, valid until the next call on the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Offset of the record's header in the file.
    pub offset: u64,
    /// Offset just past the record (where the next one starts).
    pub next_offset: u64,
    /// The record's bytes, or `None` for a nil record.
    pub data: Option<&'a [u8]>,
}

/// A record read at an offset, owning its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedRecord {
    /// Offset of the record's header in the file.
    pub offset: u64,
    /// Offset just past the record.
    pub next_offset: u64,
    /// The record's bytes, or `None` for a nil record.
    pub data: Option<Vec<u8>>,
}

/// Reads and checks the 8-byte file header of `file`: its version and file-wide compression
/// (`None` for ShaleDB files). Errors: `Corruption` (shorter than 8 bytes),
/// `VersionUnsupported` (unknown or newer version, or ShaleDB header flags this code does not
/// know), `UnknownCompression` (go-sstables code above 3).
pub fn read_file_header(file: &FileHandle) -> Result<(Version, Compression)> {
    let mut h = [0u8; FILE_HEADER_LEN as usize];
    let n = read_full(file, 0, &mut h)?;
    if n < h.len() {
        return Err(Error::corruption(
            file.name(),
            0,
            format!("file is {n} bytes, shorter than the 8-byte RecordIO file header"),
        ));
    }
    let [a, b, c, d, e, f, g, k] = h;
    let version = u32::from_le_bytes([a, b, c, d]);
    let word = u32::from_le_bytes([e, f, g, k]);
    let unsupported = || Error::VersionUnsupported {
        file: file.name().to_owned(),
        version,
    };
    if (1..=4).contains(&version) {
        let comp = go_compression(word).ok_or_else(|| Error::UnknownCompression {
            file: file.name().to_owned(),
            code: word,
        })?;
        return Ok((Version::Go(version), comp));
    }
    if version & 0xFFFF_0000 == SHALE_MARKER {
        let v = version & 0xFFFF;
        // Non-zero flags announce a feature this code does not know: refuse like a newer version.
        if v == 0 || v > SHALE_VERSION || word != 0 {
            return Err(unsupported());
        }
        return Ok((Version::Shale(v), Compression::None));
    }
    Err(unsupported())
}

/// Reads into `buf` at `offset` until full or the end of the file; returns the bytes read.
fn read_full(file: &FileHandle, offset: u64, buf: &mut [u8]) -> Result<usize> {
    let mut done = 0usize;
    while let Some(rest) = buf.get_mut(done..) {
        if rest.is_empty() {
            break;
        }
        let n = file.read_at(offset + done as u64, rest)?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
}

/// The parts of a reader that do not change while reading.
#[derive(Debug)]
struct Source {
    file: FileHandle,
    version: Version,
    compression: Compression,
    options: ReaderOptions,
    /// File size when opened (the end for [`Reader::read_at`]).
    size: u64,
}

/// Where a decoded record's bytes are.
enum Payload {
    Nil,
    /// In the stored payload (not compressed).
    Stored,
    /// In the decompression buffer.
    Decompressed,
}

impl Source {
    fn name(&self) -> &str {
        self.file.name()
    }

    fn torn(&self, valid_up_to: u64) -> Error {
        Error::TornTail {
            file: self.name().to_owned(),
            valid_up_to,
        }
    }

    /// Whether every byte in `from..end` is zero (true when the range is empty).
    fn rest_is_zero(&self, from: u64, end: u64) -> Result<bool> {
        let mut pos = from;
        let mut chunk = vec![0u8; 64 * 1024];
        while pos < end {
            let want = usize::try_from(end - pos)
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            let Some(dst) = chunk.get_mut(..want) else {
                break;
            };
            let n = self.file.read_at(pos, dst)?;
            if n == 0 {
                break;
            }
            if dst.get(..n).is_some_and(|b| b.iter().any(|&x| x != 0)) {
                return Ok(false);
            }
            pos += n as u64;
        }
        Ok(true)
    }

    /// Turns a header decoding failure at `offset` into the result the module doc describes:
    /// `Ok(())` is a clean end (go-sstables zero padding, sequential reads only).
    fn header_failure(
        &self,
        e: HeaderError,
        offset: u64,
        end: u64,
        sequential: bool,
    ) -> Result<()> {
        let shale = matches!(self.version, Version::Shale(_));
        match e {
            HeaderError::Incomplete => Err(self.torn(offset)),
            HeaderError::BadMagic => {
                let padding_rule = match self.version {
                    Version::Go(v) => sequential && v >= 2,
                    Version::Shale(_) => true,
                };
                if padding_rule && self.rest_is_zero(offset, end)? {
                    return if shale {
                        Err(self.torn(offset))
                    } else {
                        Ok(())
                    };
                }
                Err(Error::MagicMismatch {
                    file: self.name().to_owned(),
                    offset,
                })
            }
            HeaderError::Checksum {
                stored,
                computed,
                header_len,
            } => {
                if shale && self.rest_is_zero(offset.saturating_add(header_len as u64), end)? {
                    return Err(self.torn(offset));
                }
                Err(Error::HeaderChecksumMismatch {
                    file: self.name().to_owned(),
                    offset,
                    stored,
                    computed,
                })
            }
            HeaderError::Invalid(reason) => Err(Error::corruption(self.name(), offset, reason)),
            HeaderError::UnknownCompression(code) => Err(Error::corruption(
                self.name(),
                offset,
                format!("reserved compression code {code} in record flags"),
            )),
        }
    }

    /// Checks a decoded header's sizes; returns the record's total length (header + payload).
    fn record_len(&self, h: &RecordHeader, offset: u64, end: u64) -> Result<u64> {
        let limit = self.options.max_record_size;
        for size in [h.stored_len, h.raw_len] {
            if size > limit {
                return Err(Error::RecordTooLarge {
                    file: self.name().to_owned(),
                    offset,
                    size,
                    limit,
                });
            }
        }
        let total = (h.header_len as u64)
            .checked_add(h.stored_len)
            .ok_or_else(|| self.torn(offset))?;
        match offset.checked_add(total) {
            Some(next) if next <= end => Ok(total),
            _ => Err(self.torn(offset)),
        }
    }

    /// Verifies the payload checksum and decompresses `stored` into `out` as needed.
    fn decode(
        &self,
        h: &RecordHeader,
        offset: u64,
        end: u64,
        stored: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Payload> {
        if let (Some(expected), true) = (h.payload_crc, self.options.verify_checksums) {
            let computed = crc32c::crc32c(stored);
            if computed != expected {
                let next = offset
                    .saturating_add(h.header_len as u64)
                    .saturating_add(h.stored_len);
                if self.rest_is_zero(next, end)? {
                    return Err(self.torn(offset));
                }
                return Err(Error::ChecksumMismatch {
                    file: self.name().to_owned(),
                    offset,
                    stored: expected,
                    computed,
                });
            }
        }
        if h.nil {
            return Ok(Payload::Nil);
        }
        if h.compression == Compression::None {
            return Ok(Payload::Stored);
        }
        h.compression.require_supported(self.name())?;
        compression::decompress(h.compression, stored, h.raw_len, out)
            .map_err(|reason| Error::corruption(self.name(), offset, reason))?;
        Ok(Payload::Decompressed)
    }

    /// Decodes a whole record at `offset` from `bytes` (header + payload of a known length).
    fn owned(&self, offset: u64, bytes: Vec<u8>, end: u64) -> Result<Option<OwnedRecord>> {
        let h = match parse_header(self.version, self.compression, &bytes) {
            Ok(h) => h,
            Err(e) => {
                self.header_failure(e, offset, end, false)?;
                return Ok(None);
            }
        };
        let total = self.record_len(&h, offset, end)?;
        let mut bytes = bytes;
        let have = bytes.len() as u64;
        if total > have {
            // The first read held the header only: read the payload (bounded by the file).
            let len = usize::try_from(total).map_err(|_| self.torn(offset))?;
            bytes.resize(len, 0);
            let tail = bytes.get_mut(have as usize..).unwrap_or_default();
            let n = read_full(&self.file, offset + have, tail)?;
            if (n as u64) < total - have {
                return Err(self.torn(offset));
            }
        }
        bytes.truncate(total as usize);
        let mut out = Vec::new();
        let payload = bytes.get(h.header_len..).unwrap_or_default();
        let data = match self.decode(&h, offset, end, payload, &mut out)? {
            Payload::Nil => None,
            Payload::Stored => {
                bytes.drain(..h.header_len);
                Some(bytes)
            }
            Payload::Decompressed => Some(out),
        };
        Ok(Some(OwnedRecord {
            offset,
            next_offset: offset + total,
            data,
        }))
    }
}

/// Reads one RecordIO file.
#[derive(Debug)]
pub struct Reader {
    src: Source,
    /// Where sequential reading stops (the file size, or [`Reader::set_limit`]).
    end: u64,
    /// Offset of the next record for [`Reader::read_next`].
    pos: u64,
    /// Bytes of the file from `buf_off`.
    buf: Vec<u8>,
    buf_off: u64,
    /// Decompression output of the last compressed record.
    out: Vec<u8>,
    /// Bytes the next refill reads at least.
    read_ahead: usize,
    /// [`Reader::read_from_tip`] was called.
    tip: bool,
}

impl Reader {
    /// Opens `file`: reads and checks the file header. Errors: `VersionUnsupported`,
    /// `UnknownCompression`, `Corruption` (header too short).
    pub fn open(file: FileHandle, options: ReaderOptions) -> Result<Reader> {
        let (version, compression) = read_file_header(&file)?;
        Reader::assuming(file, version, compression, options)
    }

    /// Opens `file` as a file of `version` and `compression` without reading its file header
    /// (for a file whose header is damaged, to look for intact records after it).
    pub fn assuming(
        file: FileHandle,
        version: Version,
        compression: Compression,
        options: ReaderOptions,
    ) -> Result<Reader> {
        let size = file.size()?;
        Ok(Reader {
            src: Source {
                file,
                version,
                compression,
                options,
                size,
            },
            end: size,
            pos: FILE_HEADER_LEN,
            buf: Vec::new(),
            buf_off: FILE_HEADER_LEN,
            out: Vec::new(),
            read_ahead: CHUNK,
            tip: false,
        })
    }

    /// Makes this a reader of a file still being written, read at its tip again and again (a
    /// live write-ahead log read by the change feed): refills start at 4 KiB (doubling as
    /// reading goes on, up to the usual 1 MiB) rather than reading ahead into preallocated
    /// space, and a header that does not parse (preallocated zeros, a record still being
    /// written) ends sequential reading as [`crate::Error::TornTail`] at once, without
    /// reading the rest of the file to tell zero padding from damage.
    pub fn read_from_tip(&mut self) {
        self.tip = true;
        self.read_ahead = TIP_CHUNK;
    }

    /// Sees the file as it is now: its current size becomes the end (replacing
    /// [`Reader::set_limit`]'s), and what was read ahead is read again. For a file that grew
    /// since (with [`Reader::read_from_tip`]).
    pub fn refresh(&mut self) -> Result<()> {
        let size = self.src.file.size()?;
        self.src.size = size;
        self.end = size;
        self.buf.clear();
        self.buf_off = self.pos;
        if self.tip {
            self.read_ahead = TIP_CHUNK;
        }
        Ok(())
    }

    /// The file's format version.
    pub fn version(&self) -> Version {
        self.src.version
    }

    /// The file-wide compression (go-sstables formats); `None` for the ShaleDB format, whose
    /// compression is per record.
    pub fn file_compression(&self) -> Compression {
        self.src.compression
    }

    /// The file's size when it was opened.
    pub fn size(&self) -> u64 {
        self.src.size
    }

    /// The offset of the record [`Reader::read_next`] reads next (after a torn tail or an
    /// error: the offset of the damaged record).
    pub fn offset(&self) -> u64 {
        self.pos
    }

    /// Reads the next record. `Ok(None)` at a clean end of file. A record cut short by the end
    /// of the file is [`crate::Error::TornTail`] naming where valid data ends; damage with
    /// data after it is a typed corruption error naming the offset (see the module doc).
    pub fn read_next(&mut self) -> Result<Option<Record<'_>>> {
        let offset = self.pos;
        if offset > self.end {
            return Err(Error::InvalidArgument(format!(
                "read position {offset} is past the end {} of {:?}",
                self.end,
                self.src.name()
            )));
        }
        let avail = self.fill(MAX_HEADER_LEN as u64)?;
        if avail == 0 {
            return Ok(None);
        }
        let lo = (offset - self.buf_off) as usize;
        let head = self.buf.get(lo..lo + avail).unwrap_or_default();
        let h = match parse_header(self.src.version, self.src.compression, head) {
            Ok(h) => h,
            Err(_) if self.tip => return Err(self.src.torn(offset)),
            Err(e) => {
                self.src.header_failure(e, offset, self.end, true)?;
                self.pos = self.end;
                return Ok(None);
            }
        };
        let total = self.src.record_len(&h, offset, self.end)?;
        let total_usize = usize::try_from(total).map_err(|_| self.src.torn(offset))?;
        if self.fill(total)? < total_usize {
            return Err(self.src.torn(offset));
        }
        let lo = (offset - self.buf_off) as usize;
        let stored = self
            .buf
            .get(lo + h.header_len..lo + total_usize)
            .unwrap_or_default();
        let kind = self
            .src
            .decode(&h, offset, self.end, stored, &mut self.out)?;
        self.pos = offset + total;
        let data = match kind {
            Payload::Nil => None,
            Payload::Stored => Some(stored),
            Payload::Decompressed => Some(&self.out[..]),
        };
        Ok(Some(Record {
            offset,
            next_offset: offset + total,
            data,
        }))
    }

    /// Makes `want` bytes from `self.pos` available in `buf` (fewer only at the end); returns
    /// how many are. Never reads past `end`, so lengths from the file cannot grow the buffer
    /// beyond what the file holds.
    fn fill(&mut self, want: u64) -> Result<usize> {
        let want = want.min(self.end.saturating_sub(self.pos));
        let want = usize::try_from(want).unwrap_or(usize::MAX);
        let buf_end = self.buf_off + self.buf.len() as u64;
        if self.pos < self.buf_off || self.pos > buf_end {
            self.buf.clear();
            self.buf_off = self.pos;
        }
        let lo = (self.pos - self.buf_off) as usize;
        let avail = self.buf.len() - lo;
        if avail >= want {
            return Ok(want);
        }
        // Move the unread bytes to the front, then read at least a chunk behind them.
        self.buf.copy_within(lo.., 0);
        self.buf.truncate(avail);
        self.buf_off = self.pos;
        let room = usize::try_from(self.end - self.buf_off).unwrap_or(usize::MAX);
        let target = want.max(self.read_ahead).min(room);
        self.read_ahead = (self.read_ahead * 2).min(CHUNK);
        self.buf.resize(target, 0);
        let tail = self.buf.get_mut(avail..).unwrap_or_default();
        let n = read_full(&self.src.file, self.buf_off + avail as u64, tail)?;
        self.buf.truncate(avail + n);
        if self.buf.len() < target {
            // The file is shorter than the limit said: it ends here.
            self.end = self.buf_off + self.buf.len() as u64;
        }
        Ok(want.min(self.buf.len()))
    }

    /// Moves sequential reading to `offset`, which must be a record boundary.
    pub fn seek(&mut self, offset: u64) {
        self.pos = offset;
    }

    /// Stops sequential reading at `end` (exclusive) instead of the end of the file, as if the
    /// file ended there.
    pub fn set_limit(&mut self, end: u64) {
        self.end = end;
    }

    /// Reads the record whose header starts at `offset`. `Ok(None)` when `offset` is exactly the
    /// end of the file; past the end is an error. The go-sstables zero-padding rule does not
    /// apply here (as in go-sstables' mmap reader): padding gives `MagicMismatch`.
    pub fn read_at(&self, offset: u64) -> Result<Option<OwnedRecord>> {
        let size = self.src.size;
        if offset == size {
            return Ok(None);
        }
        self.check_in_file(offset)?;
        let first = (size - offset).min(READ_AT_FIRST) as usize;
        let mut bytes = vec![0u8; first];
        let n = read_full(&self.src.file, offset, &mut bytes)?;
        bytes.truncate(n);
        self.src.owned(offset, bytes, size)
    }

    /// Like [`Reader::read_at`] when the record's total length (header included, as
    /// `next_offset - offset`) is known, e.g. from an index: one storage read. A `len` that is
    /// not the record's length is [`Error::Corruption`].
    pub fn read_at_sized(&self, offset: u64, len: u64) -> Result<OwnedRecord> {
        self.check_sized(offset, len)?;
        let mut bytes = vec![0u8; len as usize];
        let n = read_full(&self.src.file, offset, &mut bytes)?;
        bytes.truncate(n);
        self.sized_record(offset, len, bytes)
    }

    /// Up to `len` bytes of the file from `offset` on (fewer at its end), read with as few
    /// storage calls as the storage allows: what a readahead buffer holds, to be decoded by
    /// [`Reader::record_in`] one record at a time.
    pub fn read_span(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.check_in_file(offset)?;
        let len = len.min(self.src.size - offset);
        let mut bytes = vec![0u8; usize::try_from(len).map_err(|_| self.src.torn(offset))?];
        let n = read_full(&self.src.file, offset, &mut bytes)?;
        bytes.truncate(n);
        Ok(bytes)
    }

    /// The record of `len` bytes at `offset`, decoded from `bytes`, the file's bytes from
    /// `offset` on as read earlier by [`Reader::read_span`] (at least `len` of them, or the
    /// record is torn): the checks of [`Reader::read_at_sized`], checksum included.
    pub fn record_in(&self, offset: u64, len: u64, bytes: &[u8]) -> Result<OwnedRecord> {
        self.check_sized(offset, len)?;
        let end = usize::try_from(len).unwrap_or(usize::MAX).min(bytes.len());
        let held = bytes.get(..end).unwrap_or_default();
        self.sized_record(offset, len, held.to_vec())
    }

    /// `len` as a record length at `offset`: not zero, within the file and the largest record.
    fn check_sized(&self, offset: u64, len: u64) -> Result<()> {
        let size = self.src.size;
        self.check_in_file(offset)?;
        let max = self
            .src
            .options
            .max_record_size
            .saturating_add(MAX_HEADER_LEN as u64);
        if len == 0 || len > size - offset || len > max {
            return Err(Error::corruption(
                self.src.name(),
                offset,
                format!("record length {len} does not fit the file of {size} bytes"),
            ));
        }
        Ok(())
    }

    /// Decodes the record at `offset` from `bytes` (the `len` bytes read there, fewer if the
    /// file ended), which must be exactly `len` long.
    fn sized_record(&self, offset: u64, len: u64, bytes: Vec<u8>) -> Result<OwnedRecord> {
        let name = self.src.name();
        let rec = self
            .src
            .owned(offset, bytes, self.src.size)?
            .ok_or_else(|| Error::corruption(name, offset, "no record at this offset"))?;
        if rec.next_offset - offset != len {
            return Err(Error::corruption(
                name,
                offset,
                format!(
                    "record is {} bytes, not {len} as expected",
                    rec.next_offset - offset
                ),
            ));
        }
        Ok(rec)
    }

    fn check_in_file(&self, offset: u64) -> Result<()> {
        if offset >= self.src.size {
            return Err(Error::corruption(
                self.src.name(),
                offset,
                format!(
                    "record offset past the end of the file ({} bytes)",
                    self.src.size
                ),
            ));
        }
        Ok(())
    }
}
