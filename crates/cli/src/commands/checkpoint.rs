//! `shaledb checkpoint <dir> <dest>`: a consistent copy in a new directory.

use std::path::Path;

use crate::error::{CliError, DbContext, Result};
use crate::open;
use crate::output::Out;

/// Writes a checkpoint of `dir` into `dest` (missing or empty) and prints the sequence number
/// it is consistent at (a follower opened from it continues from that + 1).
pub fn run(dir: &Path, dest: &Path) -> Result<u8> {
    ensure_empty(dest)?;
    let db = open::for_checkpoint(dir)?;
    let seq = db
        .checkpoint(dest)
        .context(|| format!("writing a checkpoint to {}", dest.display()))?;
    db.close().context(|| "closing the database".to_owned())?;
    let mut out = Out::new();
    out.line(&seq.to_string())?;
    out.finish()?;
    eprintln!(
        "shaledb: checkpoint of {} in {}, consistent at sequence number {seq}",
        dir.display(),
        dest.display()
    );
    Ok(0)
}

/// `ALREADY_EXISTS` unless `dest` is missing or an empty directory.
pub fn ensure_empty(dest: &Path) -> Result<()> {
    let occupied = match std::fs::read_dir(dest) {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(_) => true,
    };
    if occupied {
        return Err(CliError::Db {
            context: format!("writing to {}", dest.display()),
            error: shaledb::Error::AlreadyExists {
                file: format!("{} (must be missing or an empty directory)", dest.display()),
            },
        });
    }
    Ok(())
}
