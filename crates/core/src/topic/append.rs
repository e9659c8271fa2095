//! Appending under the topic's lock: offsets in commit order, append times that never go back,
//! and retention, all in the write that appends.

use std::ops::Bound;

use crate::db::{IterOptions, Keyspace};
use crate::topic::layout::{self};
use crate::topic::options::millis;
use crate::topic::record::{self, NewRecord};
use crate::topic::state::State;
use crate::topic::tail::Tail;
use crate::write::batch::WriteBatch;
use crate::Result;

/// Adds the writes of appending `records` at `now` to `batch` and moves the counters (the
/// caller restores them if the commit fails). Returns the offsets.
pub(crate) fn append(
    state: &mut State,
    ks: &Keyspace,
    records: &[NewRecord],
    now: u64,
    batch: &mut WriteBatch,
) -> Result<Vec<u64>> {
    let time = now.max(state.counters.last_time);
    let mut offsets = Vec::with_capacity(records.len());
    let mut fresh = Vec::with_capacity(records.len());
    let for_tail = state.tail.wants_records();
    for r in records {
        let encoded = record::encode(r, time)?;
        let offset = state.counters.next;
        batch.put_prefixed(&ks.prefix, &layout::RECORDS.key(offset), &encoded)?;
        fresh.push((offset, encoded.len() as u64, time));
        if for_tail && Tail::could_keep(encoded.len()) {
            state.fresh.push((r.committed(offset, time), encoded.len()));
        }
        state.counters.next += 1;
        state.counters.bytes += encoded.len() as u64;
        offsets.push(offset);
    }
    state.counters.last_time = time;
    retain(state, ks, now, &fresh, batch)?;
    batch.put_prefixed(&ks.prefix, layout::STATS_KEY, &state.counters.encode())?;
    Ok(offsets)
}

/// Drops the oldest records while a retention limit is passed (not past a group's committed
/// offset unless the options say so): one range tombstone, in `batch` after its appends.
/// `fresh` are the records `batch` appends: `(offset, stored size, time)`.
pub(crate) fn retain(
    state: &mut State,
    ks: &Keyspace,
    now: u64,
    fresh: &[(u64, u64, u64)],
    batch: &mut WriteBatch,
) -> Result<()> {
    let o = &state.options;
    let (max_records, max_bytes) = (o.max_records, o.max_bytes);
    let cutoff = o.max_age.map(|a| now.saturating_sub(millis(a)));
    let c = state.counters;
    let stop = state.group_floor().unwrap_or(c.next).min(c.next);
    let over = |first: u64, bytes: u64, time: u64| {
        max_records.is_some_and(|m| c.next - first > m)
            || max_bytes.is_some_and(|m| bytes > m)
            || cutoff.is_some_and(|t| time < t)
    };
    // Without an age limit, nothing to read unless a count or size limit is passed.
    if cutoff.is_none() && !over(c.first, c.bytes, u64::MAX) {
        return Ok(());
    }
    let committed_end = fresh.first().map_or(c.next, |&(o, _, _)| o);
    let (mut first, mut bytes) = (c.first, c.bytes);
    if first < committed_end {
        let stored = ks.iter(IterOptions {
            lower: Bound::Included(layout::RECORDS.key(first).to_vec()),
            upper: Bound::Excluded(layout::RECORDS.key(committed_end).to_vec()),
            ..IterOptions::default()
        })?;
        for entry in stored {
            let (key, value) = entry?;
            let offset = layout::RECORDS.number(&key).unwrap_or(first);
            let time = record::time_of(&value, "")?;
            if offset >= stop || !over(offset, bytes, time) {
                break;
            }
            bytes = bytes.saturating_sub(value.len() as u64);
            first = offset + 1;
        }
    }
    if first >= committed_end {
        for &(offset, size, time) in fresh {
            if offset < first {
                continue;
            }
            if offset >= stop || !over(offset, bytes, time) {
                break;
            }
            bytes = bytes.saturating_sub(size);
            first = offset + 1;
        }
    }
    if first > c.first {
        batch.delete_range(
            &[&ks.prefix[..], &layout::RECORDS.key(c.first)].concat(),
            &[&ks.prefix[..], &layout::RECORDS.key(first)].concat(),
        )?;
        state.counters.first = first;
        state.counters.bytes = bytes;
    }
    Ok(())
}
