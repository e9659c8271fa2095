//! [`View`]: what a reader reads, taken whole from [`super::versions::Versions`].

use std::sync::Arc;

use crate::memtable::MemTable;
use crate::version::Version;

/// What a reader needs for a consistent view: the live memtable, the immutable ones (newest
/// first) and the current version of tables. Replaced whole, never mutated (the live memtable
/// itself accepts inserts; readers filter by sequence number).
#[derive(Debug)]
pub(crate) struct View {
    pub(crate) mem: Arc<MemTable>,
    pub(crate) imms: Vec<Arc<MemTable>>,
    pub(crate) version: Arc<Version>,
}
