//! Topic records as they cross (docs/FORMAT.md, "JavaScript ↔ WebAssembly"): to append, one
//! after another, each `key` (a field, or [`NO_FIELD`]: no key), header count `u32`, per header
//! its name (UTF-8) and value (fields), then the value (a field); read back, each preceded by
//! `offset f64, time f64`.

use shaledb::topic::{NewRecord, Record};
use shaledb::Error;

use crate::wire::{js_id, put_field, Reader, NO_FIELD};

/// One record packed in `reader` (layout: the module doc).
fn read_record(reader: &mut Reader<'_>) -> Result<NewRecord, Error> {
    let key = reader.optional_field()?.map(<[u8]>::to_vec);
    let count = reader.u32()?;
    let mut headers = Vec::new();
    for _ in 0..count {
        let name = std::str::from_utf8(reader.field()?)
            .map_err(|_| Error::InvalidArgument("a header name must be UTF-8".into()))?;
        headers.push((name.to_owned(), reader.field()?.to_vec()));
    }
    let value = reader.field()?.to_vec();
    Ok(NewRecord {
        value,
        key,
        headers,
    })
}

/// The records packed in `bytes` (layout: the module doc).
pub fn decode_records(bytes: &[u8]) -> Result<Vec<NewRecord>, Error> {
    let mut reader = Reader::new(bytes, "topic records");
    let mut out = Vec::new();
    while !reader.is_empty() {
        out.push(read_record(&mut reader)?);
    }
    Ok(out)
}

/// The one record packed in `bytes`.
pub fn decode_one_record(bytes: &[u8]) -> Result<NewRecord, Error> {
    let mut reader = Reader::new(bytes, "topic record");
    let record = read_record(&mut reader)?;
    if !reader.is_empty() {
        return Err(Error::InvalidArgument(
            "trailing bytes after a topic record".into(),
        ));
    }
    Ok(record)
}

/// `records` packed (layout: the module doc, with offset and time).
pub fn pack_records(records: &[Record]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&js_id(r.offset)?.to_le_bytes());
        out.extend_from_slice(&(r.time_ms as f64).to_le_bytes());
        match &r.key {
            Some(key) => put_field(&mut out, key),
            None => out.extend_from_slice(&NO_FIELD.to_le_bytes()),
        }
        let headers = u32::try_from(r.headers.len()).unwrap_or(NO_FIELD);
        out.extend_from_slice(&headers.to_le_bytes());
        for (name, value) in &r.headers {
            put_field(&mut out, name.as_bytes());
            put_field(&mut out, value);
        }
        put_field(&mut out, &r.value);
    }
    Ok(out)
}
