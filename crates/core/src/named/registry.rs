//! The objects of one kind (queues, topics) in an open database: one shared in-memory state
//! per name, whatever the number of handles, made on first use in a process; and the
//! database's clock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::db::layers::Layer;
use crate::db::{Clock, Db, Options};
use crate::named::catalog::Catalog;
use crate::named::state::NamedState;
use crate::named::wakes::WakeMark;
use crate::waiters::Waiters;
use crate::{Error, Result};

/// The error of a handle on an object that was deleted.
pub(crate) fn deleted(kind: &str, name: &str) -> Error {
    Error::InvalidArgument(format!("{kind} {name:?} was deleted"))
}

/// One object's state, shared by its handles.
#[derive(Debug)]
pub(crate) struct Shared<S> {
    name: String,
    state: Mutex<S>,
    /// Set (under the state's lock) when the object is deleted: handles still held fail.
    deleted: AtomicBool,
    /// Notified when something waiters look for may have happened (a push, a release, an
    /// append) and when the object goes, if someone waits; used with `state`'s lock.
    changed: Waiters,
    /// Logs those notifications for waiters outside the core (`wakes.rs`).
    mark: WakeMark,
}

impl<S> Shared<S> {
    /// The object's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The state, locked (deleted or not).
    pub(crate) fn lock(&self) -> MutexGuard<'_, S> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the object was deleted. Exact while its state is locked (the mark is set under
    /// that lock).
    pub(crate) fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::Acquire)
    }

    /// Wakes every waiter ([`Shared::wait`], and those outside the core: `wakes.rs`). Called
    /// after a change made under the state's lock (no system call when nobody waits).
    pub(crate) fn notify_all(&self) {
        self.changed.notify_all();
        self.mark.woken();
    }

    /// Releases `state` (this object's, locked) until notified or `timeout` passes, then locks
    /// it again.
    pub(crate) fn wait<'a>(
        &self,
        state: MutexGuard<'a, S>,
        timeout: Duration,
    ) -> MutexGuard<'a, S> {
        self.changed.wait_timeout(state, timeout)
    }
}

impl<S: NamedState> Shared<S> {
    /// The state, locked. Errors: `InvalidArgument` if the object was deleted.
    pub(crate) fn lock_live(&self) -> Result<MutexGuard<'_, S>> {
        let state = self.lock();
        if self.is_deleted() {
            return Err(deleted(S::KIND, &self.name));
        }
        Ok(state)
    }
}

/// The objects of one kind in a database, by name.
pub(crate) struct Registry<S> {
    objects: Mutex<HashMap<String, Arc<Shared<S>>>>,
    clock: Clock,
}

impl<S: NamedState> Layer for Registry<S> {
    fn make(options: &Options) -> Registry<S> {
        Registry {
            objects: Mutex::new(HashMap::new()),
            clock: options.clock.clone(),
        }
    }
}

impl<S: NamedState> Registry<S> {
    /// The registry of `db`, made on first use.
    pub(crate) fn of(db: &Db) -> Arc<Registry<S>> {
        db.layer()
    }

    /// Milliseconds since the Unix epoch, by the database's clock.
    pub(crate) fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Locks the registry: objects are loaded (and deleted) under this lock, so a name is
    /// loaded once and never while it is being deleted.
    pub(crate) fn lock(&self) -> Objects<'_, S> {
        Objects(self.objects.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Deletes object `name` of `db` and everything in it ([`Catalog::delete`]); its state,
    /// if loaded, is marked deleted (handles still held fail) and its waiters are woken.
    /// Returns false if there was no such object. Errors: `InvalidArgument` for a bad name.
    pub(crate) fn delete(db: &Db, name: &str) -> Result<bool> {
        let catalog = Catalog::of(db, S::KIND);
        catalog.validate(name)?;
        let registry = Registry::<S>::of(db);
        let mut objects = registry.lock();
        let shared = objects.get(name);
        let mut guard = shared.as_ref().map(|s| s.lock());
        if !catalog.delete(name)? {
            return Ok(false);
        }
        if let Some(s) = &shared {
            s.deleted.store(true, Ordering::Release);
        }
        if let Some(state) = guard.as_mut() {
            state.deleted();
        }
        drop(guard);
        if let Some(s) = objects.0.remove(name) {
            s.notify_all();
        }
        Ok(true)
    }
}

/// The registry, locked ([`Registry::lock`]).
pub(crate) struct Objects<'a, S>(MutexGuard<'a, HashMap<String, Arc<Shared<S>>>>);

impl<S> Objects<'_, S> {
    /// The shared state of object `name`, if it is loaded.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<Shared<S>>> {
        self.0.get(name).cloned()
    }

    /// Registers `state`, just loaded, as the shared state of object `name` of `db`.
    pub(crate) fn insert(&mut self, db: &Db, name: &str, state: S) -> Arc<Shared<S>>
    where
        S: NamedState,
    {
        let shared = Arc::new(Shared {
            name: name.to_owned(),
            state: Mutex::new(state),
            deleted: AtomicBool::new(false),
            changed: Waiters::default(),
            mark: WakeMark::new(db, S::KIND, name),
        });
        self.0.insert(name.to_owned(), shared.clone());
        shared
    }
}
