//! Wakes change-feed readers that wait for the next commit ([`super::Changes::next_timeout`]),
//! at no cost to writers while none waits.

use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
#[cfg(not(target_arch = "wasm32"))]
use std::time::Duration;

/// A condition variable for "a commit happened" with a count of waiters.
#[derive(Debug, Default)]
pub(crate) struct CommitSignal {
    lock: Mutex<()>,
    cond: Condvar,
    waiters: AtomicUsize,
}

impl CommitSignal {
    /// Wakes every waiter; a load and nothing more when none waits. Call after a commit
    /// became visible (or the database closed).
    pub(crate) fn notify(&self) {
        // The fences pair with the waiter's: either this sees the waiter, or the waiter's check
        // (after its increment) sees the commit.
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            self.cond.notify_all();
        }
    }

    /// Waits up to `timeout` unless `ready()` holds; returns `ready()`'s last answer.
    /// `ready` is checked under the signal's lock after registering, so a notify between the
    /// caller's last look and the wait is not lost.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn wait(&self, timeout: Duration, ready: impl Fn() -> bool) -> bool {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let ok = if ready() {
            true
        } else {
            let (_held, _) = self
                .cond
                .wait_timeout(held, timeout)
                .unwrap_or_else(PoisonError::into_inner);
            ready()
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        ok
    }
}
