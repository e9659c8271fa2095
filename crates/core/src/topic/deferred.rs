//! Topic writes inside a [`Batch`] or a [`Transaction`]: an event appended with the record it is
//! about (the transactional outbox), or a consumer's output with its offset commit (consume,
//! transform, produce, commit: exactly once within the database). Offsets are given at commit,
//! with the topics locked, so they follow commit order.

use std::any::Any;

use crate::db::deferred::{CommitFn, DeferredWrites};
use crate::db::{Batch, Transaction};
use crate::topic::append;
use crate::topic::handle::{commit_offset, Topic};
use crate::topic::locked;
use crate::topic::record::NewRecord;
use crate::write::batch::WriteBatch;
use crate::Result;

#[derive(Debug)]
enum Op {
    Append(NewRecord),
    Commit(String, u64),
}

/// The topic writes of a batch, with their indexes in the batch.
#[derive(Debug, Default)]
struct TopicOps {
    ops: Vec<(usize, Topic, Op)>,
}

impl DeferredWrites for TopicOps {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn wants_sync(&self) -> bool {
        false
    }

    fn rank(&self) -> u8 {
        2
    }

    fn commit(&self, batch: WriteBatch, commit: &mut CommitFn<'_>) -> Result<Vec<(usize, u64)>> {
        let topics: Vec<&Topic> = self.ops.iter().map(|(_, t, _)| t).collect();
        let now = topics.first().map_or(0, |t| t.registry.clock.now_ms());
        locked::run(&topics, batch, commit, |ts, batch| {
            let mut ids = Vec::new();
            for (index, topic, op) in &self.ops {
                let Some(t) = ts.iter_mut().find(|t| t.topic.name() == topic.name()) else {
                    continue;
                };
                match op {
                    Op::Append(r) => {
                        let offsets = append::append(
                            t.state,
                            &topic.ks,
                            std::slice::from_ref(r),
                            now,
                            batch,
                        )?;
                        ids.extend(offsets.into_iter().map(|o| (*index, o)));
                    }
                    Op::Commit(group, offset) => {
                        commit_offset(t.state, &topic.ks, topic.name(), group, *offset, batch)?;
                    }
                }
            }
            Ok(ids)
        })
    }
}

impl Batch {
    /// Adds an append of `record` to `topic`, committed with the batch's other writes
    /// ([`crate::Db::write_with_ids`] returns its offset among the ids).
    pub fn append(&mut self, topic: &Topic, record: NewRecord) -> Result<&mut Batch> {
        topic.db.check_value(&record.value)?;
        self.topic_op(topic, Op::Append(record))
    }

    /// Adds a commit of `offset` for consumer group `group` of `topic`: a consumer's output and
    /// its progress in one write. Errors at commit: `OffsetOutOfRange` past the next offset.
    pub fn commit_offset(&mut self, topic: &Topic, group: &str, offset: u64) -> Result<&mut Batch> {
        super::validate_name("group", group)?;
        self.topic_op(topic, Op::Commit(group.to_owned(), offset))
    }

    fn topic_op(&mut self, topic: &Topic, op: Op) -> Result<&mut Batch> {
        let (ops, index) = topic.db.defer(self, TopicOps::default)?;
        ops.ops.push((index, topic.clone(), op));
        Ok(self)
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
