//! `shaledb topic <dir> [name]`: the topics with their figures, or records of one topic from
//! an offset (read, not consumed: no group's offset moves).

use std::path::Path;

use serde_json::json;
use shaledb::topic::{From, ReadLimits};

use crate::cli::Encodings;
use crate::encoding::to_json;
use crate::error::{CliError, DbContext, Result};
use crate::open;
use crate::output::Out;

/// Lists topics, or prints up to `limit` records of `name` from `from` (default: earliest).
pub fn run(
    dir: &Path,
    name: Option<&str>,
    from: Option<u64>,
    limit: usize,
    enc: Encodings,
) -> Result<u8> {
    let has_topics = open::has_catalog(dir, "topic")?;
    let db = open::for_reading(dir)?;
    let mut out = Out::new();
    let Some(name) = name else {
        let names = if has_topics {
            db.topics().context(|| "listing topics".to_owned())?
        } else {
            Vec::new()
        };
        for n in names {
            let ctx = || format!("reading topic {n}");
            let Some(t) = db.existing_topic(&n).context(ctx)? else {
                continue;
            };
            let s = t.stats().context(ctx)?;
            out.json_line(&json!({
                "topic": n, "first": s.first, "next": s.next, "bytes": s.bytes,
                "groups": s.groups.iter().map(|(g, c, l)| json!({"name": g, "committed": c, "lag": l})).collect::<Vec<_>>(),
            }))?;
        }
        out.finish()?;
        return Ok(0);
    };
    let ctx = || format!("reading topic {name}");
    let topic = if has_topics {
        db.existing_topic(name).context(ctx)?
    } else {
        None
    };
    let topic = topic.ok_or_else(|| CliError::Missing(format!("no topic {name}")))?;
    let from = from.map_or(From::Earliest, From::Offset);
    let mut remaining = limit;
    let mut next = topic.resolve(&from).context(ctx)?;
    while remaining > 0 {
        let records = topic
            .read(
                &From::Offset(next),
                ReadLimits {
                    limit: remaining.min(1000),
                    ..ReadLimits::default()
                },
            )
            .context(ctx)?;
        let Some(last) = records.last() else { break };
        next = last.offset + 1;
        remaining = remaining.saturating_sub(records.len());
        for r in records {
            let headers: serde_json::Map<String, serde_json::Value> = r
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v, enc.value())))
                .collect();
            out.json_line(&json!({
                "offset": r.offset, "time_ms": r.time_ms,
                "key": r.key.as_deref().map(|k| to_json(k, enc.key())),
                "headers": headers,
                "value": to_json(&r.value, enc.value()),
            }))?;
        }
    }
    out.finish()?;
    Ok(0)
}
