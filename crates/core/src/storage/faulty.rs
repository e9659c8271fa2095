//! A fault-injecting [`crate::storage::Storage`] wrapper for tests.
//!
//! TODO(storage): implement torn writes, failed syncs, and crashes.
