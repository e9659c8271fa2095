//! `shaledb compact <dir>`: flushes the memtables and compacts every keyspace down to the
//! deepest level (overwritten versions and tombstones dropped).

use std::path::Path;

use crate::error::{DbContext, Result};
use crate::open;
use crate::output::Out;
use crate::progress;

/// Compacts the database in `dir`; prints the table bytes per level before and after.
pub fn run(dir: &Path) -> Result<u8> {
    let db = open::for_writing(dir)?;
    let before = db.stats();
    let spinner = progress::spinner("compacting");
    db.flush().context(|| "flushing".to_owned())?;
    db.compact_range(None, None)
        .context(|| "compacting".to_owned())?;
    spinner.finish_and_clear();
    let after = db.stats();
    db.close().context(|| "closing the database".to_owned())?;
    let mut out = Out::new();
    out.line(&format!(
        "compacted: {} table files, {} bytes -> {} table files, {} bytes",
        before.level_files.iter().sum::<usize>(),
        before.table_bytes,
        after.level_files.iter().sum::<usize>(),
        after.table_bytes
    ))?;
    out.finish()?;
    Ok(0)
}
