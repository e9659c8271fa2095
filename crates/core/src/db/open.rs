//! Opening a database: recovery, in steps that can each fail or crash and be run again.
//!
//! 1. Take the lock; read `CURRENT` and replay the manifest it names. No `CURRENT` in a
//!    directory that holds a database's files is corruption, never a new database over them.
//! 2. Replay the logs ([`super::recovery`]). Nothing is changed so far, except that logs
//!    whose never-synced writes recovery dropped are deleted (a later open decides the same
//!    without them).
//! 3. Write what the logs held to a new level-0 table (synced), and create a new, empty log
//!    (synced, with its directory entry) that starts after the last recovered sequence number.
//! 4. Write a new manifest holding the whole state (the table, the new log as log number) and
//!    switch `CURRENT` to it. This is the one step that changes what the database is.
//! 5. Delete what is obsolete: older logs, tables no version names, older manifests.
//!
//! A failure or crash before step 4 completes leaves the old manifest current and every old
//! file in place, so the next open recovers the same writes; the files steps 3 and 4 made are
//! unreferenced (an empty log is allowed to lie outside the chain) and step 5 of a later open
//! removes them.

use std::sync::Arc;

use crate::db::core::DbInner;
use crate::db::keys::DEFAULT_KEYSPACE;
use crate::db::options::Options;
use crate::db::recovery::{recover_logs, LogRules, RecoveredLogs};
use crate::db::versions::Versions;
use crate::db::write_path::WritePath;
use crate::file_names::{parse_file_name, FileKind};
use crate::memtable::MemTable;
use crate::storage::Storage;
use crate::version::edit::VersionEdit;
use crate::version::manifest::{self, ManifestOptions, ManifestWriter};
use crate::version::VersionSet;
use crate::write::wal::{self, WalReader, WalWriter};
use crate::{Error, Result};

impl DbInner {
    /// Opens or creates the database in `storage` (module doc); read-only opens go to
    /// [`DbInner::open_read_only`].
    pub(crate) fn open(storage: Arc<dyn Storage>, options: Options) -> Result<DbInner> {
        validate(&options)?;
        if options.read_only {
            return DbInner::open_read_only(storage, options);
        }
        let lock = storage.lock(crate::file_names::LOCK)?;
        let Recovered { mut versions, logs } = recover(&storage, &options)?;
        for &number in &logs.dropped {
            storage.remove(&wal::wal_file_name(number))?;
        }

        // From here on, new files only, until the new manifest is current.
        let table_options = options.table_options();
        let mut edit = VersionEdit::default();
        let mut flushed_bytes = 0;
        if !logs.mem.is_empty() {
            let number = versions.new_file_number();
            let meta = crate::compaction::output::flush(
                &storage,
                number,
                &mut logs.mem.iter(),
                &table_options,
            )?;
            if let Some(meta) = meta {
                flushed_bytes = meta.size;
                edit.files_added.push((0, meta));
            }
        }
        let wal_number = versions.new_file_number();
        // Creating the log also syncs the directory: the table's entry is durable with it.
        let wal_writer = WalWriter::create(
            &*storage,
            wal_number,
            logs.last_seq + 1,
            options.wal_options(),
        )?;
        edit.log_number = Some(wal_number);
        edit.last_sequence = Some(logs.last_seq);
        if !versions.keyspaces().contains_key(&DEFAULT_KEYSPACE) {
            edit.keyspaces_created
                .push((DEFAULT_KEYSPACE, "default".to_owned()));
        }
        versions.apply(&edit)?;
        let manifest_writer =
            ManifestWriter::create(storage.clone(), &mut versions, ManifestOptions::default())?;

        let writes = WritePath::new(wal_writer, versions.last_sequence());
        let mem = Arc::new(MemTable::new());
        let read_only = options.read_only;
        let versions = Versions::new(versions, manifest_writer, mem, wal_number, read_only);
        let inner = DbInner::assemble(storage, options, versions, writes, Some(lock));
        inner.maintenance.add_table_bytes(flushed_bytes);
        inner
            .changes
            .logs()
            .created(wal_number, inner.writes.visible_seq() + 1);
        inner.delete_obsolete_files(&mut inner.maintenance.lock())?;
        Ok(inner)
    }
}

/// Steps 1 and 2 of the module doc after the lock: the manifest's state and the logs replayed
/// into a memtable. Changes no file.
pub(crate) struct Recovered {
    pub(crate) versions: VersionSet,
    pub(crate) logs: RecoveredLogs,
}

/// Reads the manifest `CURRENT` names and replays the logs (steps 1 and 2 of the module doc).
/// A directory without `CURRENT` is a new database, if `options` allow one.
pub(crate) fn recover(storage: &Arc<dyn Storage>, options: &Options) -> Result<Recovered> {
    let names = storage.list()?;
    let recovered = manifest::recover(&**storage)?;

    let manifest_name = recovered.as_ref().map_or_else(String::new, |r| {
        crate::file_names::manifest_file_name(r.manifest_number)
    });
    let (mut versions, rules) = match recovered {
        Some(r) => {
            if options.error_if_exists {
                return Err(Error::AlreadyExists {
                    file: "CURRENT".into(),
                });
            }
            let rules = if r.format_version >= 2 {
                LogRules::Chained
            } else {
                LogRules::Legacy
            };
            let mut versions = r.versions;
            check_tables_exist(&mut versions, &names, r.manifest_number)?;
            if rules == LogRules::Legacy {
                check_legacy_log_number(&versions, &names, r.manifest_number)?;
            }
            (versions, rules)
        }
        None => {
            refuse_files_without_current(&**storage, &names)?;
            if !options.create_if_missing {
                return Err(Error::NotFound {
                    file: "CURRENT".into(),
                });
            }
            (VersionSet::new(), LogRules::None)
        }
    };
    for name in &names {
        if let Some(FileKind::Wal(n) | FileKind::Table(n) | FileKind::Manifest(n)) =
            parse_file_name(name)
        {
            versions.mark_file_number_used(n);
        }
    }
    let logs = recover_logs(
        &**storage,
        &names,
        &manifest_name,
        versions.log_number(),
        versions.last_sequence(),
        rules,
    )?;

    Ok(Recovered { versions, logs })
}

/// Refuses a manifest that names tables which are gone: a manifest whose damaged last edits
/// were taken for a torn tail (an edit is synced, and the tables it adds have durable entries,
/// before anything it makes obsolete is deleted). Opening it would show stale data or fail
/// reads later.
fn check_tables_exist(
    versions: &mut VersionSet,
    names: &[String],
    manifest_number: u64,
) -> Result<()> {
    let manifest = crate::file_names::manifest_file_name(manifest_number);
    let present: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    for number in versions.live_files() {
        let table = crate::file_names::table_file_name(number);
        if !present.contains(table.as_str()) {
            return Err(Error::corruption(
                manifest,
                0,
                format!("lists table {table}, which is missing (the manifest lost edits?)"),
            ));
        }
    }
    Ok(())
}

/// Format 1 databases: the log number names an existing log whenever newer logs exist (a log
/// was synced, so it survived a crash, before a newer one was created).
fn check_legacy_log_number(
    versions: &VersionSet,
    names: &[String],
    manifest_number: u64,
) -> Result<()> {
    let log = versions.log_number();
    let log_wal = wal::wal_file_name(log);
    let newer_wals = names
        .iter()
        .filter_map(|n| wal::parse_wal_file_name(n))
        .any(|n| n > log);
    if log > 0 && newer_wals && !names.contains(&log_wal) {
        return Err(Error::corruption(
            crate::file_names::manifest_file_name(manifest_number),
            0,
            format!(
                "its log number names {log_wal}, which is missing while newer WALs exist \
                 (the manifest lost edits?)"
            ),
        ));
    }
    Ok(())
}

/// A directory without `CURRENT` is a new database only if it holds no data of one: no table
/// and no log holding a write (the data of a database lives there; an interrupted creation
/// leaves at most an empty log and a manifest, which are cleaned up). Anything else is
/// `Corruption`: `CURRENT` was lost, and creating a database would delete the data. The message
/// names the newest manifest that replays, the usual repair.
fn refuse_files_without_current(storage: &dyn Storage, names: &[String]) -> Result<()> {
    let mut found = Vec::new();
    let mut manifests = Vec::new();
    for name in names {
        let what = match parse_file_name(name) {
            Some(FileKind::Table(_)) => Some("a table".to_owned()),
            Some(FileKind::Wal(n)) => match WalReader::replay(storage, n, |_, _| Ok(())) {
                Ok(r) if r.last_seq.is_none() => None,
                Ok(r) => Some(format!("a log holding {} batches", r.batches)),
                Err(e) => Some(format!("a log that does not replay ({e})")),
            },
            Some(FileKind::Manifest(n)) => {
                if manifest::replay(storage, n).is_ok() {
                    manifests.push(n);
                }
                None
            }
            _ => None,
        };
        if let Some(what) = what {
            found.push(format!("{name}: {what}"));
        }
    }
    let Some(first) = found.first() else {
        return Ok(());
    };
    let repair = match manifests.iter().max() {
        Some(&n) => format!(
            "; if {0} is the newest complete manifest, a file CURRENT holding the line \"{0}\" \
             recovers the database",
            crate::file_names::manifest_file_name(n)
        ),
        None => String::new(),
    };
    Err(Error::corruption(
        crate::file_names::CURRENT,
        0,
        format!(
            "CURRENT is missing but the directory holds {} file(s) with a database's data \
             ({first}, ...); refusing to create a new database over them{repair}",
            found.len()
        ),
    ))
}

fn validate(options: &Options) -> Result<()> {
    if options.max_key_size > crate::write::batch::MAX_USER_KEY_SIZE {
        return Err(Error::InvalidArgument(format!(
            "max_key_size {} is over the format's limit of {} bytes",
            options.max_key_size,
            crate::write::batch::MAX_USER_KEY_SIZE
        )));
    }
    if options.max_value_size > crate::write::batch::MAX_VALUE_SIZE {
        return Err(Error::InvalidArgument(format!(
            "max_value_size {} is over the format's limit of {} bytes",
            options.max_value_size,
            crate::write::batch::MAX_VALUE_SIZE
        )));
    }
    if options.memtable_size < 64 * 1024 {
        return Err(Error::InvalidArgument(
            "memtable_size must be at least 64 KiB".into(),
        ));
    }
    Ok(())
}
