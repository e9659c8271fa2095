//! `shaledb get <dir> <key>`: one key's value.

use std::path::Path;

use serde_json::json;

use crate::cli::Encodings;
use crate::encoding::{from_arg, to_json, to_text};
use crate::error::{CliError, DbContext, Result, EXIT_NO};
use crate::open;
use crate::output::Out;

/// Prints the value of `key` in `keyspace` (bare, or as a JSON line with `json`); exit 1 with
/// a message on standard error when there is none.
pub fn run(dir: &Path, keyspace: &str, key: &str, enc: Encodings, json: bool) -> Result<u8> {
    let db = open::for_reading(dir)?;
    let ks = open::existing_keyspace(&db, dir, keyspace)?;
    let enc = enc.with_recorded(&db, keyspace);
    let key = from_arg(key, enc.key()).map_err(|e| CliError::usage(format!("key: {e}")))?;
    let value = ks.get(&key).context(|| "reading the key".to_owned())?;
    let Some(value) = value else {
        eprintln!(
            "shaledb: no key {} in keyspace {}",
            to_json(&key, enc.key()),
            open::display_name(keyspace)
        );
        return Ok(EXIT_NO);
    };
    let mut out = Out::new();
    if json {
        out.json_line(&json!({
            "keyspace": keyspace,
            "key": to_json(&key, enc.key()),
            "value": to_json(&value, enc.value()),
        }))?;
    } else {
        out.line(&to_text(&value, enc.value()))?;
    }
    out.finish()?;
    Ok(0)
}
