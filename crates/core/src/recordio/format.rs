//! Byte layouts of RecordIO versions (see `docs/FORMAT.md`, which is authoritative).
//!
//! TODO(recordio): document every version here, as in docs/FORMAT.md.

/// The format of a RecordIO file, as read from its file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// go-sstables version 1..=4 (`u32` LE in the file header).
    Go(u32),
    /// ShaleDB's own format, with its own version number (1 for the first release).
    Shale(u32),
}
