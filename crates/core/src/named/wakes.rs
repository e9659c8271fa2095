//! Which queues and topics may have something new — a push, a release, an append, a deletion —
//! for waiters that cannot block on the core's condition variables. Natively a waiting read
//! blocks on its object's condition variable ([`super::registry::Shared::wait`]); in
//! WebAssembly (no threads) the JavaScript side waits, and asks here after each call which
//! objects were woken, so both kinds of waiters are woken by the one same event: the core's
//! notification after a commit ([`super::locked::run`]) or a deletion.
//!
//! Recording is off until the bindings turn it on (while something waits); each object is in
//! the log at most once until it is taken, so the log holds at most one entry per object.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::db::layers::Layer;
use crate::db::{Db, Options};

/// An object in the log: its kind, its name, and its "in the log" mark.
type Entry = (&'static str, Arc<str>, Arc<AtomicBool>);

/// The log of woken objects of one database.
#[derive(Default)]
pub(crate) struct Wakes {
    recording: AtomicBool,
    pending: Mutex<Vec<Entry>>,
}

impl Layer for Wakes {
    fn make(_options: &Options) -> Wakes {
        Wakes::default()
    }
}

/// What an object needs to be logged when it is woken.
#[derive(Debug)]
pub(crate) struct WakeMark {
    kind: &'static str,
    name: Arc<str>,
    logged: Arc<AtomicBool>,
    wakes: Arc<Wakes>,
}

impl std::fmt::Debug for Wakes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wakes")
    }
}

impl WakeMark {
    /// The mark of object `name` of kind `kind` in `db`'s log.
    pub(crate) fn new(db: &Db, kind: &'static str, name: &str) -> WakeMark {
        WakeMark {
            kind,
            name: Arc::from(name),
            logged: Arc::new(AtomicBool::new(false)),
            wakes: db.layer(),
        }
    }

    /// Notes that the object was woken (if the log records; once until taken).
    pub(crate) fn woken(&self) {
        if !self.wakes.recording.load(Ordering::Acquire) || self.logged.swap(true, Ordering::AcqRel)
        {
            return;
        }
        self.wakes
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((self.kind, self.name.clone(), self.logged.clone()));
    }
}

impl Db {
    /// Turns the log of woken queues and topics on or off (module doc of `named/wakes.rs`). For
    /// the WebAssembly bindings, whose waiters are JavaScript's.
    #[doc(hidden)]
    pub fn record_wakes(&self, on: bool) {
        self.layer::<Wakes>().recording.store(on, Ordering::Release);
        // Whatever was logged before is nobody's now; the marks must not keep objects out.
        self.take_wakes();
    }

    /// The queues and topics woken since the last call, as `(kind, name)` (`"queue"` or
    /// `"topic"`), each once; empties the log.
    #[doc(hidden)]
    pub fn take_wakes(&self) -> Vec<(&'static str, String)> {
        let wakes = self.layer::<Wakes>();
        let taken =
            std::mem::take(&mut *wakes.pending.lock().unwrap_or_else(PoisonError::into_inner));
        taken
            .into_iter()
            .map(|(kind, name, logged)| {
                logged.store(false, Ordering::Release);
                (kind, name.to_string())
            })
            .collect()
    }
}
