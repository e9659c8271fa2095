//! The seam through which layers built on the engine (queues, topics) join a
//! [`Batch`](crate::Batch) or a [`crate::Transaction`]: their writes are *deferred*, turned into
//! keys and values only at commit, under the layer's own locks, so that ids they assign follow
//! commit order. Several layers in one batch nest: each takes its locks and adds its writes,
//! then hands the batch on; the innermost commits it.

use std::any::Any;

use crate::sorting::sort_by_key;
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

/// Commits a batch, once every layer added its writes.
pub(crate) type CommitFn<'a> = dyn FnMut(WriteBatch) -> Result<()> + 'a;

/// The writes one layer added to a batch, materialized when the batch commits.
pub(crate) trait DeferredWrites: MaybeSendSync + std::fmt::Debug {
    /// For the layer to find its own writes again when more are added.
    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// Whether one of the writes asks for the whole batch to be synced.
    fn wants_sync(&self) -> bool;

    /// Layers nest in the order of their ranks, whatever order a batch added them in, so that
    /// two batches never take two layers' locks in opposite orders.
    fn rank(&self) -> u8;

    /// Takes the layer's locks, appends its writes to `batch` and calls `commit` with it (which
    /// commits, or hands on to the next layer); keeps its in-memory changes if that succeeds,
    /// undoes them if not. Returns `(index, id)` of the writes that get ids, `index` being the
    /// one [`Batch::deferred_mut`](crate::Batch::deferred_mut) gave.
    fn commit(&self, batch: WriteBatch, commit: &mut CommitFn<'_>) -> Result<Vec<(usize, u64)>>;
}

/// Commits `batch` (the plain writes, encoded) with the deferred writes of `layers`, nesting
/// them in order; `commit` does the final write. Returns the ids in the order the writes were
/// added to the batch.
pub(crate) fn commit_layers(
    layers: &[Box<dyn DeferredWrites>],
    batch: WriteBatch,
    commit: &mut CommitFn<'_>,
) -> Result<Vec<u64>> {
    let mut ordered: Vec<&dyn DeferredWrites> = layers.iter().map(|l| &**l).collect();
    sort_by_key(&mut ordered, |l| l.rank());
    let mut ids = nest(&ordered, batch, commit)?;
    sort_by_key(&mut ids, |&(index, _)| index);
    Ok(ids.into_iter().map(|(_, id)| id).collect())
}

fn nest(
    layers: &[&dyn DeferredWrites],
    batch: WriteBatch,
    commit: &mut CommitFn<'_>,
) -> Result<Vec<(usize, u64)>> {
    let Some((first, rest)) = layers.split_first() else {
        commit(batch)?;
        return Ok(Vec::new());
    };
    let mut inner = Vec::new();
    let mut ids = first.commit(batch, &mut |b| {
        inner = nest(rest, b, commit)?;
        Ok(())
    })?;
    ids.append(&mut inner);
    Ok(ids)
}
