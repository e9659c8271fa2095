//! `shaledb sst dump <file>`: a table's footer and properties, its index (each data block's
//! separator key, offset and length), its range tombstones, then one JSON line per entry
//! (every block's checksum checked).

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use shaledb::recordio::{Reader, ReaderOptions};
use shaledb::sstable::block::{Block, BlockCursor};
use shaledb::sstable::format::{get_varint, Footer, FOOTER_LEN};
use shaledb::sstable::{TableReadOptions, TableReader, ValueKind};
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::storage::{OpenMode, Storage};

use crate::cli::Encodings;
use crate::commands::stored_key::{fields, keyspace_names_near};
use crate::encoding::to_json;
use crate::error::{CliError, DbContext, Result};
use crate::output::Out;

/// The storage of the directory `file` is in, and its name there. `NOT_FOUND` for a missing
/// file (and nothing is created).
pub fn open_file(file: &Path) -> Result<(StdFsStorage, String)> {
    if !file.is_file() {
        return Err(CliError::Db {
            context: format!("opening {}", file.display()),
            error: shaledb::Error::NotFound {
                file: file.display().to_string(),
            },
        });
    }
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| CliError::usage(format!("{}: not a UTF-8 file name", file.display())))?
        .to_owned();
    let storage = StdFsStorage::open(dir).context(|| format!("opening {}", file.display()))?;
    Ok((storage, name))
}

/// Dumps table `file`.
pub fn run(file: &Path, properties_only: bool, enc: Encodings) -> Result<u8> {
    let (storage, name) = open_file(file)?;
    let reading = || format!("reading table {}", file.display());
    let handle = storage.open(&name, OpenMode::Read).context(reading)?;
    let size = handle.size().context(reading)?;
    let mut footer_bytes = [0u8; FOOTER_LEN];
    let footer_at = size
        .checked_sub(FOOTER_LEN as u64)
        .ok_or_else(|| CliError::Db {
            context: reading(),
            error: shaledb::Error::corruption(
                &name,
                0,
                format!("{size} bytes is too short for a table"),
            ),
        })?;
    handle
        .read_exact_at(footer_at, &mut footer_bytes)
        .context(reading)?;
    let footer = Footer::decode(&footer_bytes, &name, footer_at).context(reading)?;
    let table = TableReader::open(handle.clone(), TableReadOptions::default()).context(reading)?;
    let names = keyspace_names_near(file);
    let p = table.properties();
    let handle_json =
        |h: shaledb::sstable::format::BlockHandle| json!({"offset": h.offset, "len": h.len});
    let mut out = Out::new();
    out.json_line(&json!({
        "file": file.display().to_string(),
        "size": size,
        "footer": {
            "table_format_version": footer.version,
            "data_end": footer.data_end,
            "index": handle_json(footer.index),
            "filter": handle_json(footer.filter),
            "properties": handle_json(footer.properties),
        },
        "properties": {
            "format_version": p.format_version,
            "entries": p.entries,
            "data_blocks": p.data_blocks,
            "data_size": p.data_size,
            "raw_key_bytes": p.raw_key_bytes,
            "raw_value_bytes": p.raw_value_bytes,
            "tombstones": p.tombstones,
            "range_tombstones": p.range_tombstones,
            "min_seq": p.min_seq,
            "max_seq": p.max_seq,
            "smallest_key": Value::Object(fields(&p.smallest_key, &names, enc.key())),
            "largest_key": Value::Object(fields(&p.largest_key, &names, enc.key())),
        },
    }))?;
    // The index: each data block's separator key (at or after its last key) and where it is.
    let reader = Reader::open(handle, ReaderOptions::default()).context(reading)?;
    let index_record = reader
        .read_at_sized(footer.index.offset, footer.index.len)
        .context(reading)?;
    let block = Block::new(
        index_record.data.unwrap_or_default(),
        Arc::from(name.as_str()),
        footer.index.offset,
    )
    .context(reading)?;
    let mut cursor = BlockCursor::new(Arc::new(block));
    cursor.seek_to_first().context(reading)?;
    let mut index = Vec::new();
    while cursor.valid() {
        let v = cursor.value();
        let mut pos = 0;
        let mut m = fields(cursor.key(), &names, enc.key());
        m.insert("seq".into(), json!(cursor.seq()));
        m.insert("block_offset".into(), json!(get_varint(v, &mut pos)));
        m.insert("block_len".into(), json!(get_varint(v, &mut pos)));
        index.push(Value::Object(m));
        cursor.next().context(reading)?;
    }
    out.json_line(&json!({ "index": index }))?;
    for t in table.range_tombstones().iter() {
        let mut m = serde_json::Map::new();
        m.insert("range_tombstone".into(), json!(true));
        m.insert("seq".into(), json!(t.seq));
        m.insert(
            "start".into(),
            Value::Object(fields(&t.start, &names, enc.key())),
        );
        m.insert(
            "end".into(),
            Value::Object(fields(&t.end, &names, enc.key())),
        );
        out.json_line(&Value::Object(m))?;
    }
    if properties_only {
        out.finish()?;
        return Ok(0);
    }
    let mut scan = table.scan().context(reading)?;
    while let Some(e) = scan.next_entry().context(reading)? {
        let mut m = fields(e.key, &names, enc.key());
        m.insert("seq".into(), json!(e.seq));
        let kind = match e.kind {
            ValueKind::Value => "value",
            ValueKind::Tombstone => "tombstone",
            ValueKind::RangeTombstone => "range_tombstone",
            _ => "unknown",
        };
        m.insert("kind".into(), json!(kind));
        if e.kind == ValueKind::Value {
            m.insert("value".into(), to_json(e.value, enc.value()));
        }
        out.json_line(&Value::Object(m))?;
    }
    out.finish()?;
    Ok(0)
}
