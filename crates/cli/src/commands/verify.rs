//! `shaledb verify <dir>`: every checksum of every file the database depends on
//! ([`shaledb::verify::verify_storage`]: `CURRENT`, the manifest, every data block, index,
//! filter and properties record of every live table, every write-ahead log and the log
//! chain), without opening the database. Exit 0 intact, 1 problems found.

use std::path::Path;

use serde_json::json;
use shaledb::verify::{verify_storage_with, VerifyOptions};

use crate::error::{DbContext, Result, EXIT_NO};
use crate::open;
use crate::output::Out;
use crate::progress;

/// Checks the database in `dir` and prints the report (text, or JSON with `json`).
pub fn run(dir: &Path, json: bool) -> Result<u8> {
    let storage = open::storage(dir)?;
    let bar = progress::bar(0, "verifying", "bytes");
    let report = verify_storage_with(&storage, VerifyOptions::default(), &mut |p| {
        bar.set_length(p.bytes_total);
        bar.set_position(p.bytes_done);
    })
    .context(|| format!("verifying {}", dir.display()))?;
    bar.finish_and_clear();
    let mut out = Out::new();
    if json {
        let files: Vec<_> = report
            .files
            .iter()
            .map(|f| {
                json!({
                    "name": f.name, "role": f.role.as_str(), "bytes": f.bytes,
                    "records": f.records, "note": f.note,
                })
            })
            .collect();
        let problems: Vec<_> = report
            .problems
            .iter()
            .map(|p| {
                json!({
                    "file": p.file, "offset": p.offset, "code": p.error.code(),
                    "message": p.error.to_string(),
                })
            })
            .collect();
        out.json_pretty(&json!({
            "ok": report.is_ok(),
            "manifest": report.manifest,
            "bytes_checked": report.bytes_checked(),
            "files": files,
            "unreferenced": report.unreferenced,
            "problems": problems,
        }))?;
    } else {
        for f in &report.files {
            let note = f
                .note
                .as_deref()
                .map(|n| format!("  ({n})"))
                .unwrap_or_default();
            out.line(&format!(
                "checked  {:<8} {:<24} {:>12} bytes {:>10} records{note}",
                f.role.as_str(),
                f.name,
                f.bytes,
                f.records
            ))?;
        }
        for name in &report.unreferenced {
            out.line(&format!("unreferenced (not read)  {name}"))?;
        }
        for p in &report.problems {
            let at = p
                .offset
                .map(|o| format!(" at offset {o}"))
                .unwrap_or_default();
            out.line(&format!(
                "PROBLEM  {}{at}: [{}] {}",
                p.file,
                p.error.code(),
                p.error
            ))?;
        }
        out.line(&format!(
            "{}: {} files, {} bytes checked, {} problems",
            if report.is_ok() { "OK" } else { "DAMAGED" },
            report.files.len(),
            report.bytes_checked(),
            report.problems.len()
        ))?;
    }
    out.finish()?;
    Ok(if report.is_ok() { 0 } else { EXIT_NO })
}
