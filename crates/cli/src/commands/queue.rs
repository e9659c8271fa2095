//! `shaledb queue <dir> [name]`: the queues with their figures, or one queue's figures, its
//! consumer groups and its next item (peeked: nothing is consumed).

use std::path::Path;

use serde_json::{json, Value};
use shaledb::Db;

use crate::cli::Encodings;
use crate::encoding::to_json;
use crate::error::{CliError, DbContext, Result};
use crate::open;
use crate::output::Out;

/// Lists queues, or shows `name`.
pub fn run(dir: &Path, name: Option<&str>, enc: Encodings) -> Result<u8> {
    let lines = if open::has_catalog(dir, "queue")? {
        lines(&open::for_reading(dir)?, name, enc)?
    } else if let Some(name) = name {
        return Err(CliError::Missing(format!("no queue {name}")));
    } else {
        Vec::new()
    };
    let mut out = Out::new();
    for line in lines {
        out.json_line(&line)?;
    }
    out.finish()?;
    Ok(0)
}

/// One JSON line per queue.
fn lines(db: &Db, name: Option<&str>, enc: Encodings) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    let all = db.queues().context(|| "listing queues".to_owned())?;
    if let Some(name) = name.filter(|n| !all.iter().any(|q| q == n)) {
        return Err(CliError::Missing(format!("no queue {name}")));
    }
    let names = match name {
        Some(n) => vec![n.to_owned()],
        None => all,
    };
    for n in names {
        let ctx = || format!("reading queue {n}");
        let q = db.open_queue(&n).context(ctx)?;
        let s = q.stats().context(ctx)?;
        let mut line = json!({
            "queue": n, "items": s.items, "bytes": s.bytes, "oldest_age_ms": s.oldest_age_ms,
            "reserved": s.reserved, "dead_lettered": s.dead_lettered,
            "groups": s.groups.iter().map(|g| json!({"name": g.name, "lag": g.lag, "reserved": g.reserved})).collect::<Vec<_>>(),
        });
        if name.is_some() {
            line["next"] = match q.peek().context(ctx)? {
                Some(item) => json!({
                    "id": item.id, "pushed_at_ms": item.pushed_at_ms,
                    "deliveries": item.deliveries,
                    "value": to_json(&item.value, enc.value()),
                }),
                None => Value::Null,
            };
        }
        out.push(line);
    }
    Ok(out)
}
