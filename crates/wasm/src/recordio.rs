//! The RecordIO round trip export: a smoke test of the whole stack (JS → Rust core → JS), and
//! the list of the codecs this build has.

use std::sync::Arc;

use js_sys::{Array, Uint8Array};
use shaledb::recordio::{Compression, Reader, ReaderOptions, Writer, WriterFormat, WriterOptions};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};
use wasm_bindgen::prelude::*;

use crate::errors::{invalid, to_js_error};

fn parse_compression(name: &str) -> Result<Compression, JsValue> {
    match name {
        "none" => Ok(Compression::None),
        "snappy" => Ok(Compression::Snappy),
        "gzip" => Ok(Compression::Gzip),
        "lzw" => Ok(Compression::Lzw),
        other => Err(invalid(format!(
            "unknown compression {other:?} (expected \"none\", \"snappy\", \"gzip\" or \"lzw\")"
        ))),
    }
}

fn parse_format(name: &str, compression: Compression) -> Result<WriterFormat, JsValue> {
    match name {
        "shale" => Ok(WriterFormat::Shale),
        "go-v4" => Ok(WriterFormat::GoV4(compression)),
        other => Err(invalid(format!(
            "unknown format {other:?} (expected \"shale\" or \"go-v4\")"
        ))),
    }
}

/// The record compressions this build can write and read, in the order `"none"`, `"snappy"`,
/// `"gzip"`: gzip is an optional feature of the core, left out of the WebAssembly build
/// (`crates/wasm/Cargo.toml`).
#[wasm_bindgen(js_name = recordioCompressions, unchecked_return_type = "string[]")]
pub fn recordio_compressions() -> Array {
    supported_compressions()
        .map(|c| JsValue::from_str(c.name()))
        .collect()
}

/// The compressions [`recordio_round_trip`] can use in this build.
fn supported_compressions() -> impl Iterator<Item = Compression> {
    [Compression::None, Compression::Snappy, Compression::Gzip]
        .into_iter()
        .filter(|c| c.is_supported())
}

/// Writes `records` (each a `Uint8Array`, or `null` for a nil record) into an in-memory RecordIO
/// file with `compression` (`"none"`, `"snappy"`, `"gzip"`) in `format` (`"shale"` or
/// `"go-v4"`), reads the file back sequentially, and returns the records read, in order.
///
/// Errors: `INVALID_ARGUMENT` for an unknown compression or format, or an element that is
/// neither a `Uint8Array` nor `null`; `UNSUPPORTED_COMPRESSION` for a compression this build
/// does not have (see [`recordio_compressions`]); any error of the core's writer or reader.
#[wasm_bindgen(
    js_name = recordioRoundTrip,
    unchecked_return_type = "Array<Uint8Array | null>"
)]
pub fn recordio_round_trip(
    #[wasm_bindgen(unchecked_param_type = "Array<Uint8Array | null>")] records: &Array,
    compression: &str,
    format: &str,
) -> Result<Array, JsValue> {
    let compression = parse_compression(compression)?;
    let format = parse_format(format, compression)?;

    let mut inputs: Vec<Option<Vec<u8>>> = Vec::with_capacity(records.length() as usize);
    for (index, value) in records.iter().enumerate() {
        if value.is_null() {
            inputs.push(None);
        } else if let Some(bytes) = value.dyn_ref::<Uint8Array>() {
            inputs.push(Some(bytes.to_vec()));
        } else {
            return Err(invalid(format!(
                "record {index} is neither a Uint8Array nor null"
            )));
        }
    }

    let outputs = round_trip(&inputs, compression, format).map_err(|e| to_js_error(&e))?;

    let result = Array::new_with_length(outputs.len() as u32);
    for (index, record) in outputs.iter().enumerate() {
        let value: JsValue = match record {
            Some(bytes) => Uint8Array::from(bytes.as_slice()).into(),
            None => JsValue::NULL,
        };
        result.set(index as u32, value);
    }
    Ok(result)
}

/// The core of [`recordio_round_trip`], free of JavaScript types.
fn round_trip(
    records: &[Option<Vec<u8>>],
    compression: Compression,
    format: WriterFormat,
) -> shaledb::Result<Vec<Option<Vec<u8>>>> {
    let storage = MemoryStorage::new();
    let file = storage.open("roundtrip.rio", OpenMode::CreateNew)?;
    let mut writer = Writer::new(
        Arc::clone(&file),
        WriterOptions {
            format,
            compression,
            ..WriterOptions::default()
        },
    )?;
    for record in records {
        writer.write_with(record.as_deref(), compression)?;
    }
    writer.finish()?;

    let mut reader = Reader::open(file, ReaderOptions::default())?;
    let mut out = Vec::with_capacity(records.len());
    while let Some(record) = reader.read_next()? {
        out.push(record.data.map(<[u8]>::to_vec));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_nil_empty_and_binary_records() {
        let records = vec![
            Some(b"hello".to_vec()),
            None,
            Some(Vec::new()),
            Some((0..=255u8).collect()),
        ];
        for compression in supported_compressions() {
            for format in [WriterFormat::Shale, WriterFormat::GoV4(compression)] {
                let out = round_trip(&records, compression, format).unwrap();
                assert_eq!(out, records, "{compression:?} {format:?}");
            }
        }
    }

    #[test]
    fn a_compression_this_build_lacks_is_unsupported_compression() {
        if Compression::Gzip.is_supported() {
            return;
        }
        let records = vec![Some(b"hello".to_vec())];
        for format in [WriterFormat::Shale, WriterFormat::GoV4(Compression::Gzip)] {
            let err = round_trip(&records, Compression::Gzip, format).unwrap_err();
            assert_eq!(err.code(), "UNSUPPORTED_COMPRESSION", "{err}");
        }
    }
}
