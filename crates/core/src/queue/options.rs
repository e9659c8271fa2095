//! What a queue is configured with, and the options of its operations.

use std::time::Duration;

/// What a push does when the queue is at its `max_items` or `max_bytes` limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WhenFull {
    /// Refuse the push with [`crate::Error::QueueFull`] (Kestrel's `NOT_STORED`).
    #[default]
    Reject,
    /// Drop the oldest items (for every group) to make room (Kestrel's `discardOldWhenFull`).
    DiscardOldest,
}

/// A queue's configuration, stored in the database with the queue. Opening a queue with other
/// options replaces the stored ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueOptions {
    /// Most items the queue holds (`None`: no limit).
    pub max_items: Option<u64>,
    /// Most bytes of values the queue holds (`None`: no limit).
    pub max_bytes: Option<u64>,
    /// What a push does at a limit.
    pub when_full: WhenFull,
    /// After this many deliveries (reservations or takes) an item that comes back (released,
    /// lease ran out) moves to the dead-letter queue instead of being delivered again.
    pub max_deliveries: Option<u32>,
    /// The dead-letter queue's name; `None` with `max_deliveries` set means `"<name>.dead"`.
    pub dead_letter: Option<String>,
    /// Lease of a reservation that does not say otherwise.
    pub default_lease: Duration,
    /// Lifetime of an item pushed without a `ttl` (`None`: items never expire).
    pub default_ttl: Option<Duration>,
}

impl Default for QueueOptions {
    fn default() -> Self {
        QueueOptions {
            max_items: None,
            max_bytes: None,
            when_full: WhenFull::Reject,
            max_deliveries: None,
            dead_letter: None,
            default_lease: Duration::from_secs(30),
            default_ttl: None,
        }
    }
}

/// Options of a push.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushOptions {
    /// Wait until the push is on stable storage (fsync), not only handed to the OS.
    pub sync: bool,
    /// The item becomes visible to consumers only after this long.
    pub delay: Option<Duration>,
    /// The item expires (is dropped unread) this long after the push; overrides the queue's
    /// `default_ttl`.
    pub ttl: Option<Duration>,
}

/// Options of a reservation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReserveOptions {
    /// How long the item stays reserved before it goes back by itself (default: the queue's
    /// `default_lease`).
    pub lease: Option<Duration>,
    /// How long to wait for an item when none is available (default: do not wait).
    pub wait: Option<Duration>,
}

/// Where a new consumer group starts reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GroupStart {
    /// With the items pushed from now on (Kestrel's fanout queues).
    #[default]
    Tail,
    /// With the oldest item still in the queue.
    Head,
}

/// Milliseconds of a duration, saturating.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
