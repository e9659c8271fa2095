//! A queue's in-memory state: its counters and, per consumer group, the stream position and
//! the pending entries (reserved, released, delayed items). Memory is bounded by the pending
//! entries, never by the backlog. Loaded from the queue's keyspace when first used in a
//! process; every change is written in the same batch as the operation that makes it, except
//! what open derives again (a lone group's position: `position.rs`).

use std::collections::{BTreeMap, BTreeSet};

use crate::db::{IterOptions, Keyspace};
use crate::queue::counters;
use crate::queue::layout::{self, Counters, Pending, PendingState};
use crate::queue::options::QueueOptions;
use crate::queue::position;
use crate::Result;

/// One consumer group.
#[derive(Debug, Default)]
pub(crate) struct Group {
    /// The first id of the stream this group has not looked at yet.
    pub next: u64,
    /// Items of this group below `next` that are reserved or wait to be delivered again.
    pub pending: BTreeMap<u64, Pending>,
    /// `(ready_at, id)` of the pending entries in state `Ready`.
    pub ready: BTreeSet<(u64, u64)>,
    /// `(lease_until, id)` of the pending entries in state `Leased`.
    pub leased: BTreeSet<(u64, u64)>,
}

impl Group {
    pub(crate) fn new(next: u64) -> Group {
        Group {
            next,
            ..Group::default()
        }
    }

    /// Sets (or with `None` removes) the pending entry of `id`, keeping the indexes; returns
    /// the entry it replaced.
    pub(crate) fn set_pending(&mut self, id: u64, entry: Option<Pending>) -> Option<Pending> {
        let old = match entry {
            Some(p) => self.pending.insert(id, p),
            None => self.pending.remove(&id),
        };
        if let Some(old) = old {
            match old.state {
                PendingState::Leased(t) => self.leased.remove(&(t, id)),
                PendingState::Ready(t) => self.ready.remove(&(t, id)),
            };
        }
        if let Some(p) = entry {
            match p.state {
                PendingState::Leased(t) => self.leased.insert((t, id)),
                PendingState::Ready(t) => self.ready.insert((t, id)),
            };
        }
        old
    }

    /// Whether this group is done with item `id` (read past it and not holding it).
    pub(crate) fn done_with(&self, id: u64) -> bool {
        id < self.next && !self.pending.contains_key(&id)
    }

    /// Every item below this id is done for this group.
    pub(crate) fn floor(&self) -> u64 {
        self.pending
            .first_key_value()
            .map_or(self.next, |(&id, _)| id.min(self.next))
    }

    /// When something of this group becomes deliverable by time alone (a delay or a lease
    /// running out), if anything.
    pub(crate) fn next_wake(&self) -> Option<u64> {
        let ready = self.ready.first().map(|&(t, _)| t);
        let lease = self.leased.first().map(|&(t, _)| t);
        match (ready, lease) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// A reservation that came back at load: `(group, id, entry)`.
pub(crate) type Returned = (String, u64, Pending);

/// A queue's state.
#[derive(Debug)]
pub(crate) struct State {
    pub options: QueueOptions,
    pub counters: Counters,
    pub groups: BTreeMap<String, Group>,
    /// Counts pushes, for waiters to see whether one happened while they were not waiting.
    pub generation: u64,
}

impl State {
    /// The state of a queue just created: no items, the default group `""`.
    pub(crate) fn new(options: QueueOptions) -> State {
        let counters = Counters::new();
        let mut groups = BTreeMap::new();
        groups.insert(String::new(), Group::new(counters.next_id));
        State {
            options,
            counters,
            groups,
            generation: 0,
        }
    }

    /// Loads the state of queue `name` from its keyspace. Every reservation open when the
    /// database was last closed (or crashed) comes back ready for delivery at `now`, its
    /// delivery count kept: the consumer that held it is gone. Returns the state and the
    /// entries so changed, `(group, id, entry)`, for the caller to write.
    pub(crate) fn load(
        ks: &Keyspace,
        name: &str,
        options: QueueOptions,
        now: u64,
    ) -> Result<(State, Vec<Returned>)> {
        let counters = match ks.get(layout::STATS_KEY)? {
            Some(v) => counters::complete(ks, name, Counters::decode(&v, name)?)?,
            None => return Ok((State::new(options), Vec::new())),
        };
        let mut returned = Vec::new();
        let mut groups = BTreeMap::new();
        for entry in ks.iter(IterOptions::prefix(layout::GROUP_PREFIX.to_vec()))? {
            let (key, value) = entry?;
            let group = String::from_utf8(key.get(1..).unwrap_or_default().to_vec())
                .map_err(|_| corrupt(name, "a group name is not UTF-8"))?;
            groups.insert(group, Group::new(layout::decode_group(&value, name)?));
        }
        for entry in ks.iter(IterOptions::prefix(layout::PENDING_PREFIX.to_vec()))? {
            let (key, value) = entry?;
            let (group, id) = layout::parse_pending_key(&key)
                .ok_or_else(|| corrupt(name, "malformed pending key"))?;
            let mut pending = Pending::decode(&value, name)?;
            // An entry of a removed group (removal deletes them in the same batch) cannot be;
            // tolerate it by ignoring it.
            let Some(g) = groups.get_mut(&group) else {
                continue;
            };
            if let PendingState::Leased(_) = pending.state {
                pending.state = PendingState::Ready(now);
                returned.push((group, id, pending));
            }
            g.set_pending(id, Some(pending));
        }
        // A lone group's stored position is a lower bound (position.rs).
        let lone = groups.len() == 1;
        if let Some(g) = groups.values_mut().next().filter(|_| lone) {
            g.next = position::derive(
                ks,
                name,
                g.next,
                counters.swept,
                counters.next_id,
                &g.pending,
            )?;
        }
        let state = State {
            options,
            counters,
            groups,
            generation: 0,
        };
        Ok((state, returned))
    }

    /// Every item below this id is done for every group.
    pub(crate) fn floor(&self) -> u64 {
        self.groups
            .values()
            .map(Group::floor)
            .min()
            .unwrap_or(self.counters.next_id)
    }

    /// Whether every group is done with item `id`.
    pub(crate) fn done_for_all(&self, id: u64) -> bool {
        self.groups.values().all(|g| g.done_with(id))
    }
}

fn corrupt(queue: &str, reason: &str) -> crate::Error {
    crate::Error::corruption(format!("queue {queue:?}"), 0, reason)
}
