//! When a consumer group's stream position is written, and how it is found again at open
//! (FORMAT.md, "Queues"). With one group, every item below its position is deleted or pending,
//! so the position follows from the items: the stored one is only a lower bound, written when
//! it crosses a multiple of [`STRIDE`] (which bounds the scan at open). With several groups an
//! item below one group's position may stay for another, so every move is written.

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::db::{IterOptions, Keyspace};
use crate::queue::layout::{self, Pending};
use crate::{Error, Result};

/// A lone group's position is written when it crosses a multiple of this: at open, at most
/// this many consumed ids (tombstones) are stepped over to find it.
pub(crate) const STRIDE: u64 = 4096;

/// Whether moving a group's position from `old` to `new` must be written, in a queue of
/// `groups` groups.
pub(crate) fn must_write(groups: usize, old: u64, new: u64) -> bool {
    groups > 1 || old / STRIDE != new / STRIDE
}

/// The position of the only group of a queue: the first stored item from `stored` (the
/// stored position, a lower bound) on that is not one of its `pending` entries, else
/// `next_id`. Items below `swept` are known to be gone and not looked at.
pub(crate) fn derive(
    ks: &Keyspace,
    queue: &str,
    stored: u64,
    swept: u64,
    next_id: u64,
    pending: &BTreeMap<u64, Pending>,
) -> Result<u64> {
    let from = stored.max(swept);
    if from >= next_id {
        return Ok(next_id);
    }
    let items = ks.iter(IterOptions {
        lower: Bound::Included(layout::ITEMS.key(from).to_vec()),
        upper: Bound::Excluded(layout::ITEMS.key(next_id).to_vec()),
        ..IterOptions::default()
    })?;
    for entry in items {
        let (key, _) = entry?;
        let id = layout::ITEMS.number(&key).ok_or_else(|| {
            Error::corruption(format!("queue {queue:?}"), 0, "malformed item key")
        })?;
        if !pending.contains_key(&id) {
            return Ok(id);
        }
    }
    Ok(next_id)
}
