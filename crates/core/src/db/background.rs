//! The native background thread that drives flush and compaction.
//!
//! It holds only a `Weak` reference to the database, so dropping the last handle ends it. In
//! WebAssembly (no threads) it never starts; the JavaScript side calls `maintain` instead.

use std::sync::{Condvar, Mutex, PoisonError, Weak};
#[cfg(not(target_arch = "wasm32"))]
use std::time::Duration;

use crate::db::core::DbInner;
use crate::db::Budget;

/// Work per background step: about 4 MiB of table data, so a step takes milliseconds.
pub(crate) const STEP_BUDGET: Budget = Budget { bytes: 4 << 20 };

#[derive(Debug, Default)]
struct Signal {
    stop: bool,
    wake: bool,
}

/// The background thread's handle and wake-up signal.
#[derive(Debug, Default)]
pub(crate) struct Background {
    signal: Mutex<Signal>,
    cv: Condvar,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Background {
    /// Starts the thread for `db` (native targets only).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn start(&self, db: Weak<DbInner>) -> std::io::Result<()> {
        let handle = std::thread::Builder::new()
            .name("shaledb-maintain".into())
            .spawn(move || run(db))?;
        *self.thread.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle);
        Ok(())
    }

    /// No threads in WebAssembly.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn start(&self, db: Weak<DbInner>) -> std::io::Result<()> {
        let _ = db;
        Ok(())
    }

    /// Wakes the thread: there may be work (a memtable became immutable).
    pub(crate) fn notify(&self) {
        self.signal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .wake = true;
        self.cv.notify_all();
    }

    /// Stops the thread and waits for it (unless called from it).
    pub(crate) fn stop(&self) {
        self.signal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop = true;
        self.cv.notify_all();
        let handle = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(h) = handle {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }

    /// Waits until notified, stopped, or `timeout` passes; returns `false` when stopped.
    #[cfg(not(target_arch = "wasm32"))]
    fn wait(&self, timeout: Duration) -> bool {
        let mut s = self.signal.lock().unwrap_or_else(PoisonError::into_inner);
        if !s.stop && !s.wake {
            s = self
                .cv
                .wait_timeout(s, timeout)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        s.wake = false;
        !s.stop
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn stopped(&self) -> bool {
        self.signal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn run(db: Weak<DbInner>) {
    loop {
        let Some(inner) = db.upgrade() else { return };
        if inner.background.stopped() {
            return;
        }
        let more = match inner.maintain(STEP_BUDGET) {
            Ok(outcome) => outcome.more,
            // The failure poisoned the database (writes report it); stop working.
            Err(_) => return,
        };
        if !more && !inner.background.wait(Duration::from_millis(200)) {
            return;
        }
    }
}
