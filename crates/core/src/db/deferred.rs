//! The seam through which layers built on the engine (queues) join a [`Batch`] or a
//! [`crate::Transaction`]: their writes are *deferred*, turned into keys and values only at
//! commit, under the layer's own locks, so that ids they assign follow commit order.

use std::any::Any;
use std::sync::Arc;

use crate::db::core::DbInner;
use crate::write::batch::WriteBatch;
use crate::Result;

/// `Send + Sync` natively, nothing on wasm32 (single-threaded; its storage is not `Send`).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) trait MaybeSendSync: Send + Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + Sync> MaybeSendSync for T {}
/// `Send + Sync` natively, nothing on wasm32 (single-threaded; its storage is not `Send`).
#[cfg(target_arch = "wasm32")]
pub(crate) trait MaybeSendSync {}
#[cfg(target_arch = "wasm32")]
impl<T> MaybeSendSync for T {}

/// Writes a layer added to a batch, materialized when the batch commits.
pub(crate) trait DeferredWrites: MaybeSendSync + std::fmt::Debug {
    /// For the layer to find its own writes again when more are added.
    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// Commits `plain` (the batch's ordinary writes, encoded) together with the deferred
    /// writes, atomically. `check` runs under the commit lock with no other commit in between
    /// (optimistic transactions); an error from it writes nothing. Returns the ids the
    /// deferred writes were given, in the order they were added.
    fn commit(
        &self,
        db: &Arc<DbInner>,
        plain: WriteBatch,
        sync: bool,
        check: Option<&mut dyn FnMut() -> Result<()>>,
    ) -> Result<Vec<u64>>;
}
