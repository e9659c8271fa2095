//! The pushes a queue's stored counters record leaves out (written once per
//! [`PUSHES_PER_WRITE`] pushes or [`BYTES_PER_WRITE`] bytes; `counters.rs` completes them at
//! open). In memory only.

/// Pushes between two writes of the counters, at most (when nothing else writes them).
pub(crate) const PUSHES_PER_WRITE: u64 = 1024;

/// Bytes of values pushed between two writes of the counters, at most (plus one item).
pub(crate) const BYTES_PER_WRITE: u64 = 1 << 20;

/// What the stored counters lack: pushes since they were last written. In memory only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Unwritten {
    pub pushes: u64,
    pub bytes: u64,
}

impl Unwritten {
    /// Whether the counters must be written now, with these pushes left out of them.
    pub(crate) fn due(&self) -> bool {
        self.pushes >= PUSHES_PER_WRITE || self.bytes >= BYTES_PER_WRITE
    }
}
