//! Running an operation on one or more locked topics and committing its writes: locks taken in
//! name order and held through the commit (offsets follow commit order); a failed commit puts
//! the states back; subscribers are woken after a commit that appended.

use crate::db::catalog::lock_by_name;
use crate::db::deferred::CommitFn;
use crate::topic::handle::{deleted, Topic};
use crate::topic::shared::State;
use crate::write::batch::WriteBatch;
use crate::Result;

/// A topic locked for an operation.
pub(crate) struct Locked<'a> {
    pub topic: &'a Topic,
    pub state: &'a mut State,
}

/// Runs `op` on `topics` (deduplicated, first occurrence kept, in that order), with `batch` to
/// add writes to, then hands the batch to `commit`.
pub(crate) fn run<T>(
    topics: &[&Topic],
    batch: WriteBatch,
    commit: &mut CommitFn<'_>,
    op: impl FnOnce(&mut [Locked<'_>], &mut WriteBatch) -> Result<T>,
) -> Result<T> {
    let (unique, mut guards) = lock_by_name(topics, Topic::name, |t| t.shared.lock());
    if let Some(gone) = guards.iter().zip(&unique).find(|(g, _)| g.deleted) {
        return Err(deleted(gone.1.name()));
    }
    let before: Vec<_> = guards
        .iter()
        .map(|g| (g.counters, g.groups.clone()))
        .collect();
    let mut locked: Vec<Locked<'_>> = guards
        .iter_mut()
        .zip(&unique)
        .map(|(g, t)| Locked { topic: t, state: g })
        .collect();
    let mut batch = batch;
    let result = op(&mut locked, &mut batch).and_then(|value| {
        commit(batch)?;
        Ok(value)
    });
    drop(locked);
    match result {
        Ok(value) => {
            for ((g, t), (counters, _)) in guards.iter().zip(&unique).zip(&before) {
                if g.counters.next != counters.next {
                    t.shared.appended.notify_all();
                }
            }
            Ok(value)
        }
        Err(e) => {
            for (g, (counters, groups)) in guards.iter_mut().zip(before) {
                g.counters = counters;
                g.groups = groups;
            }
            Err(e)
        }
    }
}
