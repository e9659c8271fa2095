//! A topic's in-memory state (counters and committed offsets), loaded from the topic's
//! keyspace on first use in a process and shared by its handles
//! ([`crate::named::registry::Registry`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::db::{IterOptions, Keyspace};
use crate::topic::layout::{self, Counters};
use crate::topic::options::TopicOptions;
use crate::topic::tail::{Kept, Tail};
use crate::Result;

/// A topic's in-memory state.
#[derive(Debug)]
pub(crate) struct State {
    pub options: TopicOptions,
    pub counters: Counters,
    /// Committed offsets of the consumer groups.
    pub groups: BTreeMap<String, u64>,
    /// The committed tail, published after each commit ([`Tail::publish`]).
    pub tail: Arc<Tail>,
    /// The records the operation in progress appended, for the tail (when it wants them).
    pub fresh: Vec<Kept>,
}

impl State {
    pub(crate) fn new(options: TopicOptions) -> State {
        State::with(options, Counters::default(), BTreeMap::new())
    }

    pub(crate) fn load(ks: &Keyspace, name: &str, options: TopicOptions) -> Result<State> {
        let counters = match ks.get(layout::STATS_KEY)? {
            Some(v) => Counters::decode(&v, name)?,
            None => Counters::default(),
        };
        let mut groups = BTreeMap::new();
        for entry in ks.iter(IterOptions::prefix(layout::GROUP_PREFIX.to_vec()))? {
            let (key, value) = entry?;
            let group =
                String::from_utf8(key.get(1..).unwrap_or_default().to_vec()).map_err(|_| {
                    crate::Error::corruption(
                        format!("topic {name:?}"),
                        0,
                        "a group name is not UTF-8",
                    )
                })?;
            groups.insert(group, layout::decode_offset(&value, name)?);
        }
        Ok(State::with(options, counters, groups))
    }

    fn with(options: TopicOptions, counters: Counters, groups: BTreeMap<String, u64>) -> State {
        State {
            options,
            counters,
            groups,
            tail: Arc::new(Tail::new(counters.first, counters.next)),
            fresh: Vec::new(),
        }
    }

    /// The lowest offset a consumer group still needs (retention stops there).
    pub(crate) fn group_floor(&self) -> Option<u64> {
        if self.options.retention_passes_groups {
            return None;
        }
        self.groups.values().min().copied()
    }
}
