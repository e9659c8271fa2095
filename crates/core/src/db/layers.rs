//! The shared in-memory state of the layers built on the engine (the registries of queues and
//! of topics): one per type and database, made on first use. The engine cannot name those
//! types (the layers are above it), so it keeps each as `Any` and finds it again by its type.

use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError};

use crate::db::options::Options;

/// A layer's state in one database ([`Layers::get`]).
pub(crate) trait Layer: Any + Send + Sync {
    /// The state for a database opened with `options`. It must hold no handle to the database
    /// (the database holds its layers: that would be a cycle), and must not ask [`Layers`] for
    /// another layer (it is made under their lock).
    fn make(options: &Options) -> Self;
}

/// The layers' states of one database.
#[derive(Default)]
pub(crate) struct Layers {
    made: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
}

impl Layers {
    /// The state of layer `L`, made from `options` on first use: every call returns the same
    /// one.
    pub(crate) fn get<L: Layer>(&self, options: &Options) -> Arc<L> {
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        for l in made.iter() {
            if let Ok(found) = l.clone().downcast::<L>() {
                return found;
            }
        }
        let new = Arc::new(L::make(options));
        made.push(new.clone());
        new
    }
}
