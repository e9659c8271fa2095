//! What the named logs built on the engine — queues ([`crate::queue`]) and topics
//! ([`crate::topic`]) — have in common, written once; each layer's own logic stays in its
//! folder:
//!
//! - `catalog.rs`: the catalog of their names and options, and name checks;
//! - `registry.rs`: one shared in-memory state per object, made on first use, and deletion;
//! - `handle.rs`: what every handle holds (database, keyspace, shared state, clock);
//! - `state.rs`: what a layer provides — its state's kind and its part in an operation;
//! - `locked.rs`: running an operation on locked objects (in name order), committing it,
//!   undoing it on failure, waking waiters;
//! - `deferred.rs`: joining a [`crate::Batch`] or [`crate::Transaction`] through the
//!   engine's deferred-write seam;
//! - `layout.rs`: the key and record encodings both use;
//! - `wakes.rs`: which objects were woken, for waiters outside the core (WebAssembly).

pub(crate) mod catalog;
pub(crate) mod deferred;
pub(crate) mod handle;
pub(crate) mod layout;
pub(crate) mod locked;
pub(crate) mod registry;
pub(crate) mod state;
pub(crate) mod wakes;
