//! The options of a log writer.

use crate::recordio::compression::Compression;

/// Options for [`WalWriter`](super::WalWriter).
#[derive(Debug, Clone)]
pub struct WalOptions {
    /// Compression of each record (kept only where it saves at least 1/8).
    pub compression: Compression,
    /// Bytes the log file is extended by at a time, ahead of its data
    /// ([`LogFile`](super::LogFile)); 0 (the default) extends it by each write.
    pub preallocation: u64,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            compression: Compression::None,
            preallocation: 0,
        }
    }
}
