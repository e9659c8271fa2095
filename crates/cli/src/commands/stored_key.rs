//! Stored keys in tables and logs: `uvarint(keyspace id) ++ user key`. Shown with the
//! keyspace's name when the file sits in a database directory whose manifest can be read.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::varint::get_uvarint;
use shaledb::version::manifest;

use crate::encoding::{to_json, Encoding};

/// Keyspace names by id, from the manifest of the database `file` is in (empty if there is
/// none or it cannot be read: the dump then shows ids only).
pub fn keyspace_names_near(file: &Path) -> BTreeMap<u32, String> {
    let Some(dir) = file.parent().filter(|d| d.join("CURRENT").is_file()) else {
        return BTreeMap::new();
    };
    let Ok(storage) = StdFsStorage::open(dir) else {
        return BTreeMap::new();
    };
    match manifest::recover(&storage) {
        Ok(Some(r)) => r.versions.keyspaces().clone(),
        _ => BTreeMap::new(),
    }
}

/// `stored` as JSON fields `keyspace_id`, `keyspace` (when known) and `key` (the user key),
/// or `stored_key` alone when it has no valid prefix.
pub fn fields(stored: &[u8], names: &BTreeMap<u32, String>, enc: Encoding) -> Map<String, Value> {
    let mut pos = 0;
    let mut map = Map::new();
    match (
        get_uvarint(stored, &mut pos)
            .ok()
            .and_then(|id| u32::try_from(id).ok()),
        stored.get(pos..),
    ) {
        (Some(id), Some(key)) => {
            map.insert("keyspace_id".into(), json!(id));
            if let Some(name) = names.get(&id) {
                map.insert("keyspace".into(), json!(name));
            }
            map.insert("key".into(), to_json(key, enc));
        }
        _ => {
            map.insert("stored_key".into(), to_json(stored, enc));
        }
    }
    map
}
