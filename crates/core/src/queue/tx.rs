//! [`Tx`]: one operation on a locked queue. Every change to the in-memory state goes with its
//! write into the operation's batch and an undo entry, so that a commit that fails (a conflict,
//! a full disk) leaves the state as it was. Nothing is visible to others until the queue's
//! lock is released, which happens after the commit.

use crate::db::{DbIterator, Keyspace};
use crate::named::state::{NamedState, Part};
use crate::queue::layout::{self, Counters, Pending};
use crate::queue::position;
use crate::queue::state::State;
use crate::queue::unwritten::Unwritten;
use crate::write::batch::WriteBatch;
use crate::Result;

/// Room an operation's batch starts with: a small item and its counters or pending entry
/// without growing.
const OP_BATCH_CAPACITY: usize = 192;

/// How an operation changed the state, to be undone in reverse order.
#[derive(Debug)]
enum Undo {
    Next(String, u64),
    Pending(String, u64, Option<Pending>),
    Counters(Counters),
}

/// An operation in progress on one queue (module doc).
pub(crate) struct Tx<'a> {
    pub name: &'a str,
    pub ks: &'a Keyspace,
    pub state: &'a mut State,
    /// "Now" for the whole operation (milliseconds since the Unix epoch).
    pub now: u64,
    /// The operation's writes, stored keys (keyspace prefix included).
    pub batch: WriteBatch,
    undo: Vec<Undo>,
    counters_changed: bool,
    /// Whether the counters changed otherwise than by pushes (then they are written).
    counters_must_write: bool,
    /// Whether an item became available (a push, a release): waiters are woken after commit.
    pub wakes: bool,
    /// The stream iterator of the group being read, kept between deliveries of one operation.
    /// It sees the queue as the operation began, which is all a reader needs: the operation
    /// holds the queue's lock, and only moves forward past what it read.
    pub stream: Option<(String, DbIterator)>,
    /// `(id, bytes)` of the items this operation pushed, oldest first: not in the database
    /// yet, so a limit that discards the oldest items finds them here.
    pub fresh: std::collections::VecDeque<(u64, u64)>,
}

impl<'a> Tx<'a> {
    pub(crate) fn new(name: &'a str, ks: &'a Keyspace, state: &'a mut State, now: u64) -> Tx<'a> {
        Tx {
            name,
            ks,
            state,
            now,
            batch: WriteBatch::with_capacity(OP_BATCH_CAPACITY),
            undo: Vec::new(),
            counters_changed: false,
            counters_must_write: false,
            wakes: false,
            stream: None,
            fresh: std::collections::VecDeque::new(),
        }
    }

    pub(crate) fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.batch.put_prefixed(&self.ks.prefix, key, value)
    }

    pub(crate) fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.batch.delete_prefixed(&self.ks.prefix, key)
    }

    pub(crate) fn delete_range(&mut self, start: &[u8], end: &[u8]) -> Result<()> {
        let start = [&self.ks.prefix[..], start].concat();
        let end = [&self.ks.prefix[..], end].concat();
        self.batch.delete_range(&start, &end)
    }

    /// Moves `group`'s stream position to `next`, writing it when it cannot be derived at open
    /// ([`position::must_write`]).
    pub(crate) fn set_next(&mut self, group: &str, next: u64) -> Result<()> {
        let groups = self.state.groups.len();
        let Some(g) = self.state.groups.get_mut(group) else {
            return Ok(());
        };
        let old = g.next;
        g.next = next;
        self.undo.push(Undo::Next(group.to_owned(), old));
        if !position::must_write(groups, old, next) {
            return Ok(());
        }
        self.put(&layout::group_key(group), &layout::encode_group(next))
    }

    /// Sets (`Some`) or removes (`None`) the pending entry of item `id` in `group`.
    pub(crate) fn set_pending(
        &mut self,
        group: &str,
        id: u64,
        entry: Option<Pending>,
    ) -> Result<()> {
        let Some(g) = self.state.groups.get_mut(group) else {
            return Ok(());
        };
        let old = g.set_pending(id, entry);
        if old.is_none() && entry.is_none() {
            return Ok(());
        }
        self.undo.push(Undo::Pending(group.to_owned(), id, old));
        let key = layout::pending_key(group, id);
        match entry {
            Some(p) => self.put(&key, &p.encode()),
            None => self.delete(&key),
        }
    }

    /// The counters, to change (written at the end of the operation).
    pub(crate) fn counters(&mut self) -> &mut Counters {
        self.counters_must_write = true;
        self.counters_for_push()
    }

    /// The counters, for a push to change: written at the end of the operation only when
    /// enough pushes have gone unwritten (`counters.rs`).
    pub(crate) fn counters_for_push(&mut self) -> &mut Counters {
        if !self.counters_changed {
            self.counters_changed = true;
            self.undo.push(Undo::Counters(self.state.counters));
        }
        &mut self.state.counters
    }

    /// The operation's writes, counters included when due; the state keeps its changes.
    pub(crate) fn take_writes(&mut self) -> Result<WriteBatch> {
        let due = self.counters_must_write || self.state.counters.unwritten.due();
        if self.counters_changed && due {
            self.state.counters.unwritten = Unwritten::default();
            let encoded = self.state.counters.encode();
            self.put(layout::STATS_KEY, &encoded)?;
        }
        self.counters_changed = false;
        self.counters_must_write = false;
        Ok(std::mem::take(&mut self.batch))
    }

    /// Undoes every change to the state (the writes are dropped with the batch).
    pub(crate) fn rollback(&mut self) {
        while let Some(u) = self.undo.pop() {
            match u {
                Undo::Next(group, next) => {
                    if let Some(g) = self.state.groups.get_mut(&group) {
                        g.next = next;
                    }
                }
                Undo::Pending(group, id, old) => {
                    if let Some(g) = self.state.groups.get_mut(&group) {
                        g.set_pending(id, old);
                    }
                }
                Undo::Counters(c) => self.state.counters = c,
            }
        }
        self.counters_changed = false;
        self.counters_must_write = false;
        self.batch = WriteBatch::new();
        self.wakes = false;
        self.stream = None;
        self.fresh.clear();
    }
}

impl NamedState for State {
    const KIND: &'static str = "queue";
    type Part<'a> = Tx<'a>;
    fn begin<'a>(&'a mut self, name: &'a str, ks: &'a Keyspace, now: u64) -> Tx<'a> {
        Tx::new(name, ks, self, now)
    }
}

/// A queue's part in an operation on locked queues ([`crate::named::locked::run`]).
impl Part for Tx<'_> {
    fn name(&self) -> &str {
        self.name
    }

    fn write_into(&mut self, batch: &mut WriteBatch) -> Result<()> {
        let writes = self.take_writes()?;
        if batch.is_empty() {
            // The common case (a queue operation alone): no copy.
            *batch = writes;
            return Ok(());
        }
        batch.append(&writes)
    }

    fn undo(&mut self) {
        self.rollback();
    }

    /// Counts a push or a release in the queue's generation (for waiters that were not
    /// waiting when it happened) and wakes the waiters.
    fn committed(&mut self) -> bool {
        if self.wakes {
            self.state.generation += 1;
        }
        self.wakes
    }
}
