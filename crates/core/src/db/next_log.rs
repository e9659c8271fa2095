//! The next log prepared off the writer's path ([`crate::write::wal::PreparedLog`]), and the
//! sealed logs' tails waiting to be cut: what `prepare_log.rs` fills and empties.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::write::wal::{PreparedLog, SealedTail};

/// The prepared log and the tails waiting to be cut.
#[derive(Debug, Default)]
pub(crate) struct NextLog {
    slot: Mutex<Slot>,
    tails: Mutex<Vec<SealedTail>>,
}

/// A background thread prepares logs, or a sync-log job makes one durable (`job_desk.rs`;
/// WebAssembly has no background thread). A prepared log must be
/// numbered above every log in use: one prepared while a switch created
/// a log of its own is refused (the switches counted tell).
#[derive(Debug, Default)]
struct Slot {
    prepared: Option<PreparedLog>,
    switches: u64,
}

impl NextLog {
    /// Keeps `tail` for [`NextLog::cut_tails`].
    pub(crate) fn push_tail(&self, tail: SealedTail) {
        lock(&self.tails).push(tail);
    }

    /// Cuts the tails waiting. A failed cut leaves zeros after a sealed record, which readers
    /// take for the log's end.
    pub(crate) fn cut_tails(&self) {
        for tail in std::mem::take(&mut *lock(&self.tails)) {
            let _ = tail.trim();
        }
    }

    /// For a memtable switch: counts it, and takes the prepared log if one is ready.
    pub(crate) fn take_for_switch(&self) -> Option<PreparedLog> {
        let mut slot = lock(&self.slot);
        slot.switches += 1;
        slot.prepared.take()
    }

    /// The prepared log, if any, for a close to delete.
    pub(crate) fn take_unused(&self) -> Option<PreparedLog> {
        lock(&self.slot).prepared.take()
    }

    /// `None` if a prepared log is ready; else the switches counted so far, which
    /// [`NextLog::offer`] checks (read it before taking the new log's number).
    pub(crate) fn due(&self) -> Option<u64> {
        let slot = lock(&self.slot);
        slot.prepared.is_none().then_some(slot.switches)
    }

    /// Keeps `log`, prepared after [`NextLog::due`] returned `switches`, unless a switch came
    /// in between (its log may be numbered above `log`) or a log is ready: then returns it.
    pub(crate) fn offer(&self, switches: u64, log: PreparedLog) -> Option<PreparedLog> {
        let mut slot = lock(&self.slot);
        if slot.switches != switches || slot.prepared.is_some() {
            return Some(log);
        }
        slot.prepared = Some(log);
        None
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
