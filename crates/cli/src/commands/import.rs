//! `shaledb import <file.tar> <dir>`: extracts an exported database (from `export`, a
//! browser, or `tar -cf` in GNU, ustar or pax format) into a new directory, by the rules of
//! `docs/FORMAT.md` ("Export archive"): regular files all inside one top-level directory or
//! all at the top level; directory entries and pax global headers skipped; a `LOCK` file
//! skipped. Refused, naming the entry's byte offset: absolute names or `..`, nested
//! directories, links, devices and other entry types, duplicate names, an archive without
//! files (and, from the tar reader, bad checksums and truncation).
//!
//! Files are extracted into a temporary directory beside `dir`, which becomes `dir` when the
//! whole archive is in; then the database is verified (`verify`'s checks, by the rules of a
//! complete copy: a log damaged anywhere but in a zeroed tail is a problem).

use std::collections::HashSet;
use std::fs::File;
use std::io::BufReader;
use std::path::{Component, Path};

use shaledb::storage::std_fs::StdFsStorage;
use shaledb::verify::{verify_storage_with, VerifyOptions};
use tar::EntryType;

use crate::commands::checkpoint::ensure_empty;
use crate::error::{CliError, DbContext, IoContext, Result, EXIT_NO};
use crate::output::Out;
use crate::progress;

/// Imports archive `file` into `dir` (missing or empty).
pub fn run(file: &Path, dir: &Path) -> Result<u8> {
    ensure_empty(dir)?;
    let source = File::open(file).io_context(|| format!("opening {}", file.display()))?;
    let len = source.metadata().map(|m| m.len()).unwrap_or(0);
    let bar = progress::bar(len, "import", "bytes");
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).io_context(|| format!("creating {}", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".shaledb-import-")
        .tempdir_in(&parent)
        .io_context(|| format!("creating a temporary directory in {}", parent.display()))?;
    let bad = |offset: u64, why: String| {
        CliError::usage(format!("{}: entry at byte {offset}: {why}", file.display()))
    };
    let reading = || format!("reading archive {}", file.display());
    let mut archive = tar::Archive::new(BufReader::new(bar.wrap_read(source)));
    let mut top: Option<Option<String>> = None;
    let mut seen = HashSet::new();
    let mut bytes = 0u64;
    for entry in archive.entries().io_context(reading)? {
        let mut entry = entry.io_context(reading)?;
        let offset = entry.raw_header_position();
        let kind = entry.header().entry_type();
        match kind {
            EntryType::Directory | EntryType::XGlobalHeader => continue,
            EntryType::Regular | EntryType::Continuous => {}
            other => {
                return Err(bad(
                    offset,
                    format!("entry type {:?} is not allowed", other.as_byte() as char),
                ))
            }
        }
        let path = entry.path().io_context(reading)?.into_owned();
        let mut parts = Vec::new();
        for c in path.components() {
            match c {
                Component::Normal(p) => parts.push(
                    p.to_str()
                        .ok_or_else(|| bad(offset, "a name that is not UTF-8".to_owned()))?
                        .to_owned(),
                ),
                Component::CurDir => {}
                _ => {
                    return Err(bad(
                        offset,
                        format!("{} is absolute or leaves the archive", path.display()),
                    ))
                }
            }
        }
        let (dir_part, name) = match parts.as_slice() {
            [name] => (None, name.clone()),
            [d, name] => (Some(d.clone()), name.clone()),
            _ => {
                return Err(bad(
                    offset,
                    format!(
                        "{} is nested; files must be at the top level or in one directory",
                        path.display()
                    ),
                ))
            }
        };
        match &top {
            None => top = Some(dir_part),
            Some(t) if *t == dir_part => {}
            Some(_) => {
                return Err(bad(
                    offset,
                    format!(
                        "{} is not in the same directory as the files before it",
                        path.display()
                    ),
                ))
            }
        }
        if name == "LOCK" {
            continue;
        }
        if !seen.insert(name.clone()) {
            return Err(bad(offset, format!("{name} appears twice")));
        }
        let target = staging.path().join(&name);
        let mut out =
            File::create(&target).io_context(|| format!("creating {}", target.display()))?;
        bytes += std::io::copy(&mut entry, &mut out).io_context(reading)?;
        out.sync_all()
            .io_context(|| format!("writing {}", target.display()))?;
    }
    if seen.is_empty() {
        return Err(CliError::usage(format!(
            "{}: the archive holds no files",
            file.display()
        )));
    }
    bar.finish_and_clear();
    let staged = staging.keep();
    if dir.exists() {
        std::fs::remove_dir(dir).io_context(|| format!("replacing empty {}", dir.display()))?;
    }
    std::fs::rename(&staged, dir)
        .io_context(|| format!("moving the files to {}", dir.display()))?;
    let storage = StdFsStorage::open(dir).context(|| format!("opening {}", dir.display()))?;
    let report = verify_storage_with(&storage, VerifyOptions::complete_copy(), &mut |_| {})
        .context(|| format!("verifying {}", dir.display()))?;
    let mut out = Out::new();
    out.line(&format!(
        "imported {} files ({bytes} bytes) into {}: {}",
        seen.len(),
        dir.display(),
        if report.is_ok() {
            "verified, intact".to_owned()
        } else {
            let first = report.problems.first().map(ToString::to_string);
            format!(
                "DAMAGED, {} problems; the first: {}",
                report.problems.len(),
                first.unwrap_or_default()
            )
        }
    ))?;
    out.finish()?;
    Ok(if report.is_ok() { 0 } else { EXIT_NO })
}
