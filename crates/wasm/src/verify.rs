//! Export of [`shaledb::verify::verify_storage`]: every file a database depends on, read and
//! checked through a JavaScript storage object, without opening the database (nothing is
//! written, no lock is taken). The browser's `importDatabase` runs it on the files it wrote
//! before it switches to them.

use js_sys::{Array, Object, Reflect};
use shaledb::verify::{verify_storage_with, VerifyOptions, VerifyReport};
use wasm_bindgen::prelude::*;

use crate::errors::{js_result, JsResult};
use crate::js_storage::{JsStorage, StorageHost};

/// Verifies the database stored through `host` and returns its report:
///
/// `{ manifest?: string, bytes: number, files: { name, role, bytes, records, note? }[],
/// unreferenced: string[], problems: { file, offset?, code, message }[] }`
///
/// where `role` is `"current"`, `"manifest"`, `"table"` or `"wal"`, and `code` a stable error
/// code (`"CORRUPTION"`, `"VERSION_UNSUPPORTED"`, ...). Throws (an `Error` with a `code`) when no
/// verdict is possible: `NOT_FOUND` without `CURRENT`, `IO` when the storage fails.
/// `complete_copy`: the files are an archive being imported ([`VerifyOptions::complete_copy`]).
#[wasm_bindgen(js_name = verifyStorage)]
pub fn verify_storage(host: StorageHost, complete_copy: bool) -> JsResult<JsValue> {
    let storage = JsStorage::new(host);
    let mut options = VerifyOptions::default();
    options.complete_copy = complete_copy;
    let report = js_result(verify_storage_with(&storage, options, &mut |_| {}))?;
    Ok(report_object(&report).into())
}

fn report_object(report: &VerifyReport) -> Object {
    let out = Object::new();
    if let Some(manifest) = &report.manifest {
        set(&out, "manifest", &JsValue::from_str(manifest));
    }
    set(
        &out,
        "bytes",
        &JsValue::from_f64(report.bytes_checked() as f64),
    );
    let files = Array::new();
    for file in &report.files {
        let item = Object::new();
        set(&item, "name", &JsValue::from_str(&file.name));
        set(&item, "role", &JsValue::from_str(file.role.as_str()));
        set(&item, "bytes", &JsValue::from_f64(file.bytes as f64));
        set(&item, "records", &JsValue::from_f64(file.records as f64));
        if let Some(note) = &file.note {
            set(&item, "note", &JsValue::from_str(note));
        }
        files.push(&item);
    }
    set(&out, "files", &files);
    let unreferenced: Array = report
        .unreferenced
        .iter()
        .map(|name| JsValue::from_str(name))
        .collect();
    set(&out, "unreferenced", &unreferenced);
    let problems = Array::new();
    for problem in &report.problems {
        let item = Object::new();
        set(&item, "file", &JsValue::from_str(&problem.file));
        if let Some(offset) = problem.offset {
            set(&item, "offset", &JsValue::from_f64(offset as f64));
        }
        set(&item, "code", &JsValue::from_str(problem.error.code()));
        set(
            &item,
            "message",
            &JsValue::from_str(&problem.error.to_string()),
        );
        problems.push(&item);
    }
    set(&out, "problems", &problems);
    out
}

/// Sets `key` on a fresh plain object (which cannot fail).
fn set(object: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}
