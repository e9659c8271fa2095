//! The queues of one open database: their shared in-memory state (one per name, whatever the
//! number of handles), the catalog of names and options, and the clock.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::db::layers::Layer;
use crate::db::{Clock, Db, Options};
use crate::queue::state::State;

/// One queue's state, shared by its handles.
#[derive(Debug)]
pub(crate) struct Shared {
    pub name: String,
    pub state: Mutex<State>,
    /// Notified when an item may have become available (push, release) or the queue went.
    pub available: Condvar,
}

impl Shared {
    pub(crate) fn new(name: &str, state: State) -> Shared {
        Shared {
            name: name.to_owned(),
            state: Mutex::new(state),
            available: Condvar::new(),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The queues of a database.
pub(crate) struct Registry {
    pub queues: Mutex<HashMap<String, Arc<Shared>>>,
    clock: Clock,
}

impl Layer for Registry {
    fn make(options: &Options) -> Registry {
        Registry {
            queues: Mutex::new(HashMap::new()),
            clock: options.clock.clone(),
        }
    }
}

impl Registry {
    /// The registry of `db`, made on first use.
    pub(crate) fn of(db: &Db) -> Arc<Registry> {
        db.layer()
    }

    /// Milliseconds since the Unix epoch, by the database's clock.
    pub(crate) fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    pub(crate) fn queues(&self) -> MutexGuard<'_, HashMap<String, Arc<Shared>>> {
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
