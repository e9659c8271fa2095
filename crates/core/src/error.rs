//! The one error type of the crate.
//!
//! Contract: data read from disk or passed in by a caller never causes a panic; it yields one of
//! these variants. Errors about damaged data name the file and the byte offset.

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error ShaleDB reports. New variants may be added in minor versions.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system or storage-backend call failed.
    #[error("I/O error during {op} on {file:?}: {source}")]
    Io {
        /// The operation, e.g. `"read"`, `"write"`, `"sync"`.
        op: &'static str,
        /// The file name (relative to the storage root), or `""` for directory operations.
        file: String,
        /// The underlying cause.
        source: std::io::Error,
    },

    /// The named file does not exist.
    #[error("file {file:?} not found")]
    NotFound {
        /// The missing file.
        file: String,
    },

    /// A file that must be new already exists.
    #[error("file {file:?} already exists")]
    AlreadyExists {
        /// The existing file.
        file: String,
    },

    /// Another handle or process holds the lock.
    #[error("{file:?} is locked by {holder}; close the other handle or process first")]
    Locked {
        /// The lock file.
        file: String,
        /// Who holds it, as far as known (e.g. `"pid 1234"`).
        holder: String,
    },

    /// Data on disk is damaged: it can never have been written this way by a correct writer.
    #[error("corruption in {file:?} at offset {offset}: {reason}")]
    Corruption {
        /// The damaged file.
        file: String,
        /// Byte offset of the damaged structure.
        offset: u64,
        /// What was wrong.
        reason: String,
    },

    /// The file ends inside a record: a write was cut short (a torn tail). Everything before
    /// `valid_up_to` is intact; a log may be truncated there.
    #[error("torn tail in {file:?}: valid data ends at offset {valid_up_to}")]
    TornTail {
        /// The file.
        file: String,
        /// Offset just past the last intact record.
        valid_up_to: u64,
    },

    /// The file's format version is not one this code can read (for example, newer).
    #[error("{file:?} has format version {version:#x}, which this version of ShaleDB cannot read")]
    VersionUnsupported {
        /// The file.
        file: String,
        /// The version found.
        version: u32,
    },

    /// The compression code in a header is not defined by any format version.
    #[error("{file:?} declares unknown compression type {code}")]
    UnknownCompression {
        /// The file.
        file: String,
        /// The code found.
        code: u32,
    },

    /// The compression is defined but not supported by this build.
    #[error("{file:?} uses compression {compression}, which this build does not support")]
    UnsupportedCompression {
        /// The file.
        file: String,
        /// The compression's name.
        compression: &'static str,
    },

    /// A record header did not start with the magic number (go-sstables formats).
    #[error("magic number mismatch in {file:?} at offset {offset}")]
    MagicMismatch {
        /// The file.
        file: String,
        /// Offset of the record header.
        offset: u64,
    },

    /// A record header's checksum does not match its bytes.
    #[error("header checksum mismatch in {file:?} at offset {offset}: stored {stored:#x}, computed {computed:#x}")]
    HeaderChecksumMismatch {
        /// The file.
        file: String,
        /// Offset of the record header.
        offset: u64,
        /// Checksum stored in the file.
        stored: u32,
        /// Checksum computed from the bytes read.
        computed: u32,
    },

    /// A record's payload checksum does not match its bytes.
    #[error("checksum mismatch in {file:?} at offset {offset}: stored {stored:#x}, computed {computed:#x}")]
    ChecksumMismatch {
        /// The file.
        file: String,
        /// Offset of the record header.
        offset: u64,
        /// Checksum stored in the file.
        stored: u32,
        /// Checksum computed from the bytes read.
        computed: u32,
    },

    /// A record (stored or decompressed) is larger than the configured limit.
    #[error("record in {file:?} at offset {offset} is {size} bytes, over the limit of {limit}")]
    RecordTooLarge {
        /// The file.
        file: String,
        /// Offset of the record header.
        offset: u64,
        /// The size found or claimed.
        size: u64,
        /// The limit in force (`max_record_size`).
        limit: u64,
    },

    /// A caller passed an argument that breaks the function's contract.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The object was closed and can no longer be used.
    #[error("closed: {0}")]
    Closed(String),

    /// A transaction's commit found that a key it read was written by another writer after
    /// the transaction's snapshot. Nothing was written; retry the transaction.
    #[error("transaction conflict on a key it read; nothing was written, retry the transaction")]
    Conflict,

    /// A queue push was refused: the queue is at its `max_items` or `max_bytes` limit and its
    /// policy is to reject new items. Nothing was written.
    #[error("queue {queue:?} is full; nothing was written")]
    QueueFull {
        /// The queue's name.
        queue: String,
    },

    /// An ack, release or extend named a lease the queue does not hold: the item was never
    /// reserved by this group, or that reservation was already acked, or released by its
    /// holder (and the item not delivered again since).
    #[error("queue {queue:?} holds no reservation of item {id}: never made, or already acked or released")]
    UnknownReservation {
        /// The queue's name.
        queue: String,
        /// The item's id.
        id: u64,
    },

    /// A topic read or subscription started outside the records the topic holds: below its
    /// first retained offset (retention dropped them) or past its next offset.
    #[error("offset {offset} of topic {topic:?} is out of range: it holds offsets {first} to {next} (exclusive)")]
    OffsetOutOfRange {
        /// The topic's name.
        topic: String,
        /// The offset asked for.
        offset: u64,
        /// The first offset the topic holds now.
        first: u64,
        /// The offset the next record will get.
        next: u64,
    },

    /// An ack, release or extend named a lease that is no longer held: it ran out first (the
    /// item went back), or the item has been delivered again since.
    #[error("the lease on item {id} of queue {queue:?} is no longer held: it ran out, or the item was delivered again")]
    LeaseExpired {
        /// The queue's name.
        queue: String,
        /// The item's id.
        id: u64,
    },

    /// A change feed was asked to start below the oldest batch the database still keeps:
    /// those batches were flushed and their logs removed (no change cursor, age or size limit
    /// held them). `oldest` is the sequence number the retained changes start at.
    #[error("changes since sequence number {since} are no longer kept: the oldest kept starts at {oldest}")]
    ChangesTruncated {
        /// The sequence number asked for.
        since: u64,
        /// The first sequence number of the oldest batch kept.
        oldest: u64,
    },

    /// A follower was given a change that does not continue what it holds: `expected` is the
    /// sequence number the next change must start at. Nothing was written.
    #[error("change gap: the next change must start at sequence number {expected}, not {got}; nothing was written")]
    ChangeGap {
        /// The sequence number the next change must start at.
        expected: u64,
        /// The sequence number the change starts at.
        got: u64,
    },

    /// A write to a database opened as a follower ([`crate::Options::follower`]): only
    /// [`crate::Db::apply_change`] writes to it. Nothing was written.
    #[error("read only: {0}")]
    ReadOnly(String),

    /// An earlier write failed in a way that may have left data undurable (a failed fsync, a
    /// full disk); every later write fails with this error. Close and reopen the database to
    /// recover from the write-ahead log.
    #[error("database is poisoned by an earlier failure ({cause}); close and reopen it")]
    Poisoned {
        /// The original failure.
        cause: String,
        /// Whether that failure was running out of space (a full disk, an exhausted browser
        /// storage quota): then [`Error::code`] is `"QUOTA"`, which says what to do about it.
        storage_full: bool,
    },
}

impl Error {
    /// A stable, upper-case code for this error, shared with the JavaScript API
    /// (`"IO"`, `"CORRUPTION"`, `"LOCKED"`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull => "QUOTA",
            Error::Io { .. } => "IO",
            Error::NotFound { .. } => "NOT_FOUND",
            Error::AlreadyExists { .. } => "ALREADY_EXISTS",
            Error::Locked { .. } => "LOCKED",
            Error::Corruption { .. }
            | Error::TornTail { .. }
            | Error::MagicMismatch { .. }
            | Error::HeaderChecksumMismatch { .. }
            | Error::ChecksumMismatch { .. } => "CORRUPTION",
            Error::VersionUnsupported { .. } => "VERSION_UNSUPPORTED",
            Error::UnknownCompression { .. } | Error::UnsupportedCompression { .. } => {
                "UNSUPPORTED_COMPRESSION"
            }
            Error::RecordTooLarge { .. } => "RECORD_TOO_LARGE",
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::Closed(_) => "CLOSED",
            Error::Conflict => "CONFLICT",
            Error::QueueFull { .. } => "QUEUE_FULL",
            Error::UnknownReservation { .. } => "UNKNOWN_RESERVATION",
            Error::LeaseExpired { .. } => "LEASE_EXPIRED",
            Error::OffsetOutOfRange { .. } => "OFFSET_OUT_OF_RANGE",
            Error::ChangesTruncated { .. } => "CHANGES_TRUNCATED",
            Error::ChangeGap { .. } => "CHANGE_GAP",
            Error::ReadOnly(_) => "READ_ONLY",
            Error::Poisoned {
                storage_full: true, ..
            } => "QUOTA",
            Error::Poisoned { .. } => "POISONED",
        }
    }

    /// Builds an [`Error::Io`].
    pub fn io(op: &'static str, file: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            op,
            file: file.into(),
            source,
        }
    }

    /// Builds an [`Error::Corruption`].
    pub fn corruption(file: impl Into<String>, offset: u64, reason: impl fmt::Display) -> Self {
        Error::Corruption {
            file: file.into(),
            offset,
            reason: reason.to_string(),
        }
    }
}
