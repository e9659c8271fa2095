//! `shaledb put <dir> <key> <value>` and `shaledb delete <dir> <key>`.

use std::path::Path;

use shaledb::WriteOptions;

use crate::cli::Encodings;
use crate::encoding::from_arg;
use crate::error::{CliError, DbContext, Result};
use crate::open;

/// Sets `key` to `value` in `keyspace` (created if missing), synced.
pub fn run_put(dir: &Path, keyspace: &str, key: &str, value: &str, enc: Encodings) -> Result<u8> {
    let db = open::for_writing(dir)?;
    let ks = open::keyspace(&db, keyspace)?;
    let enc = enc.with_recorded(&db, keyspace);
    let key = from_arg(key, enc.key()).map_err(|e| CliError::usage(format!("key: {e}")))?;
    let value = from_arg(value, enc.value()).map_err(|e| CliError::usage(format!("value: {e}")))?;
    ks.put_opt(&key, &value, WriteOptions::SYNC)
        .context(|| "writing the key".to_owned())?;
    db.close().context(|| "closing the database".to_owned())?;
    Ok(0)
}

/// Deletes `key` from `keyspace` (nothing to do if it is missing), synced.
pub fn run_delete(dir: &Path, keyspace: &str, key: &str, enc: Encodings) -> Result<u8> {
    let db = open::for_writing(dir)?;
    let ks = open::existing_keyspace(&db, dir, keyspace)?;
    let enc = enc.with_recorded(&db, keyspace);
    let key = from_arg(key, enc.key()).map_err(|e| CliError::usage(format!("key: {e}")))?;
    ks.delete_opt(&key, WriteOptions::SYNC)
        .context(|| "deleting the key".to_owned())?;
    db.close().context(|| "closing the database".to_owned())?;
    Ok(0)
}
