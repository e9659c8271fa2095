//! Queue operations inside a [`Batch`] or a [`Transaction`]: a job and the record it is about
//! in one atomic write, or a consumer's result and its ack. They are turned into writes at
//! commit, with the queues locked, so ids follow commit order.

use crate::db::{Batch, Transaction};
use crate::named::deferred::{defer, DeferredOp};
use crate::queue::handle::Queue;
use crate::queue::item::Lease;
use crate::queue::options::PushOptions;
use crate::queue::state::State;
use crate::queue::tx::Tx;
use crate::write::batch::WriteBatch;
use crate::Result;

/// One queue operation of a batch.
#[derive(Debug)]
enum Op {
    Push(Vec<u8>, PushOptions),
    Ack(Lease),
}

impl DeferredOp for Op {
    type State = State;
    type Handle = Queue;
    const RANK: u8 = 1;

    fn wants_sync(&self) -> bool {
        matches!(self, Op::Push(_, o) if o.sync)
    }

    fn apply(&self, queue: &Queue, tx: &mut Tx<'_>, _: &mut WriteBatch) -> Result<Option<u64>> {
        match self {
            Op::Push(value, options) => tx.push(value, options).map(Some),
            Op::Ack(lease) => tx.ack(queue.group_name(), *lease).map(|()| None),
        }
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
        queue.handle.db.check_value(value)?;
        self.queue_op(queue, Op::Push(value.to_vec(), options))
    }

    /// Adds an ack of `lease` (for `queue`'s group), committed with the batch's other writes:
    /// a consumer's result and its ack in one write. If the lease is no longer held at commit,
    /// the whole batch fails (`LeaseExpired`, `UnknownReservation`) and nothing is written.
    pub fn ack(&mut self, queue: &Queue, lease: Lease) -> Result<&mut Batch> {
        self.queue_op(queue, Op::Ack(lease))
    }

    fn queue_op(&mut self, queue: &Queue, op: Op) -> Result<&mut Batch> {
        defer(self, queue, op)
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
