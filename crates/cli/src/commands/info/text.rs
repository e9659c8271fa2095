//! `shaledb info` as text: the JSON document `info --json` prints, laid out for people.

use serde_json::Value;

/// The human-readable form of `info --json`'s document, line by line.
pub fn lines(i: &Value) -> Vec<String> {
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
        let encodings = match k["encodings"].as_object() {
            Some(e) => {
                let part = |f: &str| e.get(f).and_then(|v| v.as_str()).unwrap_or("-").to_owned();
                format!(
                    "  keys {}, values {}",
                    part("keyEncoding"),
                    part("valueEncoding")
                )
            }
            None => String::new(),
        };
        lines.push(format!(
            "  {:>4}  {}{mark}{encodings}",
            s(&k["id"]),
            s(&k["display"])
        ));
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
