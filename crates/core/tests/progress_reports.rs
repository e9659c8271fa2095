//! Progress reports of long operations (what the CLI's progress bars draw): whole-range
//! compaction per level pass, and verification in bytes of files checked.

#![allow(clippy::unwrap_used, reason = "tests: a failure is a failed test")]

use shaledb::storage::std_fs::StdFsStorage;
use shaledb::verify::{verify_storage_with, VerifyOptions};
use shaledb::{CompactProgress, Db, Options};

fn options() -> Options {
    let mut o = Options::default();
    o.background_thread = false;
    o
}

/// Three flushed tables in L0 and a write in the log.
fn three_tables(db: &Db) {
    for table in 0..3u32 {
        for i in 0..2_000u32 {
            db.put(format!("k{:05}", i * 3 + table).as_bytes(), b"value")
                .unwrap();
        }
        db.flush().unwrap();
    }
    db.put(b"in-the-log", b"v").unwrap();
}

#[test]
fn compaction_reports_each_level_pass_from_nothing_to_all_its_input_entries() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    three_tables(&db);
    let mut reports: Vec<CompactProgress> = Vec::new();
    db.compact_range_with_progress(None, None, &mut |p| reports.push(p))
        .unwrap();
    let first = reports.first().copied().unwrap();
    assert_eq!(
        (first.level, first.output_level, first.entries_done),
        (0, 1, 0)
    );
    // L0's three tables, and the log's write flushed into a fourth before compacting.
    assert_eq!(first.entries_total, 6_001);
    let end = reports
        .iter()
        .rev()
        .find(|p| p.level == 0)
        .copied()
        .unwrap();
    assert_eq!(end.entries_done, end.entries_total);
    for pair in reports.windows(2) {
        if pair[0].level == pair[1].level {
            assert!(pair[0].entries_done <= pair[1].entries_done, "{pair:?}");
        }
    }
    assert_eq!(db.get(b"k05999").unwrap().as_deref(), Some(&b"value"[..]));
}

#[test]
fn verification_reports_bytes_checked_up_to_the_total_of_tables_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    three_tables(&db);
    db.close().unwrap();
    let storage = StdFsStorage::open(dir.path()).unwrap();
    let mut reports = Vec::new();
    let report =
        verify_storage_with(&storage, VerifyOptions::default(), &mut |p| reports.push(p)).unwrap();
    assert!(report.is_ok());
    let checked: u64 = report
        .files
        .iter()
        .filter(|f| matches!(f.role.as_str(), "table" | "wal"))
        .map(|f| f.bytes)
        .sum();
    let (first, last) = (reports[0], *reports.last().unwrap());
    assert_eq!((first.bytes_done, first.bytes_total), (0, checked));
    assert_eq!((last.bytes_done, last.bytes_total), (checked, checked));
    // One report before the files, one after each of the three tables and the log.
    assert_eq!(reports.len(), 1 + 3 + 1);
}
