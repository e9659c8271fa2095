//! RecordIO reader: go-sstables versions 1..=4 and ShaleDB's own format.

use crate::recordio::{Compression, Version};
use crate::storage::FileHandle;
use crate::Result;

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
            max_record_size: crate::recordio::DEFAULT_MAX_RECORD_SIZE,
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

/// Reads one RecordIO file.
#[derive(Debug)]
pub struct Reader {
    _file: FileHandle,
}

impl Reader {
    /// Opens `file`: reads and checks the file header. Errors: `VersionUnsupported`,
    /// `UnknownCompression`, `Corruption` (header too short).
    pub fn open(file: FileHandle, options: ReaderOptions) -> Result<Reader> {
        let _ = (file, options);
        todo!("recordio reader")
    }

    /// The file's format version.
    pub fn version(&self) -> Version {
        todo!()
    }

    /// The file-wide compression (go-sstables formats); `None` for the ShaleDB format, whose
    /// compression is per record.
    pub fn file_compression(&self) -> Compression {
        todo!()
    }

    /// Reads the next record. `Ok(None)` at a clean end of file. A record cut short by the end
    /// of the file is [`crate::Error::TornTail`] naming where valid data ends; damage with
    /// data after it is a typed corruption error naming the offset.
    pub fn read_next(&mut self) -> Result<Option<Record<'_>>> {
        todo!()
    }

    /// Moves sequential reading to `offset`, which must be a record boundary.
    pub fn seek(&mut self, offset: u64) {
        let _ = offset;
        todo!()
    }

    /// Stops sequential reading at `end` (exclusive) instead of the end of the file, as if the
    /// file ended there.
    pub fn set_limit(&mut self, end: u64) {
        let _ = end;
        todo!()
    }

    /// Reads the record whose header starts at `offset`. `Ok(None)` when `offset` is exactly the
    /// end of the file; past the end is an error.
    pub fn read_at(&self, offset: u64) -> Result<Option<OwnedRecord>> {
        let _ = offset;
        todo!()
    }

    /// Like [`Reader::read_at`] when the record's total length (header included, as
    /// `next_offset - offset`) is known, e.g. from an index: one storage read.
    pub fn read_at_sized(&self, offset: u64, len: u64) -> Result<OwnedRecord> {
        let _ = (offset, len);
        todo!()
    }
}
