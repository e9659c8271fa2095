//! WebAssembly bindings of the ShaleDB engine, for the `shaledb` npm package.
//!
//! Built with `--target web` by `scripts/build-wasm.sh`; the TypeScript wrapper in
//! `packages/js/src` is the public API, these exports are its private implementation.
//!
//! Contracts shared by every export:
//! - An error from the core becomes a JavaScript `Error` whose `code` property is
//!   [`shaledb::Error::code`] (`"INVALID_ARGUMENT"`, `"CORRUPTION"`, ...).
//! - A panic (a bug) traps the instance. The panic hook installed by [`start`] first records the
//!   message, which [`take_panic_message`] hands to JavaScript so it can report a `PANIC` error
//!   instead of a bare `RuntimeError: unreachable`.
//! - Objects (databases, iterators, snapshots, transactions) cross as numeric handles
//!   ([`handles`]), so that after a panic a fresh instance can replace this one cleanly.
#![deny(unsafe_code)]

#[cfg(all(target_arch = "wasm32", feature = "full"))]
mod changes;
#[cfg(target_arch = "wasm32")]
mod database;
#[cfg(target_arch = "wasm32")]
mod db_entry;
mod errors;
#[cfg(target_arch = "wasm32")]
mod handles;
#[cfg(target_arch = "wasm32")]
mod iterators;
#[cfg(target_arch = "wasm32")]
mod jobs;
#[cfg(target_arch = "wasm32")]
mod js_storage;
#[cfg(target_arch = "wasm32")]
mod keyspace_metadata;
#[cfg(target_arch = "wasm32")]
mod memory_growth;
#[cfg(all(target_arch = "wasm32", feature = "full"))]
mod queues;
mod recordio;
#[cfg(target_arch = "wasm32")]
mod scratch;
#[cfg(target_arch = "wasm32")]
mod snapshots;
#[cfg(all(target_arch = "wasm32", feature = "full"))]
mod topic_records;
#[cfg(all(target_arch = "wasm32", feature = "full"))]
mod topics;
#[cfg(all(target_arch = "wasm32", feature = "full"))]
mod verify;
#[cfg(target_arch = "wasm32")]
mod wal_sync;
#[cfg(target_arch = "wasm32")]
mod wire;

use std::sync::{Mutex, PoisonError};

use wasm_bindgen::prelude::*;

/// The last panic's message, kept for [`take_panic_message`]. (wasm32 has no threads here, so
/// the mutex never contends; it only keeps the static safe.)
static PANIC_MESSAGE: Mutex<Option<String>> = Mutex::new(None);

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

/// Runs once when the module is instantiated: installs the panic hook.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        console_error(&format!("shaledb: panic in WebAssembly: {message}"));
        *PANIC_MESSAGE.lock().unwrap_or_else(PoisonError::into_inner) = Some(message);
    }));
}

/// The message of the panic that trapped the instance, if one did (and it was not taken yet).
#[wasm_bindgen(js_name = takePanicMessage)]
pub fn take_panic_message() -> Option<String> {
    PANIC_MESSAGE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
}

/// The version of the ShaleDB core compiled into this module.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// Deliberately panics (for tests of the panic path).
#[wasm_bindgen(js_name = debugPanic)]
pub fn debug_panic(message: &str) {
    panic!("{message}");
}
