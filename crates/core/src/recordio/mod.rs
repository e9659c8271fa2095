//! RecordIO: the one container format of every ShaleDB file.
//!
//! A RecordIO file is an 8-byte file header followed by records back to back. Each record is a
//! byte string, possibly empty, or *nil* (no value). The full byte layout of every version is in
//! `docs/FORMAT.md` and in [`format`](mod@format).
//!
//! - [`Reader`] reads go-sstables' versions 1 to 4 and ShaleDB's own format, sequentially
//!   ([`Reader::read_next`]) and at a record's offset ([`Reader::read_at`]).
//! - [`Writer`] writes ShaleDB's own format by default ([`WriterFormat::Shale`]: every byte of
//!   every record covered by CRC-32C, compression chosen per record), or go-sstables' version 4
//!   ([`WriterFormat::GoV4`]) for interchange.

pub mod compression;
pub mod format;
pub mod reader;
pub mod writer;

pub use compression::Compression;
pub use format::Version;
pub use reader::{OwnedRecord, Reader, ReaderOptions, Record, DEFAULT_MAX_RECORD_SIZE};
pub use writer::{Writer, WriterFormat, WriterOptions};
