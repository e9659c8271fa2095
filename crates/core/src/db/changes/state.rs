//! The change feed's shared state in a database: what is known of the logs, the signal that
//! wakes readers waiting for the next commit, and the lock of a follower's apply.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::db::changes::logs::LogIndex;
use crate::db::changes::resume::ResumePoints;
use crate::db::changes::signal::CommitSignal;

/// The change feed's logs, waiters and the follower's apply lock.
#[derive(Debug, Default)]
pub(crate) struct ChangeState {
    logs: LogIndex,
    signal: CommitSignal,
    /// Held by a follower's apply.
    apply: Mutex<()>,
    /// Where feeds stopped (a new feed from there skips the part of the log before it).
    resume: ResumePoints,
}

impl ChangeState {
    /// What is known about the logs (first sequence numbers, seal times).
    pub(crate) fn logs(&self) -> &LogIndex {
        &self.logs
    }

    /// Where feeds stopped.
    pub(crate) fn resume_points(&self) -> &ResumePoints {
        &self.resume
    }

    /// Wakes the readers waiting for a commit; a load and nothing more when none waits. Call
    /// after a commit became visible (or the database closed).
    #[inline]
    pub(crate) fn notify_commit(&self) {
        self.signal.notify();
    }

    /// Waits up to `timeout` for a commit unless `ready()` holds ([`CommitSignal::wait`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn wait_for_commit(
        &self,
        timeout: std::time::Duration,
        ready: impl Fn() -> bool,
    ) -> bool {
        self.signal.wait(timeout, ready)
    }

    /// The lock a follower's apply holds from its check of the sequence number through its
    /// commit: one apply at a time.
    pub(crate) fn lock_apply(&self) -> MutexGuard<'_, ()> {
        self.apply.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
