//! The wall clock of a database ([`crate::Options::clock`]): queue leases, delays and expiry,
//! topic append times, and the change feed's batch times and age-based retention. Part of the
//! options, so that it is the same from the first step of the open on; replaceable, because
//! wasm32 has no clock of its own (the bindings give JavaScript's) and tests move time.

use std::sync::Arc;

/// Milliseconds since the Unix epoch, from a function given once, at open.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> u64 + Send + Sync>);

impl Clock {
    /// The system clock; on wasm32, which has none in `std`, always 0 (give the host's clock
    /// with [`Clock::from_fn`] instead).
    pub fn system() -> Clock {
        Clock(Arc::new(system_now))
    }

    /// A clock that reads `now` (milliseconds since the Unix epoch). `now` must not go
    /// backwards by much: retention and leases compare its readings.
    pub fn from_fn(now: impl Fn() -> u64 + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(now))
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::system()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({})", self.now_ms())
    }
}

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
