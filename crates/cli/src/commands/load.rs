//! `shaledb load <dir> [file|-]`: JSON lines in, the shape `dump` prints, written in atomic
//! batches.
//!
//! A line is an object `{"keyspace"?: string, "key": .., "value": ..}` (keys and values as in
//! [`crate::encoding`]); `"delete": true`, or no `"value"`, deletes the key. Empty lines are
//! skipped. A bad line stops the load with its line number; the batches before the one it is
//! in stay written (the message says how many lines).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;
use shaledb::{Batch, Db, Keyspace, WriteOptions};

use crate::cli::Encodings;
use crate::encoding::from_json;
use crate::error::{CliError, DbContext, IoContext, Result};
use crate::open;
use crate::progress;

/// Loads `file` (standard input if `None` or `-`) into the database in `dir` (created if
/// missing), `batch` lines per atomic batch; lines without a keyspace go to `keyspace`.
pub fn run(
    dir: &Path,
    file: Option<&Path>,
    keyspace: &str,
    batch: usize,
    enc: Encodings,
) -> Result<u8> {
    if batch == 0 {
        return Err(CliError::usage("--batch must be at least 1"));
    }
    let (input, len): (Box<dyn Read>, Option<u64>) = match file {
        Some(path) if path != Path::new("-") => {
            let f = File::open(path).io_context(|| format!("opening {}", path.display()))?;
            let len = f.metadata().ok().map(|m| m.len());
            (Box::new(f), len)
        }
        _ => (Box::new(std::io::stdin().lock()), None),
    };
    let bar = match len {
        Some(len) => progress::bar(len, "load", "bytes"),
        None => progress::spinner("load"),
    };
    let db = open::for_loading(dir)?;
    let mut loader = Loader {
        db: &db,
        default_keyspace: keyspace,
        keyspaces: HashMap::new(),
        batch: Batch::new(),
        enc,
        written: 0,
        pending: 0,
    };
    let mut reader = BufReader::new(input);
    let mut line = String::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .io_context(|| format!("reading line {}", number + 1))?;
        if n == 0 {
            break;
        }
        number += 1;
        bar.inc(n as u64);
        if line.trim().is_empty() {
            continue;
        }
        loader.add(&line).map_err(|why| {
            CliError::usage(format!(
                "line {number}: {why} ({} earlier lines written)",
                loader.written
            ))
        })?;
        if loader.pending >= batch {
            loader.flush()?;
        }
    }
    loader.flush()?;
    bar.finish_and_clear();
    let written = loader.written;
    db.close().context(|| "closing the database".to_owned())?;
    eprintln!("shaledb: loaded {written} lines");
    Ok(0)
}

/// Collects lines into batches.
struct Loader<'a> {
    db: &'a Db,
    default_keyspace: &'a str,
    /// Keyspaces used so far, with their encodings (given, else recorded).
    keyspaces: HashMap<String, (Keyspace, Encodings)>,
    batch: Batch,
    enc: Encodings,
    /// Lines in batches already written.
    written: u64,
    /// Lines in `batch`.
    pending: usize,
}

impl Loader<'_> {
    /// Adds one line to the batch; the error says what is wrong with it.
    fn add(&mut self, line: &str) -> std::result::Result<(), String> {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let Value::Object(map) = value else {
            return Err("expected an object {\"keyspace\", \"key\", \"value\"}".to_owned());
        };
        let name = match map.get("keyspace") {
            None | Some(Value::Null) => self.default_keyspace.to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(format!("\"keyspace\" must be a string, not {other}")),
        };
        let delete = map.get("delete") == Some(&Value::Bool(true));
        if !self.keyspaces.contains_key(&name) {
            let ks = open::keyspace(self.db, &name).map_err(|e| e.to_string())?;
            let enc = self.enc.with_recorded(self.db, &name);
            self.keyspaces.insert(name.clone(), (ks, enc));
        }
        let (ks, enc) = self
            .keyspaces
            .get(&name)
            .ok_or("keyspace vanished")?
            .clone();
        let key = map.get("key").ok_or("no \"key\"")?;
        let key = from_json(key, enc.key()).map_err(|e| format!("key: {e}"))?;
        match map.get("value") {
            Some(value) if !delete => {
                let value = from_json(value, enc.value()).map_err(|e| format!("value: {e}"))?;
                self.batch.put(&ks, &key, &value)
            }
            _ => self.batch.delete(&ks, &key),
        }
        .map_err(|e| format!("[{}] {e}", e.code()))?;
        self.pending += 1;
        Ok(())
    }

    /// Writes the batch (if any lines are in it).
    fn flush(&mut self) -> Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        self.db
            .write(&self.batch, WriteOptions::default())
            .context(|| format!("writing a batch after {} lines", self.written))?;
        self.written += self.pending as u64;
        self.pending = 0;
        self.batch.clear();
        Ok(())
    }
}
