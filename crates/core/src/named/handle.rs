//! [`Handle`]: what every handle on a named object holds — the database, the object's keyspace,
//! its shared state and the registry it is in (with the database's clock).

use std::sync::Arc;

use crate::db::{Db, Keyspace};
use crate::named::registry::{Registry, Shared};
use crate::named::state::NamedState;

/// A handle's parts. Cheap to clone.
pub(crate) struct Handle<S> {
    pub db: Db,
    pub ks: Keyspace,
    pub shared: Arc<Shared<S>>,
    pub registry: Arc<Registry<S>>,
}

/// A layer's public handle type (a queue, a topic): its parts are a [`Handle`].
pub(crate) trait Named {
    /// The state of the object it names.
    type State;

    /// The handle's parts.
    fn handle(&self) -> &Handle<Self::State>;
}

impl<S> Clone for Handle<S> {
    fn clone(&self) -> Self {
        Handle {
            db: self.db.clone(),
            ks: self.ks.clone(),
            shared: self.shared.clone(),
            registry: self.registry.clone(),
        }
    }
}

impl<S: NamedState> Handle<S> {
    /// The object's name.
    pub(crate) fn name(&self) -> &str {
        self.shared.name()
    }

    /// Milliseconds since the Unix epoch, by the database's clock.
    pub(crate) fn now(&self) -> u64 {
        self.registry.now()
    }
}
