//! `shaledb export <dir> <file.tar>`: the database as the tar archive browsers export
//! (`docs/FORMAT.md`, "Export archive"): a directory entry `<name>/` (mode 0755), then one
//! regular file `<name>/<file>` (mode 0644) per engine file, ustar headers, uid and gid 0,
//! empty owner names, the export time as mtime. `<name>` is the directory's name when it fits
//! 99 bytes, else `database`.
//!
//! The files are those of a checkpoint ([`shaledb::Db::checkpoint`]) taken into a temporary
//! directory beside the archive, so the archive is consistent; the archive is written to a
//! temporary name and renamed into place when complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use tar::{EntryType, Header};

use crate::error::{DbContext, IoContext, Result};
use crate::open;
use crate::output::Out;
use crate::progress;

/// Exports the database in `dir` to `file`.
pub fn run(dir: &Path, file: &Path) -> Result<u8> {
    let db = open::for_checkpoint(dir)?;
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let staging = tempfile::Builder::new()
        .prefix(".shaledb-export-")
        .tempdir_in(&parent)
        .io_context(|| format!("creating a temporary directory in {}", parent.display()))?;
    let seq = db
        .checkpoint(staging.path())
        .context(|| "taking a checkpoint to export".to_owned())?;
    db.close().context(|| "closing the database".to_owned())?;

    let name = archive_name(dir);
    let mut names: Vec<(String, u64)> = Vec::new();
    for entry in std::fs::read_dir(staging.path())
        .io_context(|| format!("listing {}", staging.path().display()))?
    {
        let entry = entry.io_context(|| format!("listing {}", staging.path().display()))?;
        let len = entry
            .metadata()
            .io_context(|| format!("reading {}", entry.path().display()))?
            .len();
        if let Some(n) = entry.file_name().to_str() {
            if n != "LOCK" {
                names.push((n.to_owned(), len));
            }
        }
    }
    names.sort();
    let total: u64 = names.iter().map(|(_, l)| l).sum();
    let bar = progress::bar(total, "export", "bytes");
    let mtime = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);

    let partial = tempfile::Builder::new()
        .prefix(".shaledb-export-")
        .suffix(".tar")
        .tempfile_in(&parent)
        .io_context(|| format!("creating a temporary file in {}", parent.display()))?;
    let writing = || format!("writing {}", file.display());
    let mut builder = tar::Builder::new(BufWriter::new(partial.as_file()));
    let mut dir_header = header(EntryType::Directory, 0o755, 0, mtime);
    builder
        .append_data(&mut dir_header, format!("{name}/"), std::io::empty())
        .io_context(writing)?;
    for (file_name, len) in &names {
        let path = staging.path().join(file_name);
        let source = File::open(&path).io_context(|| format!("reading {}", path.display()))?;
        let mut h = header(EntryType::Regular, 0o644, *len, mtime);
        builder
            .append_data(&mut h, format!("{name}/{file_name}"), bar.wrap_read(source))
            .io_context(writing)?;
    }
    let mut inner = builder.into_inner().io_context(writing)?;
    inner.flush().io_context(writing)?;
    drop(inner);
    partial.as_file().sync_all().io_context(writing)?;
    partial
        .persist(file)
        .map_err(|e| e.error)
        .io_context(writing)?;
    bar.finish_and_clear();
    let mut out = Out::new();
    out.line(&format!(
        "exported {} files ({total} bytes) of {} at sequence number {seq} to {} as {name}/",
        names.len(),
        dir.display(),
        file.display()
    ))?;
    out.finish()?;
    Ok(0)
}

/// The top-level directory name in the archive.
fn archive_name(dir: &Path) -> String {
    let name = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .unwrap_or_default();
    if name.is_empty() || name.len() > 99 || name.contains('/') {
        "database".to_owned()
    } else {
        name
    }
}

/// A ustar header as the browser writes one (path and checksum set by `append_data`).
fn header(kind: EntryType, mode: u32, size: u64, mtime: u64) -> Header {
    let mut h = Header::new_ustar();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(mtime);
    h
}
