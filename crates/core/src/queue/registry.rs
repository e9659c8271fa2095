//! The queues of one open database: their shared in-memory state (one per name, whatever the
//! number of handles), the catalog of names and options, and the clock.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock};

use crate::db::core::DbInner;
use crate::queue::state::State;

/// Milliseconds since the Unix epoch.
pub(crate) type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

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
    clock: RwLock<Clock>,
}

impl Registry {
    /// The registry of `db`, made on first use.
    pub(crate) fn of(db: &Arc<DbInner>) -> Arc<Registry> {
        let any = db
            .layers
            .get_or_init(|| {
                Arc::new(Registry {
                    queues: Mutex::new(HashMap::new()),
                    clock: RwLock::new(Arc::new(system_clock)),
                })
            })
            .clone();
        match any.downcast::<Registry>() {
            Ok(r) => r,
            // The slot only ever holds a registry.
            Err(_) => unreachable!("the database's layer slot holds a queue registry"),
        }
    }

    /// Milliseconds since the Unix epoch, by the registry's clock.
    pub(crate) fn now(&self) -> u64 {
        let clock = self
            .clock
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        clock()
    }

    pub(crate) fn set_clock(&self, clock: Clock) {
        *self.clock.write().unwrap_or_else(PoisonError::into_inner) = clock;
    }

    pub(crate) fn queues(&self) -> MutexGuard<'_, HashMap<String, Arc<Shared>>> {
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The system clock; on wasm32 (no clock in `std`) 0 until the bindings set one.
fn system_clock() -> u64 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
    #[cfg(target_arch = "wasm32")]
    {
        0
    }
}
