//! A condition variable that knows whether anyone waits on it, so that a notifier with nobody
//! to wake makes no system call (a queue push, a topic append, a sync, a commit: on the hot
//! path these almost never have a sleeper).
//!
//! The contract: [`Waiters`] is used with one mutex of the caller's own (the one guarding the
//! state waiters look at). A waiter checks its condition and registers under that mutex
//! ([`Waiters::wait`] counts it before the mutex is released); a notifier changes the state
//! under that mutex, then calls [`Waiters::notify_all`], with or without holding it. The mutex
//! orders the two: either the notifier's critical section came first (the waiter's check sees
//! the change and does not sleep) or the waiter's registration did (the notifier sees the
//! count). So a count of 0 means nobody can miss the change.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, MutexGuard, PoisonError};
use std::time::Duration;

/// A condition variable with a count of the threads waiting on it (module doc).
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    cond: Condvar,
    count: AtomicUsize,
}

impl Waiters {
    /// Releases `guard` (the caller's mutex, its condition checked under it) until notified,
    /// then locks it again. Wakes may be spurious: re-check the condition.
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.count.fetch_add(1, Ordering::Relaxed);
        let guard = self
            .cond
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner);
        self.count.fetch_sub(1, Ordering::Relaxed);
        guard
    }

    /// [`Waiters::wait`], for at most `timeout`.
    pub(crate) fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> MutexGuard<'a, T> {
        self.count.fetch_add(1, Ordering::Relaxed);
        let (guard, _) = self
            .cond
            .wait_timeout(guard, timeout)
            .unwrap_or_else(PoisonError::into_inner);
        self.count.fetch_sub(1, Ordering::Relaxed);
        guard
    }

    /// Wakes every waiter; nothing (no system call) when none waits. Call after changing the
    /// state under the caller's mutex (module doc).
    pub(crate) fn notify_all(&self) {
        if self.count.load(Ordering::Relaxed) > 0 {
            self.cond.notify_all();
        }
    }

    /// Threads waiting now (for tests that must wait until a thread sleeps).
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_waiter_registered_under_the_mutex_is_woken_by_a_change_made_under_it() {
        let shared = Arc::new((Mutex::new(false), Waiters::default()));
        let waiter = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                let (state, waiters) = &*shared;
                let mut ready = state.lock().unwrap();
                while !*ready {
                    ready = waiters.wait(ready);
                }
            })
        };
        while shared.1.waiting() == 0 {
            std::thread::yield_now();
        }
        *shared.0.lock().unwrap() = true;
        shared.1.notify_all();
        waiter.join().unwrap();
        assert_eq!(shared.1.waiting(), 0);
    }

    #[test]
    fn a_timed_wait_returns_when_nobody_notifies() {
        let state = Mutex::new(());
        let waiters = Waiters::default();
        let guard = waiters.wait_timeout(state.lock().unwrap(), Duration::from_millis(1));
        drop(guard);
        assert_eq!(waiters.waiting(), 0);
        waiters.notify_all();
    }
}
