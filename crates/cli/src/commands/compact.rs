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
    let bar = progress::bar(0, "compacting", "entries");
    db.flush().context(|| "flushing".to_owned())?;
    // One pass per level: the bar starts again for each, named after it.
    db.compact_range_with_progress(None, None, &mut |p| {
        bar.set_message(format!("compacting L{} into L{}", p.level, p.output_level));
        bar.set_length(p.entries_total);
        bar.set_position(p.entries_done);
    })
    .context(|| "compacting".to_owned())?;
    bar.finish_and_clear();
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
