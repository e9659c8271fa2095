//! Consuming items for one group: finding the next deliverable item (released and timed-out
//! items first, then the stream from the group's position: a seek, never a scan over consumed
//! items), leasing it, and finishing it (ack or take), which deletes it once every group is
//! done with it.

use std::ops::Bound;

use crate::db::IterOptions;
use crate::queue::item::{Lease, QueueItem};
use crate::queue::layout::{self, ItemHeader, Pending, PendingState};
use crate::queue::tx::Tx;
use crate::{Error, Result};

/// Consumed items below the swept mark are also covered by one range tombstone once this many
/// have gone by, so that compaction drops whole consumed stretches. Rare enough that a memtable
/// holds few of them (every read builds the set of range tombstones it may cross).
const SWEEP_ITEMS: u64 = 1 << 20;

/// An item about to be delivered.
#[derive(Debug)]
pub(crate) struct Candidate {
    pub id: u64,
    pub value: Vec<u8>,
    pub pushed_at: u64,
    /// Deliveries before this one.
    pub deliveries: u32,
}

impl Candidate {
    pub(crate) fn size(&self) -> u32 {
        u32::try_from(self.value.len()).unwrap_or(u32::MAX)
    }

    pub(crate) fn into_item(self, deliveries: u32, lease_until_ms: Option<u64>) -> QueueItem {
        QueueItem {
            id: self.id,
            value: self.value,
            pushed_at_ms: self.pushed_at,
            deliveries,
            lease_until_ms,
        }
    }
}

impl Tx<'_> {
    /// The next item `group` would get, with the state moved past what it skipped (expired
    /// items are finished, delayed ones become pending) — `None` if nothing is deliverable now.
    pub(crate) fn candidate(&mut self, group: &str) -> Result<Option<Candidate>> {
        let now = self.now;
        // Leases that ran out: their items go back, ready since the lease ended.
        while let Some(&(until, id)) = self.group(group)?.leased.first() {
            if until > now {
                break;
            }
            let Some(&p) = self.group(group)?.pending.get(&id) else {
                break;
            };
            let back = Pending {
                state: PendingState::Ready(until),
                ..p
            };
            self.set_pending(group, id, Some(back))?;
        }
        // Released, timed-out and delayed items, oldest first.
        while let Some(&(at, id)) = self.group(group)?.ready.first() {
            if at > now {
                break;
            }
            let deliveries = self
                .group(group)?
                .pending
                .get(&id)
                .map_or(0, |p| p.deliveries);
            let Some(record) = self.ks.get(&layout::ITEMS.key(id))? else {
                // Discarded meanwhile (a limit, a flush): nothing to deliver.
                self.set_pending(group, id, None)?;
                continue;
            };
            let mut record = record;
            let (header, value) = ItemHeader::decode(&record, self.name)?;
            if header.expires_at <= now {
                self.finish(group, id, value.len() as u64)?;
                continue;
            }
            record.drain(..layout::ITEM_HEADER_LEN);
            return Ok(Some(Candidate {
                id,
                value: record,
                pushed_at: header.pushed_at,
                deliveries,
            }));
        }
        // The stream, from the group's position. Every id from the position up to `next_id` is
        // stored (nothing deletes an item a group has not read past), so an empty stream needs
        // no read, and the item at the position is a point read; an iterator (one for the whole
        // operation: a batch of deliveries reads on where the previous one stopped) is made
        // only when that read misses.
        let mut stream = match self.stream.take() {
            Some((g, it)) if g == group => it,
            _ => loop {
                let next = self.group(group)?.next;
                if next >= self.state.counters.next_id {
                    return Ok(None);
                }
                let Some(record) = self.ks.get(&layout::ITEMS.key(next))? else {
                    break self.ks.iter(IterOptions {
                        lower: Bound::Included(layout::ITEMS.key(next).to_vec()),
                        upper: Bound::Excluded(layout::ITEMS_END.to_vec()),
                        ..IterOptions::default()
                    })?;
                };
                if let Some(candidate) = self.read_past(group, next, record)? {
                    return Ok(Some(candidate));
                }
            },
        };
        while let Some(entry) = stream.next() {
            let (key, record) = entry?;
            let id = layout::ITEMS
                .number(&key)
                .ok_or_else(|| self.damaged("malformed item key"))?;
            if let Some(candidate) = self.read_past(group, id, record)? {
                self.stream = Some((group.to_owned(), stream));
                return Ok(Some(candidate));
            }
        }
        Ok(None)
    }

    /// Moves `group` past item `id` of the stream (stored as `record`): an expired item is
    /// finished, a delayed one becomes a pending entry, a deliverable one is returned.
    fn read_past(
        &mut self,
        group: &str,
        id: u64,
        mut record: Vec<u8>,
    ) -> Result<Option<Candidate>> {
        self.set_next(group, id + 1)?;
        let (header, value) = ItemHeader::decode(&record, self.name)?;
        let now = self.now;
        if header.expires_at <= now {
            self.finish(group, id, value.len() as u64)?;
            return Ok(None);
        }
        if header.visible_at > now {
            let delayed = Pending {
                deliveries: 0,
                state: PendingState::Ready(header.visible_at),
                size: u32::try_from(value.len()).unwrap_or(u32::MAX),
                released: false,
            };
            self.set_pending(group, id, Some(delayed))?;
            return Ok(None);
        }
        // The value is the record's tail: moved to the front in place, no copy allocated.
        record.drain(..layout::ITEM_HEADER_LEN);
        Ok(Some(Candidate {
            id,
            value: record,
            pushed_at: header.pushed_at,
            deliveries: 0,
        }))
    }

    /// `group` is done with item `id` (of `size` bytes): its pending entry goes, and the item
    /// too once every group is done with it.
    pub(crate) fn finish(&mut self, group: &str, id: u64, size: u64) -> Result<()> {
        self.set_pending(group, id, None)?;
        if !self.state.done_for_all(id) {
            return Ok(());
        }
        self.delete(&layout::ITEMS.key(id))?;
        let c = self.counters();
        c.items = c.items.saturating_sub(1);
        c.bytes = c.bytes.saturating_sub(size);
        let floor = self.state.floor();
        let swept = self.state.counters.swept;
        if floor >= swept.saturating_add(SWEEP_ITEMS) {
            self.delete_range(&layout::ITEMS.key(swept), &layout::ITEMS.key(floor))?;
            self.counters().swept = floor;
        }
        Ok(())
    }

    /// Reserves `candidate` for `group` until `until`.
    pub(crate) fn lease(
        &mut self,
        group: &str,
        candidate: Candidate,
        until: u64,
    ) -> Result<QueueItem> {
        let deliveries = candidate.deliveries.saturating_add(1);
        let entry = Pending {
            deliveries,
            state: PendingState::Leased(until),
            size: candidate.size(),
            released: false,
        };
        self.set_pending(group, candidate.id, Some(entry))?;
        Ok(candidate.into_item(deliveries, Some(until)))
    }

    /// The pending entry `lease` names, if `group` holds that lease now. Otherwise
    /// `UnknownReservation` when that delivery never was or was finished by its holder (acked,
    /// or released and not delivered again since), `LeaseExpired` when its lease ran out (or
    /// the item was delivered again since).
    pub(crate) fn held(&mut self, group: &str, lease: Lease) -> Result<Pending> {
        let p = self.group(group)?.pending.get(&lease.id).copied();
        let Some(p) = p else {
            return Err(Error::UnknownReservation {
                queue: self.name.to_owned(),
                id: lease.id,
            });
        };
        match p.state {
            PendingState::Leased(until) if until > self.now && p.deliveries == lease.delivery => {
                Ok(p)
            }
            // Never delivered (delayed), released before any delivery named by the lease, or
            // that very delivery released by its holder.
            _ if p.deliveries < lease.delivery
                || p.deliveries == 0
                || (p.released && p.deliveries == lease.delivery) =>
            {
                Err(Error::UnknownReservation {
                    queue: self.name.to_owned(),
                    id: lease.id,
                })
            }
            _ => Err(Error::LeaseExpired {
                queue: self.name.to_owned(),
                id: lease.id,
            }),
        }
    }

    /// Acks `lease`: the item is gone for `group`.
    pub(crate) fn ack(&mut self, group: &str, lease: Lease) -> Result<()> {
        let p = self.held(group, lease)?;
        self.finish(group, lease.id, u64::from(p.size))
    }

    /// Puts the item of `lease` back at the head of `group`, deliverable after `delay_ms`.
    pub(crate) fn release(&mut self, group: &str, lease: Lease, delay_ms: u64) -> Result<()> {
        let p = self.held(group, lease)?;
        let back = Pending {
            state: PendingState::Ready(self.now.saturating_add(delay_ms)),
            released: true,
            ..p
        };
        self.set_pending(group, lease.id, Some(back))?;
        self.wakes = true;
        Ok(())
    }

    /// Renews `lease` for `lease_ms` from now; returns the new end of the lease.
    pub(crate) fn extend(&mut self, group: &str, lease: Lease, lease_ms: u64) -> Result<u64> {
        let p = self.held(group, lease)?;
        let until = self.now.saturating_add(lease_ms);
        let renewed = Pending {
            state: PendingState::Leased(until),
            ..p
        };
        self.set_pending(group, lease.id, Some(renewed))?;
        Ok(until)
    }

    fn group(&self, group: &str) -> Result<&crate::queue::state::Group> {
        self.state.groups.get(group).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "queue {:?} has no consumer group {group:?} (it was removed)",
                self.name
            ))
        })
    }
}
