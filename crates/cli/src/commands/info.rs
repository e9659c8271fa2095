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

/// Prints what the database in `dir` holds (text, or JSON with `json`).
pub fn run(dir: &Path, json: bool) -> Result<u8> {
    let info = gather(dir)?;
    let mut out = Out::new();
    if json {
        out.json_pretty(&info)?;
    } else {
        for line in text(&info) {
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
            json!({
                "id": id, "name": name, "display": open::display_name(name),
                "reserved": open::is_reserved(name),
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
    let (sequence, topics, open_error) = match open::for_reading(dir) {
        Ok(db) => {
            let seq = db.sequence();
            let t = if has_topics { topics(&db) } else { json!([]) };
            let _ = db.close();
            (Some(seq), Some(t), None)
        }
        Err(e) => (None, None, Some(e.to_string())),
    };
    let queues = match (&open_error, has_queues) {
        (Some(_), _) => None,
        (None, false) => Some(json!([])),
        (None, true) => {
            Some(open::with_queues(dir, queues).unwrap_or_else(|e| json!({"error": e.to_string()})))
        }
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

/// Queue names and figures; `READ_ONLY` if a queue could not be loaded read-only (see
/// [`open::with_queues`]), else an entry's `error` says why it could not be read.
fn queues(db: &Db) -> Result<Value> {
    let names = db.queues().context(|| "listing queues".to_owned())?;
    for name in &names {
        db.open_queue(name)
            .context(|| format!("loading queue {name}"))?;
    }
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

/// The human-readable form of [`gather`]'s JSON.
fn text(i: &Value) -> Vec<String> {
    let s = |v: &Value| match v {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut lines = vec![
        format!("database      {}", s(&i["path"])),
        format!(
            "formats       manifest {} ({}, {} edits), WAL {}, tables {}",
            s(&i["manifest"]["format_version"]),
            s(&i["manifest"]["file"]),
            s(&i["manifest"]["edits"]),
            s(&i["wal_formats"]),
            s(&i["table_formats"])
        ),
        format!(
            "sequence      {} (flushed to tables: {}; log number {})",
            s(&i["sequence"]),
            s(&i["flushed_sequence"]),
            s(&i["log_number"])
        ),
        format!(
            "size          {} bytes in {} files",
            s(&i["total_bytes"]),
            i["files"].as_array().map_or(0, Vec::len)
        ),
        "levels".to_owned(),
    ];
    for l in i["levels"].as_array().into_iter().flatten() {
        lines.push(format!(
            "  L{}  {:>4} files {:>14} bytes",
            s(&l["level"]),
            s(&l["files"]),
            s(&l["bytes"])
        ));
    }
    lines.push("files".to_owned());
    for f in i["files"].as_array().into_iter().flatten() {
        lines.push(format!(
            "  {:<24} {:>14} bytes",
            s(&f["name"]),
            s(&f["bytes"])
        ));
    }
    lines.push("keyspaces".to_owned());
    for k in i["keyspaces"].as_array().into_iter().flatten() {
        let mark = if k["reserved"] == true {
            "  (reserved)"
        } else {
            ""
        };
        lines.push(format!("  {:>4}  {}{mark}", s(&k["id"]), s(&k["display"])));
    }
    lines.push("change cursors".to_owned());
    for (name, seq) in i["change_cursors"].as_object().into_iter().flatten() {
        lines.push(format!("  {name}  at {seq}"));
    }
    if let Some(e) = i["open_error"].as_str() {
        lines.push(format!("queues, topics: not read ({e})"));
        return lines;
    }
    lines.push("queues".to_owned());
    if let Some(e) = i["queues"].get("error") {
        lines.push(format!("  not read: {}", s(e)));
    }
    for q in i["queues"].as_array().into_iter().flatten() {
        match q.get("error") {
            Some(e) => lines.push(format!("  {}  error: {}", s(&q["name"]), s(e))),
            None => lines.push(format!(
                "  {}  {} items, {} bytes, {} reserved, {} dead-lettered, groups {}",
                s(&q["name"]),
                s(&q["items"]),
                s(&q["bytes"]),
                s(&q["reserved"]),
                s(&q["dead_lettered"]),
                q["groups"].as_array().map_or(0, Vec::len)
            )),
        }
    }
    lines.push("topics".to_owned());
    for t in i["topics"].as_array().into_iter().flatten() {
        match t.get("error") {
            Some(e) => lines.push(format!("  {}  error: {}", s(&t["name"]), s(e))),
            None => lines.push(format!(
                "  {}  offsets {}..{} ({} records), {} bytes, groups {}",
                s(&t["name"]),
                s(&t["first"]),
                s(&t["next"]),
                s(&t["records"]),
                s(&t["bytes"]),
                s(&t["groups"])
            )),
        }
    }
    lines
}
