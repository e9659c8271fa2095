//! Verification of a whole database: every byte the live state depends on, read and checked,
//! without opening the database (nothing is written, no lock is taken).
//!
//! [`verify_storage`] reads `CURRENT`, replays the manifest it names ([`crate::version::manifest::recover`]),
//! reads every live table whole through [`TableReader`] (footer checksum, properties, Bloom filter,
//! range-del and index records at open, then every data block in a sequential scan with its
//! CRC-32C checked and its entries decoded), replays every write-ahead log at or above the
//! manifest's log number ([`WalReader::replay`]), and then checks the logs as a whole with
//! recovery's own rules ([`crate::db`]'s log chain: the log the log number names exists, sealed
//! logs lead to existing ones, sequence numbers run on without a gap, no write lies outside the
//! chain).
//!
//! What counts as a problem is what would make an open fail or lose acknowledged data:
//! - a damaged or undecodable record anywhere (checksum, structure, unknown version or codec),
//!   including damage in a log's synced data;
//! - a live table that is missing, has another size than the manifest records, holds entries
//!   out of order or a different number of entries than its properties say;
//! - a log chain that recovery would refuse (a missing or cut log, a gap in sequence numbers).
//!
//! A torn tail of a log (writes that were never synced, cut short: normal after a crash) is only
//! noted, as is a torn tail of the manifest (an edit whose sync never returned).
//! A torn tail of the manifest is tolerated (an edit whose sync never returned) and noted.
//! Files that the live state does not use (obsolete tables and manifests, `LOCK`, leftovers)
//! are listed as unreferenced, not read.

use std::cmp::Ordering;
use std::fmt;

use crate::db::recovery::{recover_logs, LogRules};
use crate::file_names::{manifest_file_name, parse_file_name, table_file_name, FileKind, CURRENT};
use crate::key::compare_internal;
use crate::sorting::{sort, sort_by_key};
use crate::sstable::{TableReadOptions, TableReader};
use crate::storage::{OpenMode, Storage};
use crate::version::manifest;
use crate::version::{FileMeta, NUM_LEVELS};
use crate::write::wal::{all_zero, wal_file_name, WalEnd, WalReader};
use crate::{Error, Result};

/// What a checked file is to the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileRole {
    /// `CURRENT`, naming the live manifest.
    Current,
    /// The live manifest.
    Manifest,
    /// A table the live state lists (or, when the manifest cannot be read, any table present).
    Table,
    /// A write-ahead log that recovery replays.
    Wal,
}

impl FileRole {
    /// A lower-case name for reports: `"current"`, `"manifest"`, `"table"`, `"wal"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileRole::Current => "current",
            FileRole::Manifest => "manifest",
            FileRole::Table => "table",
            FileRole::Wal => "wal",
        }
    }
}

/// One file read in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFile {
    /// The file's name in the storage.
    pub name: String,
    /// What it is to the database.
    pub role: FileRole,
    /// Its size in bytes (all of them read).
    pub bytes: u64,
    /// Units found intact: edits of a manifest, entries of a table, batches of a log.
    pub records: u64,
    /// Something worth knowing that is not a problem (a tolerated torn tail), if any.
    pub note: Option<String>,
}

/// Something wrong with the database's files.
#[derive(Debug)]
pub struct Problem {
    /// The file the problem is in.
    pub file: String,
    /// The byte offset in `file`, where known.
    pub offset: Option<u64>,
    /// The typed error (usually a corruption error naming the file and offset).
    pub error: Error,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error)
    }
}

/// The outcome of [`verify_storage`].
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// The manifest `CURRENT` names (`None` if `CURRENT` itself is unreadable).
    pub manifest: Option<String>,
    /// Every file read, in the order checked: `CURRENT`, the manifest, tables, logs.
    pub files: Vec<CheckedFile>,
    /// Files present but not part of the live state (not read).
    pub unreferenced: Vec<String>,
    /// Everything found wrong; empty when the database is intact.
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    /// Whether no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// Bytes read and checked, over all files.
    pub fn bytes_checked(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }

    /// The report if it found no problem, else the first problem's typed error (which names the
    /// file and, for damage, the offset).
    pub fn into_result(mut self) -> Result<VerifyReport> {
        if self.problems.is_empty() {
            return Ok(self);
        }
        Err(self.problems.swap_remove(0).error)
    }

    fn problem(&mut self, file: &str, error: Error) {
        let (located, offset) = location(&error);
        self.problems.push(Problem {
            file: located.unwrap_or(file).to_owned(),
            offset,
            error,
        });
    }
}

/// Checks every file the database in `storage` depends on (module doc); reads only.
///
/// Returns the report, problems included (use [`VerifyReport::into_result`] for an error
/// instead). Errors, when nothing meaningful can be reported: no `CURRENT` →
/// [`Error::NotFound`] (not a database); a failing storage call (listing, reading) → that I/O
/// error.
pub fn verify_storage(storage: &dyn Storage) -> Result<VerifyReport> {
    verify_storage_with(storage, VerifyOptions::default(), &mut |_| {})
}

/// How strictly [`verify_storage_with`] reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifyOptions {
    /// The files are a complete copy (an export archive, a backup being restored), not a
    /// directory a crash may have left: a log may end only cleanly or in zeros (unwritten,
    /// preallocated bytes). Damage anywhere else in a log — which a directory after a crash may
    /// hold as a torn tail of unsynced writes, dropped by recovery — is a problem, since
    /// restoring it would silently drop the writes after it. (A directory that crashed is
    /// opened once before it is copied: recovery moves what its logs hold into a table.)
    pub complete_copy: bool,
}

impl VerifyOptions {
    /// The rules for a complete copy ([`VerifyOptions::complete_copy`]).
    pub fn complete_copy() -> VerifyOptions {
        VerifyOptions {
            complete_copy: true,
        }
    }
}

/// How far [`verify_storage_with`] got: bytes of tables and logs checked so far, of
/// `bytes_total` (their sizes, known once the manifest was read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyProgress {
    /// Bytes of the tables and logs checked so far.
    pub bytes_done: u64,
    /// Bytes of all the tables and logs to check.
    pub bytes_total: u64,
}

/// [`verify_storage`] by `options`, calling `progress` once the files to check are known and
/// after each table and log (for a progress bar: the files are read whole, one at a time).
pub fn verify_storage_with(
    storage: &dyn Storage,
    options: VerifyOptions,
    progress: &mut dyn FnMut(VerifyProgress),
) -> Result<VerifyReport> {
    let mut names = storage.list()?;
    sort(&mut names);
    if !names.iter().any(|n| n == CURRENT) {
        return Err(Error::NotFound {
            file: CURRENT.to_owned(),
        });
    }
    let mut report = VerifyReport::default();
    let mut referenced: Vec<String> = vec![CURRENT.to_owned()];
    let current_size = storage.open(CURRENT, OpenMode::Read)?.size()?;
    report.files.push(CheckedFile {
        name: CURRENT.to_owned(),
        role: FileRole::Current,
        bytes: current_size,
        records: 1,
        note: None,
    });
    // The tables and logs to check: those of the live state, or (if the manifest cannot be
    // read) every one present, so that the report still says which of them are intact.
    let live = live_state(storage, &mut report)?;
    let (tables, log_number) = match &live {
        Some(live) => {
            if let Some(manifest) = &report.manifest {
                referenced.push(manifest.clone());
            }
            (live.tables.clone(), live.log_number)
        }
        None => {
            let all = names
                .iter()
                .filter_map(|n| match parse_file_name(n) {
                    Some(FileKind::Table(number)) => Some(Expected { number, meta: None }),
                    _ => None,
                })
                .collect();
            (all, 0)
        }
    };
    let mut wals: Vec<u64> = names
        .iter()
        .filter_map(|n| crate::write::wal::parse_wal_file_name(n))
        .filter(|&n| n >= log_number)
        .collect();
    sort(&mut wals);
    // The sizes to check, for `progress` (0 for a file that is missing or cannot be opened:
    // the check itself reports that).
    let size_of = |name: &str| -> u64 {
        if !names.iter().any(|n| n == name) {
            return 0;
        }
        storage
            .open(name, OpenMode::Read)
            .and_then(|f| f.size())
            .unwrap_or(0)
    };
    // A table's size is the manifest's when it could be read (no open needed).
    let table_sizes: Vec<u64> = tables
        .iter()
        .map(|t| match &t.meta {
            Some(meta) => meta.size,
            None => size_of(&table_file_name(t.number)),
        })
        .collect();
    let wal_sizes: Vec<u64> = wals.iter().map(|&n| size_of(&wal_file_name(n))).collect();
    let mut done = VerifyProgress {
        bytes_done: 0,
        bytes_total: table_sizes.iter().chain(&wal_sizes).sum(),
    };
    progress(done);
    let mut advance = |bytes: u64| {
        done.bytes_done += bytes;
        progress(done);
    };
    for (table, &size) in tables.iter().zip(&table_sizes) {
        let name = table_file_name(table.number);
        referenced.push(name.clone());
        if !names.contains(&name) {
            let manifest = report.manifest.clone().unwrap_or_default();
            report.problem(
                &manifest,
                Error::corruption(
                    &manifest,
                    0,
                    format!("lists table {name}, which is missing"),
                ),
            );
            continue;
        }
        check_table(storage, &name, table.meta.as_ref(), &mut report)?;
        advance(size);
    }
    for (&number, &size) in wals.iter().zip(&wal_sizes) {
        referenced.push(wal_file_name(number));
        check_wal(storage, number, options, &mut report)?;
        advance(size);
    }
    // The logs as a whole, by recovery's own rules (the chain, dense sequence numbers, no
    // write outside the chain): only when every log replays on its own, so that damage is
    // reported once, with its file.
    let logs_replay = !report.problems.iter().any(|p| p.file.starts_with("wal-"));
    if let (Some(live), true) = (&live, logs_replay) {
        let manifest = report.manifest.clone().unwrap_or_default();
        match recover_logs(
            storage,
            &names,
            &manifest,
            live.log_number,
            live.last_sequence,
            live.rules,
        ) {
            Ok(_) => {}
            Err(e) if is_storage_failure(&e) => return Err(e),
            Err(e) => {
                let file = location(&e).0.unwrap_or(&manifest).to_owned();
                report.problem(&file, e);
            }
        }
    }
    report.unreferenced = names
        .into_iter()
        .filter(|n| !referenced.contains(n))
        .collect();
    Ok(report)
}

/// What the manifest says the database is.
struct LiveState {
    tables: Vec<Expected>,
    log_number: u64,
    last_sequence: u64,
    rules: LogRules,
}

/// A table to check, and what the manifest records about it (if it could be read).
#[derive(Clone)]
struct Expected {
    number: u64,
    meta: Option<FileMeta>,
}

/// Replays the manifest: the live tables, the log number and what recovery needs, or `None`
/// (a problem recorded) if it cannot be read.
fn live_state(storage: &dyn Storage, report: &mut VerifyReport) -> Result<Option<LiveState>> {
    let recovered = match manifest::recover(storage) {
        Ok(Some(r)) => r,
        Ok(None) => {
            return Err(Error::NotFound {
                file: CURRENT.to_owned(),
            })
        }
        Err(e) if is_storage_failure(&e) => return Err(e),
        Err(e) => {
            if let Ok(number) = manifest::read_current(storage) {
                report.manifest = Some(manifest_file_name(number));
            }
            report.problem(CURRENT, e);
            return Ok(None);
        }
    };
    let name = manifest_file_name(recovered.manifest_number);
    let bytes = storage.open(&name, OpenMode::Read)?.size()?;
    report.files.push(CheckedFile {
        name: name.clone(),
        role: FileRole::Manifest,
        bytes,
        records: recovered.edits,
        note: recovered.torn_tail_at.map(|at| {
            format!("torn tail at offset {at} (an edit whose sync never returned; tolerated)")
        }),
    });
    report.manifest = Some(name);
    let version = recovered.versions.current();
    let mut tables = Vec::new();
    for level in 0..NUM_LEVELS {
        for meta in version.files(level) {
            tables.push(Expected {
                number: meta.number,
                meta: Some(FileMeta::clone(meta)),
            });
        }
    }
    sort_by_key(&mut tables, |t| t.number);
    Ok(Some(LiveState {
        tables,
        log_number: recovered.versions.log_number(),
        last_sequence: recovered.versions.last_sequence(),
        rules: if recovered.format_version >= 2 {
            LogRules::Chained
        } else {
            LogRules::Legacy
        },
    }))
}

/// Reads table `name` whole; records what is wrong with it.
fn check_table(
    storage: &dyn Storage,
    name: &str,
    meta: Option<&FileMeta>,
    report: &mut VerifyReport,
) -> Result<()> {
    let file = storage.open(name, OpenMode::Read)?;
    let size = file.size()?;
    let mut checked = CheckedFile {
        name: name.to_owned(),
        role: FileRole::Table,
        bytes: size,
        records: 0,
        note: None,
    };
    if let Some(meta) = meta {
        if meta.size != size {
            report.problem(
                name,
                Error::corruption(
                    name,
                    size.min(meta.size),
                    format!(
                        "the table is {size} bytes, the manifest records {}",
                        meta.size
                    ),
                ),
            );
        }
    }
    match scan_table(file, meta) {
        Ok(entries) => checked.records = entries,
        Err(e) if is_storage_failure(&e) => return Err(e),
        Err(e) => report.problem(name, e),
    }
    report.files.push(checked);
    Ok(())
}

/// Opens the table (footer, properties, filter, range-del and index records, each checked),
/// reads every data block in order and checks its entries; returns the number of entries.
fn scan_table(file: crate::storage::FileHandle, meta: Option<&FileMeta>) -> Result<u64> {
    let name = file.name().to_owned();
    let table = TableReader::open(file, TableReadOptions::default())?;
    let props = table.properties().clone();
    let mut scan = table.scan()?;
    let mut entries = 0u64;
    let mut last: Option<(Vec<u8>, u64)> = None;
    let bad = |reason: String| Error::corruption(&name, 0, reason);
    while let Some(entry) = scan.next_entry()? {
        entries += 1;
        if let Some((key, seq)) = &last {
            if compare_internal(key, *seq, entry.key, entry.seq) != Ordering::Less {
                return Err(bad(format!(
                    "entry {entries} (sequence number {}) is out of order",
                    entry.seq
                )));
            }
        }
        if entry.seq < props.min_seq || entry.seq > props.max_seq {
            return Err(bad(format!(
                "entry {entries} has sequence number {}, outside the table's {}..={}",
                entry.seq, props.min_seq, props.max_seq
            )));
        }
        if let Some(meta) = meta {
            if entry.key < meta.smallest.key.as_slice() || entry.key > meta.largest.key.as_slice() {
                return Err(bad(format!(
                    "entry {entries} lies outside the key range the manifest records"
                )));
            }
        }
        match &mut last {
            Some((key, seq)) => {
                key.clear();
                key.extend_from_slice(entry.key);
                *seq = entry.seq;
            }
            None => last = Some((entry.key.to_vec(), entry.seq)),
        }
    }
    if entries != props.entries {
        return Err(bad(format!(
            "{entries} entries in the data blocks, the properties record says {}",
            props.entries
        )));
    }
    if let Some(meta) = meta {
        let recorded = props.entries.saturating_add(props.range_tombstones);
        if meta.entries != recorded {
            return Err(bad(format!(
                "{recorded} entries and range tombstones, the manifest records {}",
                meta.entries
            )));
        }
    }
    Ok(entries)
}

/// Replays log `number` on its own; records what is wrong with it. A torn tail is noted here
/// (whether it lost anything is for the chain check, `recover_logs`, to say), or in a complete
/// copy a problem unless only zeros follow the last intact record.
fn check_wal(
    storage: &dyn Storage,
    number: u64,
    options: VerifyOptions,
    report: &mut VerifyReport,
) -> Result<()> {
    let name = wal_file_name(number);
    let file = storage.open(&name, OpenMode::Read)?;
    let size = file.size()?;
    let mut checked = CheckedFile {
        name: name.clone(),
        role: FileRole::Wal,
        bytes: size,
        records: 0,
        note: None,
    };
    match WalReader::replay(storage, number, |_, _| Ok(())) {
        Ok(replay) => {
            checked.records = replay.batches;
            if let WalEnd::TornTail { valid_up_to } = replay.end {
                if options.complete_copy && !all_zero(&file, valid_up_to, size)? {
                    report.problem(
                        &name,
                        Error::corruption(
                            &name,
                            valid_up_to,
                            "the log is damaged here (a complete copy holds no torn writes: \
                             restoring it would drop the writes from here on; a directory left \
                             by a crash is opened once before it is copied)",
                        ),
                    );
                }
                checked.note = Some(format!(
                    "torn tail at offset {valid_up_to} of {size} (writes that were never \
                     synced, cut short; recovery keeps what is before)"
                ));
            }
        }
        Err(e) if is_storage_failure(&e) => return Err(e),
        Err(e) => report.problem(&name, e),
    }
    report.files.push(checked);
    Ok(())
}

/// Whether `e` is the storage failing (no verdict on the data is possible), not damage.
fn is_storage_failure(e: &Error) -> bool {
    matches!(
        e,
        Error::Io { .. } | Error::Locked { .. } | Error::Closed(_)
    )
}

/// The file and byte offset an error names, where it names them.
fn location(e: &Error) -> (Option<&str>, Option<u64>) {
    match e {
        Error::Corruption { file, offset, .. }
        | Error::MagicMismatch { file, offset }
        | Error::HeaderChecksumMismatch { file, offset, .. }
        | Error::ChecksumMismatch { file, offset, .. }
        | Error::RecordTooLarge { file, offset, .. } => (Some(file), Some(*offset)),
        Error::TornTail { file, valid_up_to } => (Some(file), Some(*valid_up_to)),
        Error::VersionUnsupported { file, .. }
        | Error::UnknownCompression { file, .. }
        | Error::UnsupportedCompression { file, .. }
        | Error::NotFound { file }
        | Error::AlreadyExists { file } => (Some(file), None),
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::storage::memory::MemoryStorage;
    use crate::{Db, Options};

    fn options() -> Options {
        Options {
            background_thread: false,
            ..Options::default()
        }
    }

    /// A database with two tables (one per flush) and a log holding unflushed writes.
    fn database() -> MemoryStorage {
        let storage = MemoryStorage::new();
        let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
        let events = db.keyspace("events").unwrap();
        for i in 0..2000u32 {
            db.put(format!("k{i:05}").as_bytes(), &[7u8; 40]).unwrap();
        }
        db.flush().unwrap();
        for i in 0..500u32 {
            events.put(format!("e{i:05}").as_bytes(), b"x").unwrap();
        }
        db.delete_range(b"k00010", b"k00020").unwrap();
        db.flush().unwrap();
        db.put(b"in-the-log", b"v").unwrap();
        drop(db); // a crash: the last write is only in the log
        storage
    }

    fn names_of(storage: &MemoryStorage, kind: fn(FileKind) -> bool) -> Vec<String> {
        let mut names: Vec<String> = storage
            .list()
            .unwrap()
            .into_iter()
            .filter(|n| parse_file_name(n).is_some_and(kind))
            .collect();
        names.sort();
        names
    }

    fn flip(storage: &MemoryStorage, name: &str, at: u64, len: usize) {
        let file = storage.open(name, OpenMode::ReadWrite).unwrap();
        let mut bytes = vec![0u8; len];
        file.read_exact_at(at, &mut bytes).unwrap();
        for b in &mut bytes {
            *b ^= 0xff;
        }
        file.write_at(at, &bytes).unwrap();
    }

    #[test]
    fn an_intact_database_has_no_problem_and_every_live_file_is_read() {
        let storage = database();
        let report = verify_storage(&storage).unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        let roles: Vec<FileRole> = report.files.iter().map(|f| f.role).collect();
        assert_eq!(roles.first(), Some(&FileRole::Current));
        assert_eq!(roles.get(1), Some(&FileRole::Manifest));
        assert_eq!(roles.iter().filter(|r| **r == FileRole::Table).count(), 2);
        assert!(roles.contains(&FileRole::Wal));
        let entries: u64 = report
            .files
            .iter()
            .filter(|f| f.role == FileRole::Table)
            .map(|f| f.records)
            .sum();
        assert_eq!(entries, 2500);
        let total: u64 = report.files.iter().map(|f| f.bytes).sum();
        assert_eq!(report.bytes_checked(), total);
        assert!(report.bytes_checked() > 2000 * 40 / 4);
        assert!(report.into_result().is_ok());
    }

    #[test]
    fn flipped_bytes_in_a_data_block_are_corruption_naming_the_table_and_offset() {
        let storage = database();
        let table = names_of(&storage, |k| matches!(k, FileKind::Table(_)))
            .into_iter()
            .next()
            .unwrap();
        flip(&storage, &table, 100, 16);
        let report = verify_storage(&storage).unwrap();
        assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
        let problem = report.problems.first().unwrap();
        assert_eq!(problem.file, table);
        assert_eq!(problem.offset, Some(8)); // the first block's record header
        assert_eq!(problem.error.code(), "CORRUPTION");
        let error = report.into_result().unwrap_err();
        assert!(error.to_string().contains(&table), "{error}");
    }

    #[test]
    fn a_damaged_footer_or_a_missing_table_is_a_problem() {
        let storage = database();
        let tables = names_of(&storage, |k| matches!(k, FileKind::Table(_)));
        let (first, second) = (tables.first().unwrap(), tables.get(1).unwrap());
        let size = storage.open(first, OpenMode::Read).unwrap().size().unwrap();
        flip(&storage, first, size - 20, 4);
        storage.remove(second).unwrap();
        let report = verify_storage(&storage).unwrap();
        let files: Vec<&str> = report.problems.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(files.len(), 2, "{:?}", report.problems);
        assert!(files.contains(&first.as_str()));
        assert!(report
            .problems
            .iter()
            .any(|p| p.error.to_string().contains(second.as_str())));
    }

    #[test]
    fn a_torn_tail_of_the_newest_log_is_noted_not_a_problem() {
        let storage = database();
        let wal = names_of(&storage, |k| matches!(k, FileKind::Wal(_)))
            .pop()
            .unwrap();
        let file = storage.open(&wal, OpenMode::ReadWrite).unwrap();
        let size = file.size().unwrap();
        file.write_at(size, &[1, 2, 3, 4, 5, 6, 7]).unwrap();
        let report = verify_storage(&storage).unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        let checked = report.files.iter().find(|f| f.name == wal).unwrap();
        assert!(checked.note.as_deref().unwrap().contains("torn tail"));
    }

    #[test]
    fn damage_in_the_middle_of_a_log_is_a_problem() {
        let storage = MemoryStorage::new();
        let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
        for i in 0..50u32 {
            db.put(format!("k{i}").as_bytes(), b"value").unwrap();
        }
        drop(db);
        let wal = names_of(&storage, |k| matches!(k, FileKind::Wal(_)))
            .pop()
            .unwrap();
        flip(&storage, &wal, 40, 4);
        let report = verify_storage(&storage).unwrap();
        let problem = report.problems.first().unwrap();
        assert_eq!(problem.file, wal);
        assert_eq!(problem.error.code(), "CORRUPTION");
        assert!(problem.offset.is_some());
    }

    #[test]
    fn a_log_chain_recovery_would_refuse_is_a_problem_naming_the_link() {
        let storage = MemoryStorage::new();
        let db = Db::open_storage(Arc::new(storage.clone()), options()).unwrap();
        db.put(b"older", b"1").unwrap();
        db.seal_memtable().unwrap();
        db.put(b"newer", b"2").unwrap();
        drop(db);
        let wals = names_of(&storage, |k| matches!(k, FileKind::Wal(_)));
        assert_eq!(wals.len(), 2);
        assert!(verify_storage(&storage).unwrap().is_ok());
        storage.remove(&wals[1]).unwrap();
        let report = verify_storage(&storage).unwrap();
        let problem = report.problems.first().unwrap();
        assert_eq!(problem.file, wals[0], "{:?}", report.problems);
        assert!(problem.error.to_string().contains(&wals[1]));
    }

    #[test]
    fn a_damaged_manifest_is_a_problem_and_the_tables_present_are_still_checked() {
        let storage = database();
        let manifest = names_of(&storage, |k| matches!(k, FileKind::Manifest(_)))
            .pop()
            .unwrap();
        flip(&storage, &manifest, 20, 8);
        let report = verify_storage(&storage).unwrap();
        assert_eq!(report.problems.first().unwrap().file, manifest);
        assert_eq!(
            report
                .files
                .iter()
                .filter(|f| f.role == FileRole::Table)
                .count(),
            2
        );
    }

    #[test]
    fn no_current_is_not_found() {
        let storage = MemoryStorage::new();
        assert!(matches!(
            verify_storage(&storage),
            Err(Error::NotFound { .. })
        ));
    }

    #[test]
    fn files_outside_the_live_state_are_listed_as_unreferenced() {
        let storage = database();
        storage
            .open("000999.sst", OpenMode::Create)
            .unwrap()
            .write_at(0, b"junk")
            .unwrap();
        let report = verify_storage(&storage).unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        assert!(report.unreferenced.contains(&"000999.sst".to_owned()));
    }
}
