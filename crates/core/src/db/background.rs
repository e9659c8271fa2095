//! The native background thread's handle and wake-up signal. The thread's loop, which drives
//! flush and compaction, is in `maintain.rs`; it holds only a `Weak` reference to the database,
//! so dropping the last handle ends it. In WebAssembly (no threads) it never starts; the
//! JavaScript side calls `maintain` instead.

use std::sync::{Condvar, Mutex, PoisonError};
#[cfg(not(target_arch = "wasm32"))]
use std::time::Duration;

#[cfg(not(target_arch = "wasm32"))]
use crate::db::thread_priority::MaintenancePriority;

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
    /// Starts the thread at `priority`, running `run` (native targets only).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn start(
        &self,
        priority: MaintenancePriority,
        run: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        let handle = std::thread::Builder::new()
            .name("shaledb-maintain".into())
            .spawn(move || {
                priority.apply_to_current_thread();
                run();
            })?;
        *self.thread.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle);
        Ok(())
    }

    /// Whether the thread runs (started, not stopped).
    pub(crate) fn started(&self) -> bool {
        self.thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
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
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
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

    /// Whether the thread was told to stop.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn stopped(&self) -> bool {
        self.signal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop
    }
}
