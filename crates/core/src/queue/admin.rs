//! Consumer groups, statistics and flushing a queue.

use std::ops::Bound;
use std::sync::Arc;

use crate::db::IterOptions;
use crate::named::catalog::validate_group;
use crate::queue::handle::Queue;
use crate::queue::layout::{self, ItemHeader, PendingState};
use crate::queue::options::GroupStart;
use crate::queue::state::Group;
use crate::queue::tx::Tx;
use crate::write::batch::WriteBatch;
use crate::Result;

/// Figures about a queue ([`Queue::stats`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueueStats {
    /// Items stored (not yet done for every group).
    pub items: u64,
    /// Bytes of their values.
    pub bytes: u64,
    /// Age of the oldest stored item, in milliseconds (`None` when empty).
    pub oldest_age_ms: Option<u64>,
    /// Items reserved now, over all groups.
    pub reserved: u64,
    /// Items moved to the dead-letter queue, ever.
    pub dead_lettered: u64,
    /// Per consumer group, by name.
    pub groups: Vec<GroupStats>,
}

/// Figures about one consumer group.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GroupStats {
    /// The group's name (`""`: the default group).
    pub name: String,
    /// Items this group has still to be delivered (pushed after its position, released,
    /// delayed, or back from a lease that ran out).
    pub lag: u64,
    /// Items this group has reserved now.
    pub reserved: u64,
}

impl Queue {
    /// A handle reading for consumer group `name`, created durably if missing, starting at
    /// `start`. Each group sees every item with its own position and reservations.
    pub fn group(&self, name: &str, start: GroupStart) -> Result<Queue> {
        validate_group(name)?;
        let mut state = self.handle.shared.lock_live()?;
        if !state.groups.contains_key(name) {
            let next = match start {
                GroupStart::Tail => state.counters.next_id,
                GroupStart::Head if state.groups.is_empty() => state.counters.swept,
                GroupStart::Head => state.floor(),
            };
            let mut batch = WriteBatch::new();
            batch.put_prefixed(
                &self.handle.ks.prefix,
                &layout::group_key(name),
                &layout::encode_group(next),
            )?;
            // A lone group's stored position was only a lower bound: with two groups every
            // position is written exactly (position.rs).
            for (other, g) in &state.groups {
                batch.put_prefixed(
                    &self.handle.ks.prefix,
                    &layout::group_key(other),
                    &layout::encode_group(g.next),
                )?;
            }
            self.handle.db.write_encoded(batch, false)?;
            state.groups.insert(name.to_owned(), Group::new(next));
        }
        drop(state);
        Ok(Queue {
            group: Arc::from(name),
            ..self.clone()
        })
    }

    /// The names of the queue's consumer groups, sorted (`""` is the default group).
    pub fn groups(&self) -> Result<Vec<String>> {
        let state = self.handle.shared.lock_live()?;
        Ok(state.groups.keys().cloned().collect())
    }

    /// Removes consumer group `name` with its reservations; items no other group needs are
    /// deleted (a scan of the items the group held back). Returns false if it did not exist.
    pub fn remove_group(&self, name: &str) -> Result<bool> {
        validate_group(name)?;
        let mut state = self.handle.shared.lock_live()?;
        let Some(removed) = state.groups.remove(name) else {
            return Ok(false);
        };
        let from = removed.floor().max(state.counters.swept);
        let mut tx = Tx::new(self.name(), &self.handle.ks, &mut state, self.handle.now());
        let result = (|| {
            tx.delete(&layout::group_key(name))?;
            let prefix = layout::pending_prefix(name);
            let end = [&prefix[..], &[0xff; 9]].concat();
            tx.delete_range(&prefix, &end)?;
            if !tx.state.groups.is_empty() {
                reclaim(&mut tx, from)?;
            }
            tx.take_writes()
        })();
        let written = result.and_then(|batch| self.handle.db.write_encoded(batch, false));
        if let Err(e) = written {
            tx.rollback();
            drop(tx);
            state.groups.insert(name.to_owned(), removed);
            return Err(e);
        }
        Ok(true)
    }

    /// Figures about the queue now.
    pub fn stats(&self) -> Result<QueueStats> {
        let state = self.handle.shared.lock_live()?;
        let now = self.handle.now();
        let leased = |g: &Group| g.leased.range((now + 1, 0)..).count() as u64;
        let groups: Vec<GroupStats> = state
            .groups
            .iter()
            .map(|(name, g)| GroupStats {
                name: name.clone(),
                lag: state.counters.next_id.saturating_sub(g.next)
                    + g.pending
                        .values()
                        .filter(|p| match p.state {
                            PendingState::Ready(_) => true,
                            PendingState::Leased(until) => until <= now,
                        })
                        .count() as u64,
                reserved: leased(g),
            })
            .collect();
        let oldest = self
            .handle
            .ks
            .iter(IterOptions {
                lower: Bound::Included(
                    layout::ITEMS
                        .key(state.floor().max(state.counters.swept))
                        .to_vec(),
                ),
                upper: Bound::Excluded(layout::ITEMS_END.to_vec()),
                ..IterOptions::default()
            })?
            .next()
            .transpose()?;
        let oldest_age_ms = match oldest {
            Some((_, record)) => {
                let (header, _) = ItemHeader::decode(&record, self.name())?;
                Some(now.saturating_sub(header.pushed_at))
            }
            None => None,
        };
        Ok(QueueStats {
            items: state.counters.items,
            bytes: state.counters.bytes,
            oldest_age_ms,
            reserved: groups.iter().map(|g| g.reserved).sum(),
            dead_lettered: state.counters.dead_lettered,
            groups,
        })
    }

    /// Drops every item and every reservation, for every group (Kestrel's `FLUSH`). Groups
    /// stay, positioned after the last id pushed.
    pub fn clear(&self) -> Result<()> {
        let mut state = self.handle.shared.lock_live()?;
        let next = state.counters.next_id;
        let mut counters = state.counters;
        counters.items = 0;
        counters.bytes = 0;
        counters.swept = next;
        counters.unwritten = Default::default();
        let p = &self.handle.ks.prefix[..];
        let mut batch = WriteBatch::new();
        batch.delete_range(
            &[p, &layout::ITEMS.key(0)].concat(),
            &[p, layout::ITEMS_END].concat(),
        )?;
        batch.delete_range(&[p, layout::PENDING_PREFIX].concat(), &[p, b"q"].concat())?;
        for name in state.groups.keys() {
            batch.put_prefixed(p, &layout::group_key(name), &layout::encode_group(next))?;
        }
        batch.put_prefixed(p, layout::STATS_KEY, &counters.encode())?;
        self.handle.db.write_encoded(batch, false)?;
        state.counters = counters;
        for g in state.groups.values_mut() {
            *g = Group::new(next);
        }
        Ok(())
    }
}

/// Deletes the stored items from id `from` on that every group is done with (after a group
/// went away). Only ids below every group's position can be done, so the scan stops there.
fn reclaim(tx: &mut Tx<'_>, from: u64) -> Result<()> {
    let until = tx
        .state
        .groups
        .values()
        .map(|g| g.next)
        .min()
        .unwrap_or(from);
    if until <= from {
        return Ok(());
    }
    let items: Vec<(u64, u64)> = tx
        .ks
        .iter(IterOptions {
            lower: Bound::Included(layout::ITEMS.key(from).to_vec()),
            upper: Bound::Excluded(layout::ITEMS.key(until).to_vec()),
            ..IterOptions::default()
        })?
        .map(|e| {
            let (k, v) = e?;
            let id = layout::ITEMS
                .number(&k)
                .ok_or_else(|| tx.damaged("malformed item key"))?;
            let (_, value) = ItemHeader::decode(&v, tx.name)?;
            Ok((id, value.len() as u64))
        })
        .collect::<Result<_>>()?;
    for (id, size) in items {
        if tx.state.done_for_all(id) {
            tx.delete(&layout::ITEMS.key(id))?;
            let c = tx.counters();
            c.items = c.items.saturating_sub(1);
            c.bytes = c.bytes.saturating_sub(size);
        }
    }
    Ok(())
}
