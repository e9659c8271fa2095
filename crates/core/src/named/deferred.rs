//! Operations on named objects inside a [`Batch`] or a [`crate::Transaction`]: kept as given
//! and turned into writes at commit, with the objects locked ([`run`]), so that the ids they
//! get follow commit order. One [`DeferredOps`] per layer joins a batch through the engine's
//! deferred-write seam ([`DeferredWrites`]).

use std::any::Any;

use crate::db::deferred::{CommitFn, DeferredWrites, MaybeSendSync};
use crate::db::Batch;
use crate::named::handle::{Handle, Named};
use crate::named::locked::run;
use crate::named::state::{NamedState, Part};
use crate::write::batch::WriteBatch;
use crate::Result;

/// One operation of a layer in a batch.
pub(crate) trait DeferredOp: MaybeSendSync + std::fmt::Debug + 'static {
    /// The state of the objects the operation is on.
    type State: NamedState;

    /// The handle the operation is on.
    type Handle: Named<State = Self::State> + Clone + MaybeSendSync + std::fmt::Debug + 'static;

    /// Layers nest in the order of their ranks ([`DeferredWrites::rank`]).
    const RANK: u8;

    /// Whether the operation asks for the whole batch to be synced.
    fn wants_sync(&self) -> bool;

    /// Applies the operation to `part` (its object's, locked), adding its writes to `batch`
    /// or to the part. Returns the id it gets, if it gets one.
    fn apply(
        &self,
        handle: &Self::Handle,
        part: &mut <Self::State as NamedState>::Part<'_>,
        batch: &mut WriteBatch,
    ) -> Result<Option<u64>>;
}

/// A layer's operations of a batch, in the order they were added, with their indexes in the
/// batch.
#[derive(Debug)]
pub(crate) struct DeferredOps<O: DeferredOp> {
    ops: Vec<(usize, O::Handle, O)>,
}

impl<O: DeferredOp> Default for DeferredOps<O> {
    fn default() -> Self {
        DeferredOps { ops: Vec::new() }
    }
}

impl<O: DeferredOp> DeferredWrites for DeferredOps<O> {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn wants_sync(&self) -> bool {
        self.ops.iter().any(|(_, _, op)| op.wants_sync())
    }

    fn rank(&self) -> u8 {
        O::RANK
    }

    fn commit(&self, batch: WriteBatch, commit: &mut CommitFn<'_>) -> Result<Vec<(usize, u64)>> {
        let handles: Vec<&Handle<O::State>> = self.ops.iter().map(|(_, h, _)| h.handle()).collect();
        run(&handles, batch, commit, |parts, batch| {
            let mut ids = Vec::new();
            for (index, handle, op) in &self.ops {
                let name = handle.handle().name();
                let Some(part) = parts.iter_mut().find(|p| p.name() == name) else {
                    continue;
                };
                if let Some(id) = op.apply(handle, part, batch)? {
                    ids.push((*index, id));
                }
            }
            Ok(ids)
        })
    }
}

/// Adds `op` on `handle` to `batch`, to be applied when it commits. Errors: `InvalidArgument`
/// if the batch holds writes to another database.
pub(crate) fn defer<'b, O: DeferredOp>(
    batch: &'b mut Batch,
    handle: &O::Handle,
    op: O,
) -> Result<&'b mut Batch> {
    let (ops, index) = handle.handle().db.defer(batch, DeferredOps::<O>::default)?;
    ops.ops.push((index, handle.clone(), op));
    Ok(batch)
}
