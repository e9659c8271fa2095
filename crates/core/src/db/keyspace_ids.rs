//! The keyspaces of a database by name: an index of the version set's keyspace records (id to
//! name, as the manifest keeps them) for opening a keyspace by its name.

use std::collections::{BTreeMap, HashMap};

/// Keyspace names to ids. Ids are never reused and names never renamed, so an id found stays
/// valid.
#[derive(Debug, Default)]
pub(crate) struct KeyspaceIds {
    ids: HashMap<String, u32>,
}

impl KeyspaceIds {
    /// The index of `names` (id to name, as the version set keeps them).
    pub(crate) fn of(names: &BTreeMap<u32, String>) -> KeyspaceIds {
        KeyspaceIds {
            ids: names.iter().map(|(id, name)| (name.clone(), *id)).collect(),
        }
    }

    /// The id of keyspace `name`, if it exists.
    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// The id a new keyspace gets: one past the largest in use.
    pub(crate) fn next_id(&self) -> u32 {
        self.ids.values().max().map_or(0, |m| m + 1)
    }

    /// Records that keyspace `name` was created with `id`.
    pub(crate) fn insert(&mut self, name: &str, id: u32) {
        self.ids.insert(name.to_owned(), id);
    }
}
