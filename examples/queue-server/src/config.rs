//! What the command line sets: the server's limits and the options every queue gets.

use std::time::Duration;

use shaledb::queue::QueueOptions;

/// The server's settings (see `shaledb-queue-server --help`).
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest item a `set` may carry, in bytes; a larger one is refused and its connection
    /// closed (the data block cannot be skipped safely).
    pub max_item_size: usize,
    /// How long an open read stays reserved while its client stays connected; after that the
    /// item goes back to the queue (Kestrel's `openTransactionTimeout`).
    pub open_timeout: Duration,
    /// Options of every queue: limits (a full queue answers `NOT_STORED`, or drops its oldest
    /// items) and default ttl.
    pub queue_options: QueueOptions,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_item_size: 16 << 20,
            open_timeout: NO_OPEN_TIMEOUT,
            queue_options: QueueOptions::default(),
        }
    }
}

/// The open-read lease used when none is set: in effect never (ten years), as in Kestrel.
pub const NO_OPEN_TIMEOUT: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
