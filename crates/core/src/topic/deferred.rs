//! Topic writes inside a [`Batch`] or a [`Transaction`]: an event appended with the record it is
//! about (the transactional outbox), or a consumer's output with its offset commit (consume,
//! transform, produce, commit: exactly once within the database). Offsets are given at commit,
//! with the topics locked, so they follow commit order.

use crate::db::{Batch, Transaction};
use crate::named::catalog::validate_group;
use crate::named::deferred::{defer, DeferredOp};
use crate::topic::append;
use crate::topic::handle::{commit_offset, Topic};
use crate::topic::locked::Locked;
use crate::topic::record::NewRecord;
use crate::topic::state::State;
use crate::write::batch::WriteBatch;
use crate::Result;

/// One topic write of a batch.
#[derive(Debug)]
enum Op {
    Append(NewRecord),
    Commit(String, u64),
}

impl DeferredOp for Op {
    type State = State;
    type Handle = Topic;
    const RANK: u8 = 2;

    fn wants_sync(&self) -> bool {
        false
    }

    fn apply(
        &self,
        topic: &Topic,
        t: &mut Locked<'_>,
        batch: &mut WriteBatch,
    ) -> Result<Option<u64>> {
        match self {
            Op::Append(r) => {
                let offsets = append::append(
                    t.state,
                    &topic.handle.ks,
                    std::slice::from_ref(r),
                    t.now,
                    batch,
                )?;
                Ok(offsets.into_iter().next())
            }
            Op::Commit(group, offset) => {
                commit_offset(
                    t.state,
                    &topic.handle.ks,
                    topic.name(),
                    group,
                    *offset,
                    batch,
                )?;
                Ok(None)
            }
        }
    }
}

impl Batch {
    /// Adds an append of `record` to `topic`, committed with the batch's other writes
    /// ([`crate::Db::write_with_ids`] returns its offset among the ids).
    pub fn append(&mut self, topic: &Topic, record: NewRecord) -> Result<&mut Batch> {
        topic.handle.db.check_value(&record.value)?;
        self.topic_op(topic, Op::Append(record))
    }

    /// Adds a commit of `offset` for consumer group `group` of `topic`: a consumer's output and
    /// its progress in one write. Errors at commit: `OffsetOutOfRange` past the next offset.
    pub fn commit_offset(&mut self, topic: &Topic, group: &str, offset: u64) -> Result<&mut Batch> {
        validate_group(group)?;
        self.topic_op(topic, Op::Commit(group.to_owned(), offset))
    }

    fn topic_op(&mut self, topic: &Topic, op: Op) -> Result<&mut Batch> {
        defer(self, topic, op)
    }
}

impl Transaction {
    /// [`Batch::append`] inside the transaction.
    pub fn append(&mut self, topic: &Topic, record: NewRecord) -> Result<()> {
        self.batch_mut().append(topic, record).map(|_| ())
    }

    /// [`Batch::commit_offset`] inside the transaction.
    pub fn commit_offset(&mut self, topic: &Topic, group: &str, offset: u64) -> Result<()> {
        self.batch_mut()
            .commit_offset(topic, group, offset)
            .map(|_| ())
    }
}
