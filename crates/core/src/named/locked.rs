//! Running an operation on one or more locked objects (queues, topics) and committing its
//! writes: locks are taken in name order (no deadlock between operations on several objects)
//! and held through the commit (ids, positions and offsets follow commit order); a failed
//! commit undoes every change to the in-memory states; waiters are woken after a commit that
//! made something available.

use std::sync::MutexGuard;

use crate::db::deferred::CommitFn;
use crate::named::handle::Handle;
use crate::named::registry::deleted;
use crate::named::state::{NamedState, Part};
use crate::sorting::sort_by;
use crate::write::batch::WriteBatch;
use crate::Result;

/// Runs `op` with a part ([`NamedState::begin`]) per object of `objects` (deduplicated by
/// name, first occurrence kept, in that order) and `batch`, to which it may add writes; then
/// adds each part's writes and hands the batch to `commit`. On any failure every part is
/// undone. The objects stay locked until this returns. Errors: `InvalidArgument` if an object
/// was deleted (nothing runs).
pub(crate) fn run<S: NamedState, T>(
    objects: &[&Handle<S>],
    batch: WriteBatch,
    commit: &mut CommitFn<'_>,
    op: impl FnOnce(&mut [S::Part<'_>], &mut WriteBatch) -> Result<T>,
) -> Result<T> {
    let (unique, mut guards) = lock_by_name(objects, Handle::name, |o| o.shared.lock());
    if let Some(gone) = unique.iter().find(|o| o.shared.is_deleted()) {
        return Err(deleted(S::KIND, gone.name()));
    }
    let now = unique.first().map_or(0, |o| o.now());
    let mut parts: Vec<S::Part<'_>> = guards
        .iter_mut()
        .zip(&unique)
        .map(|(g, o)| g.begin(o.name(), &o.ks, now))
        .collect();
    let mut batch = batch;
    let result = op(&mut parts, &mut batch).and_then(|value| {
        for part in &mut parts {
            part.write_into(&mut batch)?;
        }
        commit(batch)?;
        Ok(value)
    });
    match result {
        Ok(value) => {
            let wakes: Vec<bool> = parts.iter_mut().map(|p| p.committed()).collect();
            drop(parts);
            for (o, wake) in unique.iter().zip(wakes) {
                if wake {
                    o.shared.notify_all();
                }
            }
            Ok(value)
        }
        Err(e) => {
            for part in &mut parts {
                part.undo();
            }
            Err(e)
        }
    }
}

/// Locks the state of each distinct object of `objects` (by name, first occurrence kept) in
/// name order, so that two operations on several objects never lock them in opposite orders.
/// Returns the distinct objects, in the order given, and their guards, aligned.
fn lock_by_name<'a, H, T>(
    objects: &[&'a H],
    name: impl Fn(&H) -> &str,
    lock: impl Fn(&'a H) -> MutexGuard<'a, T>,
) -> (Vec<&'a H>, Vec<MutexGuard<'a, T>>) {
    if let [o] = objects {
        return (vec![*o], vec![lock(o)]); // the common case, without sorting
    }
    let mut unique: Vec<&'a H> = Vec::with_capacity(objects.len());
    for &o in objects {
        if !unique.iter().any(|u| name(u) == name(o)) {
            unique.push(o);
        }
    }
    let mut order: Vec<usize> = (0..unique.len()).collect();
    sort_by(&mut order, |&a, &b| name(unique[a]).cmp(name(unique[b])));
    let mut slots: Vec<Option<MutexGuard<'a, T>>> = unique.iter().map(|_| None).collect();
    for i in order {
        slots[i] = Some(lock(unique[i]));
    }
    (unique, slots.into_iter().flatten().collect())
}
