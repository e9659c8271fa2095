//! Versions: which tables make up the tree, and how that changes durably.
//!
//! - [`file_meta`]: [`FileMeta`], what the manifest records about one table.
//! - [`levels`]: the immutable [`Version`] (files per level).
//! - [`set`]: [`VersionSet`], the current version and the counters edits change.
//! - [`edit`]: [`VersionEdit`], one change, and its encoding.
//! - [`manifest`]: the manifest (a RecordIO file of edits) and `CURRENT`.

pub mod edit;
pub mod file_meta;
pub mod levels;
pub mod manifest;
pub mod set;

pub use edit::{VersionEdit, MANIFEST_FORMAT_VERSION, MAX_KEYSPACE_METADATA};
pub use file_meta::{FileMeta, NUM_LEVELS};
pub use levels::Version;
pub use set::VersionSet;
