//! Exports of keyspace metadata ([`shaledb::Keyspace::metadata`]): the small record the
//! JavaScript package keeps each keyspace's key and value encodings in (FORMAT.md, "Keyspace
//! metadata"), and whether a keyspace holds any key (encodings are recorded only for a keyspace
//! that holds none yet).

use shaledb::IterOptions;
use wasm_bindgen::prelude::*;

use crate::db_entry::with_db;
use crate::errors::{js_result, JsResult};

/// The metadata of keyspace `ks` of `db`, or `undefined` if none was set.
#[wasm_bindgen(js_name = dbKeyspaceMetadata)]
pub fn db_keyspace_metadata(db: u32, ks: u32) -> JsResult<Option<Vec<u8>>> {
    js_result(with_db(db, |entry| entry.keyspace(ks)?.metadata()))
}

/// Sets the metadata of keyspace `ks` of `db` (empty removes it): one synced manifest edit.
/// `READ_ONLY` on a read-only open; allowed on a follower.
#[wasm_bindgen(js_name = dbSetKeyspaceMetadata)]
pub fn db_set_keyspace_metadata(db: u32, ks: u32, metadata: &[u8]) -> JsResult<()> {
    js_result(with_db(db, |entry| {
        entry.keyspace(ks)?.set_metadata(metadata)
    }))
}

/// Whether keyspace `ks` of `db` holds no key (at the latest state).
#[wasm_bindgen(js_name = dbKeyspaceIsEmpty)]
pub fn db_keyspace_is_empty(db: u32, ks: u32) -> JsResult<bool> {
    js_result(with_db(db, |entry| {
        match entry.keyspace(ks)?.iter(IterOptions::default())?.next() {
            None => Ok(true),
            Some(first) => first.map(|_| false),
        }
    }))
}
