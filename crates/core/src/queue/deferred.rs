//! Queue operations inside a [`Batch`] or a [`Transaction`]: a job and the record it is about
//! in one atomic write, or a consumer's result and its ack. They are turned into writes at
//! commit, with the queues locked, so ids follow commit order.

use std::any::Any;

use crate::db::deferred::{CommitFn, DeferredWrites};
use crate::db::{Batch, Transaction};
use crate::queue::handle::Queue;
use crate::queue::item::Lease;
use crate::queue::locked;
use crate::queue::options::PushOptions;
use crate::write::batch::WriteBatch;
use crate::Result;

/// One queue operation of a batch.
#[derive(Debug)]
enum Op {
    Push(Vec<u8>, PushOptions),
    Ack(Lease),
}

/// The queue operations of a batch, in the order they were added, with their indexes in the
/// batch.
#[derive(Debug, Default)]
struct QueueOps {
    ops: Vec<(usize, Queue, Op)>,
}

impl DeferredWrites for QueueOps {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn wants_sync(&self) -> bool {
        self.ops
            .iter()
            .any(|(_, _, op)| matches!(op, Op::Push(_, o) if o.sync))
    }

    fn rank(&self) -> u8 {
        1
    }

    fn commit(&self, batch: WriteBatch, commit: &mut CommitFn<'_>) -> Result<Vec<(usize, u64)>> {
        let queues: Vec<&Queue> = self.ops.iter().map(|(_, q, _)| q).collect();
        locked::run(&queues, batch, commit, |txs| {
            let mut ids = Vec::new();
            for (index, queue, op) in &self.ops {
                let Some(tx) = txs.iter_mut().find(|t| t.name == queue.name()) else {
                    continue;
                };
                match op {
                    Op::Push(value, options) => ids.push((*index, tx.push(value, options)?)),
                    Op::Ack(lease) => tx.ack(queue.group_name(), *lease)?,
                }
            }
            Ok(ids)
        })
    }
}

impl Batch {
    /// Adds a push of `value` to `queue`, committed with the batch's other writes
    /// ([`crate::Db::write_with_ids`] returns the ids). `options.sync` makes the whole write
    /// synced. Errors: `InvalidArgument` for an oversize value or a queue of another database.
    pub fn push(
        &mut self,
        queue: &Queue,
        value: &[u8],
        options: PushOptions,
    ) -> Result<&mut Batch> {
        queue.db.check_value(value)?;
        self.queue_op(queue, Op::Push(value.to_vec(), options))
    }

    /// Adds an ack of `lease` (for `queue`'s group), committed with the batch's other writes:
    /// a consumer's result and its ack in one write. If the lease is no longer held at commit,
    /// the whole batch fails (`LeaseExpired`, `UnknownReservation`) and nothing is written.
    pub fn ack(&mut self, queue: &Queue, lease: Lease) -> Result<&mut Batch> {
        self.queue_op(queue, Op::Ack(lease))
    }

    fn queue_op(&mut self, queue: &Queue, op: Op) -> Result<&mut Batch> {
        let (ops, index) = queue.db.defer(self, QueueOps::default)?;
        ops.ops.push((index, queue.clone(), op));
        Ok(self)
    }
}

impl Transaction {
    /// [`Batch::push`] inside the transaction: the push happens if and only if it commits.
    pub fn push(&mut self, queue: &Queue, value: &[u8], options: PushOptions) -> Result<()> {
        self.batch_mut().push(queue, value, options).map(|_| ())
    }

    /// [`Batch::ack`] inside the transaction.
    pub fn ack(&mut self, queue: &Queue, lease: Lease) -> Result<()> {
        self.batch_mut().ack(queue, lease).map(|_| ())
    }
}
