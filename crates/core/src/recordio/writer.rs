//! Buffered RecordIO writer.
//!
//! Records are encoded straight into one buffer (header on the stack, payload copied once);
//! a record larger than the buffer is written through without copying. Compression reuses one
//! scratch buffer and one encoder. After any storage error the writer is poisoned: every later
//! call fails with [`Error::Closed`], since what reached the file is unknown.

use crate::recordio::compression::Compression;
use crate::recordio::compression::Compressor;
use crate::recordio::format::{
    self, go_code, shale_code, Version, FLAG_NIL, GO_MAGIC, MAX_HEADER_LEN, SHALE_MAGIC,
    SHALE_VERSION_WORD,
};
use crate::storage::FileHandle;
use crate::varint::put_uvarint;
use crate::{Error, Result};

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
    /// Shale format: a compressed form is stored only if it saves at least `1/N` of the
    /// record's size (LevelDB keeps a block compressed when it saves 1/8: `N = 8`). `0` keeps
    /// any compressed form that is smaller at all.
    pub min_saving_divisor: u32,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            format: WriterFormat::Shale,
            compression: Compression::None,
            buffer_size: 4 * 1024 * 1024,
            min_saving_divisor: 0,
        }
    }
}

/// The compressed size below which a compressed form of a `len`-byte record is kept: it must
/// save at least `len / divisor` bytes (any saving when `divisor` is 0).
fn kept_if_below(len: usize, divisor: u32) -> usize {
    match divisor {
        0 => len,
        d => len - len / d as usize,
    }
}

/// Records at least this large skip the buffer: written from the caller's bytes, they cost the
/// kernel's copy only, from memory the caller just touched.
const WRITE_THROUGH_MIN: usize = 256 * 1024;

/// Appends records to one file. Records are buffered; [`Writer::flush`] hands them to the
/// storage (the OS), [`Writer::sync`] makes them durable. Dropping a writer without `flush`
/// loses the buffered records.
#[derive(Debug)]
pub struct Writer {
    file: FileHandle,
    format: WriterFormat,
    compression: Compression,
    buffer_size: usize,
    min_saving_divisor: u32,
    /// Encoded records not yet handed to the storage; `buf[0]` goes to `flushed`.
    buf: Vec<u8>,
    /// File offset up to which bytes were handed to the storage.
    flushed: u64,
    scratch: Vec<u8>,
    compressor: Compressor,
    poisoned: bool,
}

impl Writer {
    /// Starts a new RecordIO file in `file` (which must be empty): writes the file header.
    /// Errors: `InvalidArgument` if the file is not empty or the format asks for LZW;
    /// `UnsupportedCompression` if it asks for gzip in a build without the `gzip` feature.
    pub fn new(file: FileHandle, options: WriterOptions) -> Result<Writer> {
        let size = file.size()?;
        if size != 0 {
            return Err(Error::InvalidArgument(format!(
                "Writer::new needs an empty file; {:?} holds {size} bytes (use Writer::append)",
                file.name()
            )));
        }
        let mut w = Writer::with_state(file, options, 0)?;
        let header = match w.format {
            WriterFormat::Shale => [SHALE_VERSION_WORD, 0],
            WriterFormat::GoV4(c) => [4, go_code(c)],
        };
        w.buf.extend_from_slice(&header[0].to_le_bytes());
        w.buf.extend_from_slice(&header[1].to_le_bytes());
        if w.buffer_size == 0 {
            w.flush()?;
        }
        Ok(w)
    }

    /// Reopens an existing RecordIO file to append records at its end. The file header must
    /// match `options.format` (ShaleDB v1, or go-sstables v4 with the same compression), else
    /// `VersionUnsupported`/`InvalidArgument`. An empty file is started as by [`Writer::new`].
    /// The caller must have cut any torn tail first (read it with a
    /// [`crate::recordio::Reader`], then `truncate` to `valid_up_to`).
    pub fn append(file: FileHandle, options: WriterOptions) -> Result<Writer> {
        let size = file.size()?;
        if size == 0 {
            return Writer::new(file, options);
        }
        let (version, comp) = super::reader::read_file_header(&file)?;
        let ok = match (options.format, version) {
            (WriterFormat::Shale, Version::Shale(v)) => v == format::SHALE_VERSION,
            (WriterFormat::GoV4(c), Version::Go(4)) => c == comp,
            _ => false,
        };
        if !ok {
            return Err(Error::InvalidArgument(format!(
                "cannot append {:?} records to {:?}, a {version:?} file with compression {}",
                options.format,
                file.name(),
                comp.name()
            )));
        }
        Writer::with_state(file, options, size)
    }

    fn with_state(file: FileHandle, options: WriterOptions, flushed: u64) -> Result<Writer> {
        if let WriterFormat::GoV4(Compression::Lzw) = options.format {
            return Err(Error::InvalidArgument(
                "writing go-sstables LZW files is not supported".into(),
            ));
        }
        if options.compression == Compression::Lzw && options.format == WriterFormat::Shale {
            return Err(Error::InvalidArgument(
                "the ShaleDB format has no LZW compression".into(),
            ));
        }
        // LZW is refused above whatever the build; gzip needs the `gzip` feature.
        if let WriterFormat::GoV4(c) = options.format {
            c.require_supported(file.name())?;
        }
        options.compression.require_supported(file.name())?;
        let cap = options.buffer_size.min(64 * 1024 * 1024);
        Ok(Writer {
            file,
            format: options.format,
            compression: options.compression,
            buffer_size: options.buffer_size,
            min_saving_divisor: options.min_saving_divisor,
            buf: Vec::with_capacity(cap.max(64)),
            flushed,
            scratch: Vec::new(),
            compressor: Compressor::new(),
            poisoned: false,
        })
    }

    /// Appends `record` with the writer's default compression; returns the record's offset.
    pub fn write(&mut self, record: &[u8]) -> Result<u64> {
        let c = self.default_compression();
        self.write_with(Some(record), c)
    }

    /// Appends a nil record (no value, distinct from an empty one); returns its offset.
    pub fn write_nil(&mut self) -> Result<u64> {
        let c = self.default_compression();
        self.write_with(None, c)
    }

    fn default_compression(&self) -> Compression {
        match self.format {
            WriterFormat::Shale => self.compression,
            WriterFormat::GoV4(c) => c,
        }
    }

    /// Appends `record` (`None` = nil) with `compression` (Shale format; for `GoV4` it must equal
    /// the file's compression, else [`crate::Error::InvalidArgument`]); returns its offset.
    /// Gzip in a build without the `gzip` feature is [`crate::Error::UnsupportedCompression`].
    /// In the Shale format a compressed form is stored only if it is smaller than the record.
    pub fn write_with(&mut self, record: Option<&[u8]>, compression: Compression) -> Result<u64> {
        self.check_open()?;
        if compression != Compression::Lzw {
            // (LZW is refused below, whatever the build: it is never written.)
            compression.require_supported(self.file.name())?;
        }
        let offset = self.offset();
        let mut header = [0u8; MAX_HEADER_LEN];
        let mut n = 0usize;
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = (|| -> Result<()> {
            let payload: &[u8] = match self.format {
                WriterFormat::Shale => {
                    let code = shale_code(compression).ok_or_else(|| {
                        Error::InvalidArgument("the ShaleDB format has no LZW compression".into())
                    })?;
                    let (flags, payload, raw_len) = match record {
                        None => (FLAG_NIL, &[][..], None),
                        Some(r) if code == 0 || r.is_empty() => (0, r, None),
                        Some(r) => {
                            self.compressor
                                .compress(compression, r, &mut scratch)
                                .map_err(Error::InvalidArgument)?;
                            if scratch.len() < kept_if_below(r.len(), self.min_saving_divisor) {
                                (code, &scratch[..], Some(r.len() as u64))
                            } else {
                                (0, r, None)
                            }
                        }
                    };
                    header[0] = SHALE_MAGIC;
                    header[1] = flags;
                    n = 2;
                    put_uvarint(&mut header, &mut n, payload.len() as u64);
                    if let Some(raw) = raw_len {
                        put_uvarint(&mut header, &mut n, raw);
                    }
                    let pcrc = crc32c::crc32c(payload);
                    header[n..n + 4].copy_from_slice(&pcrc.to_le_bytes());
                    n += 4;
                    let hcrc = crc32c::crc32c(&header[..n]);
                    header[n..n + 4].copy_from_slice(&hcrc.to_le_bytes());
                    n += 4;
                    payload
                }
                WriterFormat::GoV4(file_comp) => {
                    if compression != file_comp {
                        return Err(Error::InvalidArgument(format!(
                            "go-sstables files have one compression ({}), not {}",
                            file_comp.name(),
                            compression.name()
                        )));
                    }
                    let raw = record.unwrap_or_default();
                    let (payload, clen): (&[u8], u64) = if file_comp == Compression::None {
                        (raw, 0)
                    } else {
                        self.compressor
                            .compress(file_comp, raw, &mut scratch)
                            .map_err(Error::InvalidArgument)?;
                        (&scratch[..], scratch.len() as u64)
                    };
                    put_uvarint(&mut header, &mut n, GO_MAGIC);
                    header[n] = u8::from(record.is_none());
                    n += 1;
                    put_uvarint(&mut header, &mut n, raw.len() as u64);
                    put_uvarint(&mut header, &mut n, clen);
                    let crc = crc32c::crc32c(&header[..n]);
                    put_uvarint(&mut header, &mut n, u64::from(crc));
                    // go-sstables writes no payload for a nil record, even when compressed.
                    if record.is_none() {
                        &[]
                    } else {
                        payload
                    }
                }
            };
            self.append_bytes(&header[..n], payload)
        })();
        self.scratch = scratch;
        result.map(|()| offset)
    }

    /// Shale format: appends one uncompressed record whose payload is `prefix` followed by
    /// `body`, without first joining them (a log record's small header before a large batch).
    /// Returns the record's offset. `InvalidArgument` for the go-sstables format.
    pub fn write_joined(&mut self, prefix: &[u8], body: &[u8]) -> Result<u64> {
        self.check_open()?;
        if self.format != WriterFormat::Shale {
            return Err(Error::InvalidArgument(
                "joined records are written in the ShaleDB format only".into(),
            ));
        }
        let offset = self.offset();
        let mut header = [0u8; MAX_HEADER_LEN];
        header[0] = SHALE_MAGIC;
        header[1] = 0;
        let mut n = 2;
        put_uvarint(&mut header, &mut n, (prefix.len() + body.len()) as u64);
        let pcrc = crc32c::crc32c_append(crc32c::crc32c(prefix), body);
        header[n..n + 4].copy_from_slice(&pcrc.to_le_bytes());
        n += 4;
        let hcrc = crc32c::crc32c(&header[..n]);
        header[n..n + 4].copy_from_slice(&hcrc.to_le_bytes());
        n += 4;
        self.append_parts(&[&header[..n], prefix, body])?;
        Ok(offset)
    }

    fn append_bytes(&mut self, header: &[u8], payload: &[u8]) -> Result<()> {
        self.append_parts(&[header, payload])
    }

    /// Appends the bytes of `parts` one after the other: into the buffer, or, for a record
    /// larger than the buffer, written through (no copy).
    fn append_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let through = total >= WRITE_THROUGH_MIN;
        if (through || self.buf.len() + total > self.buffer_size) && !self.buf.is_empty() {
            self.flush()?;
        }
        if through {
            // Large record: write through, no copy of the payload.
            let mut at = self.flushed;
            for part in parts {
                if let Err(e) = self.file.write_at(at, part) {
                    self.poisoned = true;
                    return Err(e);
                }
                at += part.len() as u64;
            }
            self.flushed = at;
            return Ok(());
        }
        for part in parts {
            self.buf.extend_from_slice(part);
        }
        if self.buf.len() >= self.buffer_size {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends `record` and syncs; returns its offset once durable.
    pub fn write_sync(&mut self, record: &[u8]) -> Result<u64> {
        let offset = self.write(record)?;
        self.sync()?;
        Ok(offset)
    }

    /// The offset at which the next record will start (= the logical file size).
    pub fn offset(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    /// Hands buffered records to the storage.
    pub fn flush(&mut self) -> Result<()> {
        self.check_open()?;
        if self.buf.is_empty() {
            return Ok(());
        }
        if let Err(e) = self.file.write_at(self.flushed, &self.buf) {
            self.poisoned = true;
            return Err(e);
        }
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Flushes, then makes everything written durable.
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        if let Err(e) = self.file.sync() {
            self.poisoned = true;
            return Err(e);
        }
        Ok(())
    }

    /// Flushes and returns the file handle and the final size.
    pub fn finish(mut self) -> Result<(FileHandle, u64)> {
        self.flush()?;
        let size = self.flushed;
        Ok((self.file, size))
    }

    fn check_open(&self) -> Result<()> {
        if self.poisoned {
            return Err(Error::Closed(format!(
                "RecordIO writer of {:?} failed earlier; its file state is unknown",
                self.file.name()
            )));
        }
        Ok(())
    }
}
