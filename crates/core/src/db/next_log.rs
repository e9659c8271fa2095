//! The next log prepared off the writer's path ([`crate::write::wal::PreparedLog`]), and the
//! sealed logs' tails waiting to be cut: what `prepare_log.rs` fills and empties.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::write::wal::{PreparedLog, SealedTail};

/// The prepared log and the tails waiting to be cut.
#[derive(Debug, Default)]
pub(crate) struct NextLog {
    pub(crate) prepared: Mutex<Option<PreparedLog>>,
    pub(crate) tails: Mutex<Vec<SealedTail>>,
}

impl NextLog {
    /// The prepared log, if one is ready.
    pub(crate) fn take(&self) -> Option<PreparedLog> {
        lock(&self.prepared).take()
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
