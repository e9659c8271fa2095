//! Running an operation on one or more locked queues and committing its writes: locks are
//! taken in name order (no deadlock between operations on several queues), held through the
//! commit (ids and positions follow commit order), and a failed commit undoes every change to
//! the in-memory state.

use crate::db::catalog::lock_by_name;
use crate::db::deferred::CommitFn;
use crate::queue::handle::Queue;
use crate::queue::tx::Tx;
use crate::write::batch::WriteBatch;
use crate::{Error, Result};

/// Runs `op` with a [`Tx`] per queue of `queues` (deduplicated; `op` gets them in the order of
/// `queues` with duplicates removed, first occurrence kept), appends the writes to `batch` and
/// hands it to `commit`.
pub(crate) fn run<T>(
    queues: &[&Queue],
    batch: WriteBatch,
    commit: &mut CommitFn<'_>,
    op: impl FnOnce(&mut [Tx<'_>]) -> Result<T>,
) -> Result<T> {
    let (unique, mut guards) = lock_by_name(queues, Queue::name, |q| q.shared.lock());
    if let Some(gone) = guards.iter().zip(&unique).find(|(g, _)| g.deleted) {
        return Err(deleted(gone.1.name()));
    }
    let now = unique.first().map_or(0, |q| q.registry.now());
    let mut txs: Vec<Tx<'_>> = guards
        .iter_mut()
        .zip(&unique)
        .map(|(g, q)| Tx::new(q.name(), &q.ks, g, now))
        .collect();
    let result = op(&mut txs).and_then(|value| {
        let mut batch = batch;
        for tx in &mut txs {
            batch.append(&tx.take_writes()?)?;
        }
        commit(batch)?;
        Ok(value)
    });
    let wakes: Vec<bool> = txs.iter().map(|t| t.wakes).collect();
    let value = match result {
        Ok(value) => value,
        Err(e) => {
            for tx in &mut txs {
                tx.rollback();
            }
            return Err(e);
        }
    };
    drop(txs);
    for ((guard, q), wake) in guards.iter_mut().zip(&unique).zip(wakes) {
        if wake {
            guard.generation += 1;
            q.shared.available.notify_all();
        }
    }
    Ok(value)
}

/// Runs `op` on `queue` alone and undoes everything it changed (reads that move through the
/// state, like a peek).
pub(crate) fn inspect<T>(queue: &Queue, op: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
    let mut guard = queue.shared.lock();
    if guard.deleted {
        return Err(deleted(queue.name()));
    }
    let mut tx = Tx::new(queue.name(), &queue.ks, &mut guard, queue.registry.now());
    let result = op(&mut tx);
    tx.rollback();
    result
}

pub(crate) fn deleted(name: &str) -> Error {
    Error::InvalidArgument(format!("queue {name:?} was deleted"))
}
