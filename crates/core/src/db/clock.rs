//! The wall clock of the layers built on the engine (queue leases, delays and expiry; topic
//! append times): replaceable, because wasm32 has none (the bindings give JavaScript's) and
//! tests move time themselves.

use std::sync::{Arc, PoisonError, RwLock};

/// Milliseconds since the Unix epoch.
pub(crate) type ClockFn = Arc<dyn Fn() -> u64 + Send + Sync>;

/// A database's clock (one per database, through [`crate::db::core::DbInner::layer`]).
pub(crate) struct Clock(RwLock<ClockFn>);

impl Clock {
    pub(crate) fn system() -> Clock {
        Clock(RwLock::new(Arc::new(system_now)))
    }

    /// Milliseconds since the Unix epoch.
    pub(crate) fn now(&self) -> u64 {
        let f = self
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        f()
    }

    pub(crate) fn set(&self, f: ClockFn) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = f;
    }
}

/// The system clock; on wasm32 (no clock in `std`) 0 until the bindings set one.
fn system_now() -> u64 {
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
