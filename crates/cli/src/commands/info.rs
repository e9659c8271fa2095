//! `shaledb info <dir>`: format versions, levels, files and sizes, keyspaces, change cursors
//! and sequence numbers from the files (no open: works whoever holds the database), then
//! queues and topics from an open for reading (skipped with a note if that fails, e.g.
//! `LOCKED`).

use std::path::Path;

use serde_json::{json, Value};
use shaledb::file_names::table_file_name;
use shaledb::sstable::{TableReadOptions, TableReader};
use shaledb::storage::{OpenMode, Storage};
use shaledb::version::manifest;
use shaledb::version::NUM_LEVELS;
use shaledb::write::wal::{parse_wal_file_name, WalReader};
use shaledb::Db;

use crate::error::{CliError, DbContext, Result};
use crate::open;
use crate::output::Out;

mod text;

/// Prints what the database in `dir` holds (text, or JSON with `json`).
pub fn run(dir: &Path, json: bool) -> Result<u8> {
    let info = gather(dir)?;
    let mut out = Out::new();
    if json {
        out.json_pretty(&info)?;
    } else {
        for line in text::lines(&info) {
            out.line(&line)?;
        }
    }
    out.finish()?;
    Ok(0)
}

/// Everything `info` shows, as JSON.
fn gather(dir: &Path) -> Result<Value> {
    let storage = open::storage(dir)?;
    let ctx = || format!("reading {}", dir.display());
    let recovered = manifest::recover(&storage)
        .context(ctx)?
        .ok_or_else(|| CliError::Db {
            context: ctx(),
            error: shaledb::Error::NotFound {
                file: "CURRENT".into(),
            },
        })?;
    let version = recovered.versions.current();
    let mut levels = Vec::new();
    let mut table_formats = std::collections::BTreeSet::new();
    for level in 0..NUM_LEVELS {
        let mut files = Vec::new();
        for meta in version.files(level) {
            let name = table_file_name(meta.number);
            let format = storage
                .open(&name, OpenMode::Read)
                .and_then(|f| TableReader::open(f, TableReadOptions::default()))
                .map(|t| t.properties().format_version);
            if let Ok(v) = format {
                table_formats.insert(v);
            }
            files.push(json!({
                "name": name, "bytes": meta.size, "entries": meta.entries,
                "min_seq": meta.min_seq, "max_seq": meta.max_seq,
                "table_format": format.ok(),
            }));
        }
        levels.push(json!({
            "level": level,
            "files": files.len(),
            "bytes": version.level_bytes(level),
            "tables": files,
        }));
    }
    let mut names = storage.list().context(ctx)?;
    names.sort();
    let mut wals = Vec::new();
    let mut wal_formats = std::collections::BTreeSet::new();
    let mut total_bytes = 0u64;
    let mut all_files = Vec::new();
    for name in &names {
        let bytes = storage
            .open(name, OpenMode::Read)
            .and_then(|f| f.size())
            .unwrap_or(0);
        total_bytes += bytes;
        all_files.push(json!({"name": name, "bytes": bytes}));
        if let Some(number) = parse_wal_file_name(name) {
            let format = WalReader::format(&storage, number).ok();
            if let Some(f) = format.filter(|&f| f > 0) {
                wal_formats.insert(f);
            }
            wals.push(json!({"name": name, "bytes": bytes, "wal_format": format}));
        }
    }
    let keyspaces: Vec<Value> = recovered
        .versions
        .keyspaces()
        .iter()
        .map(|(id, name)| {
            let metadata = recovered.versions.keyspace_metadata().get(id);
            json!({
                "id": id, "name": name, "display": open::display_name(name),
                "reserved": open::is_reserved(name),
                // The recorded encodings (`null`: none recorded).
                "encodings": metadata.and_then(|m| crate::recorded::parse(m)),
            })
        })
        .collect();
    let cursors: serde_json::Map<String, Value> = recovered
        .versions
        .change_cursors()
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let (has_queues, has_topics) = (
        open::has_catalog(dir, "queue")?,
        open::has_catalog(dir, "topic")?,
    );
    let (sequence, topics, queues, open_error) = match open::for_reading(dir) {
        Ok(db) => {
            let seq = db.sequence();
            let t = if has_topics { topics(&db) } else { json!([]) };
            let q = if has_queues {
                queues(&db).unwrap_or_else(|e| json!({"error": e.to_string()}))
            } else {
                json!([])
            };
            let _ = db.close();
            (Some(seq), Some(t), Some(q), None)
        }
        Err(e) => (None, None, None, Some(e.to_string())),
    };
    Ok(json!({
        "path": dir.display().to_string(),
        "manifest": {
            "file": shaledb::file_names::manifest_file_name(recovered.manifest_number),
            "format_version": recovered.format_version,
            "edits": recovered.edits,
            "torn_tail_at": recovered.torn_tail_at,
        },
        "wal_formats": wal_formats,
        "table_formats": table_formats,
        "sequence": sequence,
        "flushed_sequence": recovered.versions.last_sequence(),
        "log_number": recovered.versions.log_number(),
        "levels": levels,
        "wals": wals,
        "files": all_files,
        "total_bytes": total_bytes,
        "keyspaces": keyspaces,
        "change_cursors": cursors,
        "queues": queues,
        "topics": topics,
        "open_error": open_error,
    }))
}

/// Queue names and figures; an entry's `error` says why a queue could not be read.
fn queues(db: &Db) -> Result<Value> {
    let names = db.queues().context(|| "listing queues".to_owned())?;
    let list: Vec<Value> = names
        .iter()
        .map(|name| match db.open_queue(name).and_then(|q| q.stats()) {
            Ok(s) => json!({
                "name": name, "items": s.items, "bytes": s.bytes,
                "oldest_age_ms": s.oldest_age_ms, "reserved": s.reserved,
                "dead_lettered": s.dead_lettered,
                "groups": s.groups.iter().map(|g| json!({"name": g.name, "lag": g.lag, "reserved": g.reserved})).collect::<Vec<_>>(),
            }),
            Err(e) => json!({"name": name, "error": format!("[{}] {e}", e.code())}),
        })
        .collect();
    Ok(Value::Array(list))
}

/// Topic names and figures.
fn topics(db: &Db) -> Value {
    let names = match db.topics() {
        Ok(n) => n,
        Err(e) => return json!({"error": format!("[{}] {e}", e.code())}),
    };
    let list: Vec<Value> = names
        .iter()
        .map(|name| match db.existing_topic(name) {
            Ok(Some(t)) => match t.stats() {
                Ok(s) => json!({
                    "name": name, "first": s.first, "next": s.next, "records": s.next.saturating_sub(s.first),
                    "bytes": s.bytes,
                    "groups": s.groups.iter().map(|(g, c, l)| json!({"name": g, "committed": c, "lag": l})).collect::<Vec<_>>(),
                }),
                Err(e) => json!({"name": name, "error": format!("[{}] {e}", e.code())}),
            },
            Ok(None) => json!({"name": name, "error": "vanished"}),
            Err(e) => json!({"name": name, "error": format!("[{}] {e}", e.code())}),
        })
        .collect();
    Value::Array(list)
}
