//! `shaledb scan` (one keyspace, a range) and `shaledb dump` (every keyspace): JSON lines
//! `{"keyspace": .., "key": .., "value": ..}`, the input of `load`.

use std::ops::Bound;
use std::path::Path;

use serde_json::json;
use shaledb::{IterOptions, Keyspace};

use crate::cli::Encodings;
use crate::encoding::{from_arg, to_json};
use crate::error::{CliError, DbContext, Result};
use crate::open;
use crate::output::Out;

/// What `scan` covers.
#[derive(Debug, Default)]
pub struct Range {
    /// Only keys with this prefix.
    pub prefix: Option<String>,
    /// First key, inclusive.
    pub start: Option<String>,
    /// Last key, exclusive.
    pub end: Option<String>,
    /// At most this many keys.
    pub limit: Option<u64>,
    /// Backwards.
    pub reverse: bool,
}

/// `scan`: the keys of `keyspace` in `range`.
pub fn run_scan(dir: &Path, keyspace: &str, range: &Range, enc: Encodings) -> Result<u8> {
    let db = open::for_reading(dir)?;
    let ks = open::existing_keyspace(&db, dir, keyspace)?;
    let enc = enc.with_recorded(&db, keyspace);
    let arg = |name: &str, v: &Option<String>| -> Result<Option<Vec<u8>>> {
        v.as_deref()
            .map(|s| from_arg(s, enc.key()))
            .transpose()
            .map_err(|e| CliError::usage(format!("--{name}: {e}")))
    };
    let mut options = IterOptions {
        prefix: arg("prefix", &range.prefix)?,
        reverse: range.reverse,
        ..IterOptions::default()
    };
    if let Some(start) = arg("start", &range.start)? {
        options.lower = Bound::Included(start);
    }
    if let Some(end) = arg("end", &range.end)? {
        options.upper = Bound::Excluded(end);
    }
    let mut out = Out::new();
    print_keyspace(&mut out, &ks, options, range.limit, enc)?;
    out.finish()?;
    Ok(0)
}

/// `dump`: every key of every keyspace (ShaleDB's own only with `include_reserved`).
pub fn run_dump(dir: &Path, include_reserved: bool, enc: Encodings) -> Result<u8> {
    let db = open::for_reading(dir)?;
    let mut names = open::keyspace_names(dir)?;
    if !names.iter().any(|n| n == "default") {
        names.insert(0, "default".to_owned());
    }
    let mut out = Out::new();
    for name in names {
        if open::is_reserved(&name) && !include_reserved {
            continue;
        }
        let ks = open::keyspace(&db, &name)?;
        let enc = enc.with_recorded(&db, &name);
        print_keyspace(&mut out, &ks, IterOptions::default(), None, enc)?;
    }
    out.finish()?;
    Ok(0)
}

/// Prints the keys `options` selects in `ks`, at most `limit`.
fn print_keyspace(
    out: &mut Out,
    ks: &Keyspace,
    options: IterOptions,
    limit: Option<u64>,
    enc: Encodings,
) -> Result<()> {
    let name = ks.name().to_owned();
    let context = || format!("reading keyspace {}", open::display_name(&name));
    let iter = ks.iter(options).context(context)?;
    for (n, item) in iter.enumerate() {
        if limit.is_some_and(|l| n as u64 >= l) {
            break;
        }
        let (key, value) = item.context(context)?;
        out.json_line(&json!({
            "keyspace": name,
            "key": to_json(&key, enc.key()),
            "value": to_json(&value, enc.value()),
        }))?;
    }
    Ok(())
}
