//! A topic locked for an operation ([`crate::named::locked::run`]): its state, and what undoing
//! the operation puts back if its commit fails (the counters and committed offsets as they
//! were). A commit is published to the topic's tail (`tail.rs`), still locked; subscribers are
//! woken after a commit that appended.

use std::collections::BTreeMap;

use crate::db::Keyspace;
use crate::named::state::{NamedState, Part};
use crate::topic::layout::Counters;
use crate::topic::state::State;
use crate::write::batch::WriteBatch;
use crate::Result;

/// A topic locked for an operation. The operation adds its writes to the operation's batch
/// itself.
pub(crate) struct Locked<'a> {
    pub name: &'a str,
    pub state: &'a mut State,
    /// "Now" for the whole operation (milliseconds since the Unix epoch).
    pub now: u64,
    before: (Counters, BTreeMap<String, u64>),
}

impl<'a> Locked<'a> {
    /// Begins an operation on topic `name`, whose state is locked.
    pub(crate) fn new(name: &'a str, state: &'a mut State, now: u64) -> Self {
        let before = (state.counters, state.groups.clone());
        state.fresh.clear();
        Locked {
            name,
            state,
            now,
            before,
        }
    }
}

impl NamedState for State {
    const KIND: &'static str = "topic";
    type Part<'a> = Locked<'a>;
    fn begin<'a>(&'a mut self, name: &'a str, _: &'a Keyspace, now: u64) -> Locked<'a> {
        Locked::new(name, self, now)
    }

    fn deleted(&mut self) {
        self.tail.close();
    }
}

impl Part for Locked<'_> {
    fn name(&self) -> &str {
        self.name
    }

    fn write_into(&mut self, _: &mut WriteBatch) -> Result<()> {
        Ok(())
    }

    fn undo(&mut self) {
        self.state.counters = self.before.0;
        self.state.groups = std::mem::take(&mut self.before.1);
        self.state.fresh.clear();
    }

    fn committed(&mut self) -> bool {
        let c = self.state.counters;
        if c != self.before.0 {
            let fresh = std::mem::take(&mut self.state.fresh);
            self.state.tail.publish(c.first, c.next, fresh);
        }
        c.next != self.before.0.next
    }
}
