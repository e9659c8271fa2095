//! Buffered RecordIO writer.

use crate::recordio::Compression;
use crate::storage::FileHandle;
use crate::Result;

/// Which format a [`Writer`] produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriterFormat {
    /// ShaleDB's own format (the default): CRC-32C over every header and payload byte,
    /// compression chosen per record.
    #[default]
    Shale,
    /// go-sstables version 4, byte-identical to what go-sstables v1.7.0 writes; one compression
    /// for the whole file, given here. `Lzw` is refused.
    GoV4(Compression),
}

/// Options for [`Writer`].
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// The format written.
    pub format: WriterFormat,
    /// Compression applied by [`Writer::write`] in the `Shale` format (ignored for `GoV4`).
    pub compression: Compression,
    /// Bytes buffered before they are handed to the storage. 0 writes every record through.
    pub buffer_size: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            format: WriterFormat::Shale,
            compression: Compression::None,
            buffer_size: 4 * 1024 * 1024,
        }
    }
}

/// Appends records to one file. Records are buffered; [`Writer::flush`] hands them to the
/// storage (the OS), [`Writer::sync`] makes them durable. Dropping a writer without `flush`
/// loses the buffered records.
#[derive(Debug)]
pub struct Writer {
    _file: FileHandle,
}

impl Writer {
    /// Starts a new RecordIO file in `file` (which must be empty): writes the file header.
    pub fn new(file: FileHandle, options: WriterOptions) -> Result<Writer> {
        let _ = (file, options);
        todo!("recordio writer")
    }

    /// Appends `record` with the writer's default compression; returns the record's offset.
    pub fn write(&mut self, record: &[u8]) -> Result<u64> {
        let _ = record;
        todo!()
    }

    /// Appends a nil record (no value, distinct from an empty one); returns its offset.
    pub fn write_nil(&mut self) -> Result<u64> {
        todo!()
    }

    /// Appends `record` (`None` = nil) with `compression` (Shale format; for `GoV4` it must equal
    /// the file's compression, else [`crate::Error::InvalidArgument`]); returns its offset.
    pub fn write_with(&mut self, record: Option<&[u8]>, compression: Compression) -> Result<u64> {
        let _ = (record, compression);
        todo!()
    }

    /// Appends `record` and syncs; returns its offset once durable.
    pub fn write_sync(&mut self, record: &[u8]) -> Result<u64> {
        let _ = record;
        todo!()
    }

    /// The offset at which the next record will start (= the logical file size).
    pub fn offset(&self) -> u64 {
        todo!()
    }

    /// Hands buffered records to the storage.
    pub fn flush(&mut self) -> Result<()> {
        todo!()
    }

    /// Flushes, then makes everything written durable.
    pub fn sync(&mut self) -> Result<()> {
        todo!()
    }

    /// Flushes and returns the file handle and the final size.
    pub fn finish(self) -> Result<(FileHandle, u64)> {
        todo!()
    }
}
