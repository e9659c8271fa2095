//! The topics of one open database: one shared state per name (counters and committed
//! offsets), loaded from the topic's keyspace on first use in a process.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::db::layers::Layer;
use crate::db::{Clock, Db, Options};
use crate::db::{IterOptions, Keyspace};
use crate::topic::layout::{self, Counters};
use crate::topic::options::TopicOptions;
use crate::Result;

/// A topic's in-memory state.
#[derive(Debug)]
pub(crate) struct State {
    pub options: TopicOptions,
    pub counters: Counters,
    /// Committed offsets of the consumer groups.
    pub groups: BTreeMap<String, u64>,
    /// Set when the topic is deleted: handles still held fail.
    pub deleted: bool,
}

impl State {
    pub(crate) fn new(options: TopicOptions) -> State {
        State {
            options,
            counters: Counters::default(),
            groups: BTreeMap::new(),
            deleted: false,
        }
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
        Ok(State {
            options,
            counters,
            groups,
            deleted: false,
        })
    }

    /// The lowest offset a consumer group still needs (retention stops there).
    pub(crate) fn group_floor(&self) -> Option<u64> {
        if self.options.retention_passes_groups {
            return None;
        }
        self.groups.values().min().copied()
    }
}

/// One topic's state, shared by its handles.
#[derive(Debug)]
pub(crate) struct Shared {
    pub name: String,
    pub state: Mutex<State>,
    /// Notified after an append commits (and when the topic goes).
    pub appended: Condvar,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The topics of a database.
pub(crate) struct Registry {
    pub topics: Mutex<HashMap<String, Arc<Shared>>>,
    pub clock: Clock,
}

impl Layer for Registry {
    fn make(options: &Options) -> Registry {
        Registry {
            topics: Mutex::new(HashMap::new()),
            clock: options.clock.clone(),
        }
    }
}

impl Registry {
    pub(crate) fn of(db: &Db) -> Arc<Registry> {
        db.layer()
    }

    pub(crate) fn topics(&self) -> MutexGuard<'_, HashMap<String, Arc<Shared>>> {
        self.topics.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
