//! `shaledb wal dump <file>`: a write-ahead log's header, then one JSON line per record
//! (batches with their sequence numbers and operations, sealed records, synced marks), then
//! how the log ends by recovery's rules (clean, torn tail, or corruption: exit 1).
//!
//! A live log is preallocated: the zeros after its last record are its tail, not damage.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};
use shaledb::recordio::{Reader, ReaderOptions};
use shaledb::storage::{OpenMode, Storage};
use shaledb::write::batch::{BatchOp, WriteBatch};
use shaledb::write::wal::record::{LogHeader, LogRecord};
use shaledb::write::wal::{parse_wal_file_name, WalEnd, WalReader};

use crate::cli::Encodings;
use crate::commands::sst::open_file;
use crate::commands::stored_key::{fields, keyspace_names_near};
use crate::encoding::to_json;
use crate::error::{DbContext, Result, EXIT_NO};
use crate::output::Out;

/// Dumps log `file`.
pub fn run(file: &Path, enc: Encodings) -> Result<u8> {
    let (storage, name) = open_file(file)?;
    let reading = || format!("reading log {}", file.display());
    let handle = storage.open(&name, OpenMode::Read).context(reading)?;
    let mut reader = Reader::open(handle, ReaderOptions::default()).context(reading)?;
    let names = keyspace_names_near(file);
    let mut out = Out::new();
    out.json_line(&json!({
        "file": file.display().to_string(),
        "size": reader.size(),
    }))?;
    let mut format = 0;
    let mut damage: Option<shaledb::Error> = None;
    loop {
        let record = match reader.read_next() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                damage = Some(e);
                break;
            }
        };
        let offset = record.offset;
        let Some(data) = record.data else {
            out.json_line(&json!({"offset": offset, "record": "nil"}))?;
            continue;
        };
        if format == 0 {
            match LogHeader::decode(data, &name) {
                Ok(Some(h)) => {
                    format = 2;
                    out.json_line(&json!({
                        "offset": offset, "record": "header", "wal_format": 2,
                        "log_number": h.number, "first_seq": h.first_seq,
                    }))?;
                    continue;
                }
                Ok(None) => format = 1,
                Err(e) => {
                    damage = Some(e);
                    break;
                }
            }
        }
        let line = if format == 1 {
            batch_line(offset, None, data, &name, &names, enc)
        } else {
            match LogRecord::decode(data, &name, offset) {
                Ok(LogRecord::Batch { synced, batch }) => {
                    batch_line(offset, Some(synced), batch, &name, &names, enc)
                }
                Ok(LogRecord::Sealed { synced, next }) => Ok(json!({
                    "offset": offset, "record": "sealed", "synced": synced, "next_log": next,
                })),
                Ok(LogRecord::SyncedMark { synced }) => Ok(json!({
                    "offset": offset, "record": "synced_mark", "synced": synced,
                })),
                Err(e) => Err(e),
            }
        };
        match line {
            Ok(line) => out.json_line(&line)?,
            Err(e) => {
                damage = Some(e);
                break;
            }
        }
    }
    // The verdict by recovery's rules, for a log named as the database names them.
    let verdict = match parse_wal_file_name(&name) {
        Some(number) => match WalReader::replay(&storage, number, |_, _| Ok(())) {
            Ok(r) => match r.end {
                WalEnd::Clean => {
                    json!({"end": "clean", "batches": r.batches, "last_seq": r.last_seq, "sealed": r.sealed})
                }
                WalEnd::TornTail { valid_up_to } => json!({
                    "end": "torn_tail", "valid_up_to": valid_up_to, "batches": r.batches,
                    "last_seq": r.last_seq,
                    "note": "unsynced writes cut short, or a preallocated tail: recovery stops here",
                }),
            },
            Err(e) => json!({"end": "corruption", "code": e.code(), "message": e.to_string()}),
        },
        None => match &damage {
            None => json!({"end": "clean"}),
            Some(e) => json!({"end": "damaged", "code": e.code(), "message": e.to_string()}),
        },
    };
    let bad = verdict["end"] == "corruption" || verdict["end"] == "damaged";
    out.json_line(&verdict)?;
    out.finish()?;
    Ok(if bad { EXIT_NO } else { 0 })
}

/// One batch record as a JSON line: its sequence numbers and operations.
fn batch_line(
    offset: u64,
    synced: Option<u64>,
    data: &[u8],
    file: &str,
    names: &BTreeMap<u32, String>,
    enc: Encodings,
) -> shaledb::Result<Value> {
    let (first_seq, batch) = WriteBatch::decode(data, file, offset)?;
    let mut ops = Vec::new();
    for (i, op) in batch.iter().enumerate() {
        let mut m = Map::new();
        m.insert("seq".into(), json!(first_seq + i as u64));
        match op {
            BatchOp::Put { key, value } => {
                m.insert("op".into(), json!("put"));
                m.extend(fields(key, names, enc.key()));
                m.insert("value".into(), to_json(value, enc.value()));
            }
            BatchOp::Delete { key } => {
                m.insert("op".into(), json!("delete"));
                m.extend(fields(key, names, enc.key()));
            }
            BatchOp::DeleteRange { start, end } => {
                m.insert("op".into(), json!("delete_range"));
                m.insert(
                    "start".into(),
                    Value::Object(fields(start, names, enc.key())),
                );
                m.insert("end".into(), Value::Object(fields(end, names, enc.key())));
            }
            BatchOp::Annotation { time, meta } => {
                m.insert("op".into(), json!("annotation"));
                m.insert("time_ms".into(), json!(time));
                m.insert("meta".into(), json!(meta.map(|b| to_json(b, enc.value()))));
            }
        }
        ops.push(Value::Object(m));
    }
    Ok(json!({
        "offset": offset, "record": "batch", "synced": synced, "first_seq": first_seq,
        "count": ops.len(), "ops": ops,
    }))
}
