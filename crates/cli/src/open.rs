//! Opening a database directory: for reading, for writing, or only its storage (the commands
//! that read files without opening the database), and finding keyspaces by name.

use std::path::Path;

use shaledb::storage::std_fs::StdFsStorage;
use shaledb::version::manifest;
use shaledb::{Db, Error, Keyspace, Options, RESERVED_KEYSPACE_PREFIX};

use crate::error::{CliError, DbContext, Result};

/// The storage of the existing database in `dir`, without opening it (no lock, nothing
/// written). `NOT_FOUND` if `dir` is missing or holds no database (`CURRENT`).
pub fn storage(dir: &Path) -> Result<StdFsStorage> {
    let not_found = |file: String| CliError::Db {
        context: format!("opening {}", dir.display()),
        error: Error::NotFound { file },
    };
    if !dir.is_dir() {
        return Err(not_found(format!("{} (no such directory)", dir.display())));
    }
    if !dir.join("CURRENT").is_file() {
        return Err(not_found(format!(
            "{} (not a ShaleDB database: no CURRENT file)",
            dir.join("CURRENT").display()
        )));
    }
    StdFsStorage::open(dir).context(|| format!("opening {}", dir.display()))
}

/// Options for opening an existing database from the tool.
fn options() -> Options {
    let mut options = Options::default();
    options.create_if_missing = false;
    // The tool does short work; flush and compaction only when asked (`compact`).
    options.background_thread = false;
    options
}

/// Opens the existing database in `dir` for a reading command: read-only
/// ([`Options::read_only`]: no lock taken, nothing written), so it works while another
/// process holds the database open, seeing it as of this open.
pub fn for_reading(dir: &Path) -> Result<Db> {
    storage(dir)?;
    let mut options = options();
    options.read_only = true;
    Db::open(dir, options).context(|| format!("opening {} read-only", dir.display()))
}

/// Opens the existing database in `dir` for a checkpoint or an export: a checkpoint needs the
/// lock (a read-only open cannot take one), so `LOCKED` while another process holds it open.
pub fn for_checkpoint(dir: &Path) -> Result<Db> {
    storage(dir)?;
    Db::open(dir, options()).context(|| {
        format!(
            "opening {} (a checkpoint takes the database's lock)",
            dir.display()
        )
    })
}

/// Opens the existing database in `dir` for a writing command (it takes the lock: `LOCKED`
/// while another process holds it open).
pub fn for_writing(dir: &Path) -> Result<Db> {
    storage(dir)?;
    Db::open(dir, options()).context(|| format!("opening {} for writing", dir.display()))
}

/// Opens the database in `dir` for `load`, creating it if missing.
pub fn for_loading(dir: &Path) -> Result<Db> {
    let mut options = options();
    options.create_if_missing = true;
    Db::open(dir, options).context(|| format!("opening {} for writing", dir.display()))
}

/// The names of the keyspaces of the database in `dir`, by id (from its manifest; reserved
/// names start with NUL).
pub fn keyspace_names(dir: &Path) -> Result<Vec<String>> {
    let storage = storage(dir)?;
    let recovered = manifest::recover(&storage)
        .context(|| format!("reading the manifest of {}", dir.display()))?;
    Ok(recovered
        .map(|r| r.versions.keyspaces().values().cloned().collect())
        .unwrap_or_default())
}

/// Whether the database in `dir` has queues (`"queue"`) or topics (`"topic"`) at all: their
/// catalog keyspace exists. Listing them otherwise would create it, which a read-only open
/// refuses.
pub fn has_catalog(dir: &Path, kind: &str) -> Result<bool> {
    let catalog = format!("{RESERVED_KEYSPACE_PREFIX}{kind}s");
    Ok(keyspace_names(dir)?.contains(&catalog))
}

/// Whether `name` is one of ShaleDB's own keyspaces (queues, topics, the bindings' records).
pub fn is_reserved(name: &str) -> bool {
    name.starts_with(RESERVED_KEYSPACE_PREFIX)
}

/// A keyspace name for people: NUL and other control characters escaped (`\0queue:jobs`).
pub fn display_name(name: &str) -> String {
    name.escape_debug().to_string()
}

/// The existing keyspace `name` (reserved ones included) of `db` in `dir`. `NOT_FOUND`
/// (listing the keyspaces there are) if there is none: reading commands never create one.
pub fn existing_keyspace(db: &Db, dir: &Path, name: &str) -> Result<Keyspace> {
    let names = keyspace_names(dir)?;
    if name != "default" && !names.iter().any(|n| n == name) {
        let list: Vec<String> = names.iter().map(|n| display_name(n)).collect();
        return Err(CliError::Missing(format!(
            "no keyspace {} (keyspaces: {})",
            display_name(name),
            list.join(", ")
        )));
    }
    keyspace(db, name)
}

/// Keyspace `name` of `db`, created if missing (for writing commands); reserved names go
/// through [`Db::reserved_keyspace`].
pub fn keyspace(db: &Db, name: &str) -> Result<Keyspace> {
    let ks = if is_reserved(name) {
        db.reserved_keyspace(name)
    } else {
        db.keyspace(name)
    };
    ks.context(|| format!("opening keyspace {}", display_name(name)))
}
