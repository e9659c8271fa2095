//! `shaledb recordio dump <file>`: any RecordIO file, ShaleDB's or go-sstables' versions 1
//! to 4: the file header, then one JSON line per record. Damage ends the dump with the typed
//! error (exit 2) after the records before it.

use std::path::Path;

use serde_json::json;
use shaledb::recordio::{Reader, ReaderOptions, Version};
use shaledb::storage::OpenMode;

use crate::commands::sst::open_file;
use crate::encoding::{to_json, Encoding};
use crate::error::{DbContext, Result};
use crate::output::Out;

/// Dumps `file`.
pub fn run(file: &Path, enc: Encoding) -> Result<u8> {
    let (storage, name) = open_file(file)?;
    let handle = shaledb::storage::Storage::open(&storage, &name, OpenMode::Read)
        .context(|| format!("opening {}", file.display()))?;
    let mut reader = Reader::open(handle, ReaderOptions::default())
        .context(|| format!("reading {}", file.display()))?;
    let (format, version) = match reader.version() {
        Version::Go(v) => ("go-sstables", v),
        Version::Shale(v) => ("shaledb", v),
    };
    let mut out = Out::new();
    out.json_line(&json!({
        "file": file.display().to_string(),
        "format": format,
        "version": version,
        "compression": reader.file_compression().name(),
        "size": reader.size(),
    }))?;
    let mut records = 0u64;
    loop {
        let record = reader
            .read_next()
            .context(|| format!("reading {} after {records} records", file.display()))?;
        let Some(record) = record else { break };
        records += 1;
        out.json_line(&json!({
            "offset": record.offset,
            "next_offset": record.next_offset,
            "length": record.data.map(<[u8]>::len),
            "data": record.data.map(|d| to_json(d, enc)),
        }))?;
    }
    out.json_line(&json!({ "records": records, "end": "clean" }))?;
    out.finish()?;
    Ok(0)
}
