//! What a topic is configured with, and the options of its operations.

use std::time::Duration;

/// A topic's configuration, stored with it. Opening a topic with other options replaces the
/// stored ones. Retention drops the oldest records when one of the limits is passed (checked at
/// each append and by [`crate::topic::Topic::apply_retention`]), but never records a consumer
/// group has not committed past, unless `retention_passes_groups`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicOptions {
    /// Keep records at most this long after their append.
    pub max_age: Option<Duration>,
    /// Keep at most this many bytes of records (keys, headers and values).
    pub max_bytes: Option<u64>,
    /// Keep at most this many records.
    pub max_records: Option<u64>,
    /// Let retention drop records a consumer group has not committed past.
    pub retention_passes_groups: bool,
}

/// Options of an append.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppendOptions {
    /// Wait until the records are on stable storage (fsync), not only handed to the OS.
    pub sync: bool,
}

/// Where a read or a subscription starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum From {
    /// This offset.
    Offset(u64),
    /// The first record the topic holds.
    Earliest,
    /// The next record appended (nothing already there).
    Latest,
    /// The first record appended at or after this time (milliseconds since the Unix epoch).
    Time(u64),
    /// A consumer group's committed offset (the earliest record if it committed none).
    Committed(String),
}

/// Limits of one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// At most this many records.
    pub limit: usize,
    /// At most about this many bytes (a read returns at least one record if there is one).
    pub max_bytes: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            limit: 1000,
            max_bytes: 4 << 20,
        }
    }
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
