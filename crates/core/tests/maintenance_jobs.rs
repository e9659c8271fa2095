//! Maintenance as jobs (`shaledb::jobs`): handed out by the database, run over another storage
//! of the same directory (as a worker thread or process would), installed with one manifest
//! edit or refused when their inputs changed meanwhile, and never leaving an orphan behind.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod job_support;
mod sweep_support;

use std::collections::BTreeMap;

use job_support::{logs, options, orphans, put_range, run_all_jobs, run_remote, runner};
use shaledb::jobs::{run_job, JobWork, MaintenanceJob};
use shaledb::{Db, Error};
use sweep_support::scan;

#[test]
fn flush_and_compaction_jobs_run_elsewhere_keep_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    let (mut flushes, mut compactions) = (0, 0);
    for round in 0..8 {
        put_range(&db, &mut model, round * 500, round * 500 + 500, round);
        let (f, c) = run_all_jobs(dir.path(), &db);
        flushes += f;
        compactions += c;
        assert_eq!(scan(&db), model, "after round {round}");
    }
    assert!(flushes >= 8, "{flushes} flush jobs");
    assert!(compactions >= 2, "{compactions} compaction jobs");
    assert_eq!(orphans(dir.path(), &db), 0);
    let stats = db.stats();
    assert!(
        stats.level_files[1..].iter().sum::<usize>() > 0,
        "{stats:?}"
    );
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(scan(&db), model);
}

#[test]
fn a_flush_job_overtaken_by_a_flush_here_is_refused_and_its_table_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    put_range(&db, &mut model, 0, 100, 0);
    db.seal_memtable().unwrap();
    let job = db.next_job().unwrap().unwrap();
    assert!(matches!(job.work, JobWork::Flush(_)));
    // One flush job at a time.
    assert!(db.next_job().unwrap().is_none());
    let output = run_remote(dir.path(), &job);
    db.flush().unwrap();
    assert!(!db.install_job(&output).unwrap());
    assert_eq!(orphans(dir.path(), &db), 0);
    assert_eq!(scan(&db), model);
    // Taken back: installing again is an error.
    assert!(matches!(
        db.install_job(&output),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn a_compaction_job_whose_inputs_were_compacted_meanwhile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..2 {
        put_range(&db, &mut model, round * 300, round * 300 + 300, round);
        db.flush().unwrap();
    }
    let job = db.next_job().unwrap().unwrap();
    assert!(matches!(job.work, JobWork::Compaction(_)), "{job:?}");
    let output = run_remote(dir.path(), &job);
    assert!(!output.tables.is_empty());
    db.compact_range(None, None).unwrap();
    assert!(!db.install_job(&output).unwrap());
    assert_eq!(orphans(dir.path(), &db), 0);
    assert_eq!(scan(&db), model);
}

#[test]
fn an_abandoned_job_leaves_no_table_and_is_handed_out_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    put_range(&db, &mut model, 0, 200, 0);
    db.seal_memtable().unwrap();
    let job = db.next_job().unwrap().unwrap();
    let output = run_remote(dir.path(), &job);
    assert_eq!(output.tables.len(), 1);
    assert!(db.abandon_job(job.id).unwrap());
    assert!(!db.abandon_job(job.id).unwrap());
    assert_eq!(orphans(dir.path(), &db), 0);
    let again = db.next_job().unwrap().unwrap();
    assert!(matches!(again.work, JobWork::Flush(_)));
    assert_ne!(again.id, job.id);
    assert!(again.outputs.iter().all(|n| !job.outputs.contains(n)));
    assert!(db.install_job(&run_remote(dir.path(), &again)).unwrap());
    assert_eq!(scan(&db), model);
}

#[test]
fn an_output_naming_tables_the_job_did_not_reserve_is_refused_as_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    put_range(&db, &mut model, 0, 200, 0);
    db.seal_memtable().unwrap();
    let job = db.next_job().unwrap().unwrap();
    let mut output = run_remote(dir.path(), &job);
    output.tables[0].number += 1000;
    assert!(matches!(
        db.install_job(&output),
        Err(Error::InvalidArgument(_))
    ));
    // A size that does not match the file.
    let job = db.next_job().unwrap().unwrap();
    let mut output = run_remote(dir.path(), &job);
    output.tables[0].size += 1;
    assert!(matches!(
        db.install_job(&output),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(orphans(dir.path(), &db), 0);
    // The database is not poisoned: the next job installs.
    let job = db.next_job().unwrap().unwrap();
    assert!(db.install_job(&run_remote(dir.path(), &job)).unwrap());
    assert_eq!(scan(&db), model);
}

#[test]
fn a_runner_that_outlives_its_database_never_overwrites_a_table_of_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..2 {
        put_range(&db, &mut model, round * 300, round * 300 + 300, round);
        db.flush().unwrap();
    }
    let job = db.next_job().unwrap().unwrap();
    assert!(matches!(job.work, JobWork::Compaction(_)), "{job:?}");
    // The database goes away (a crash: no close) before the runner starts; the next open
    // writes tables of its own.
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    put_range(&db, &mut model, 600, 1000, 1);
    db.flush().unwrap();
    // The late runner writes only numbers no open hands out again.
    let output = run_remote(dir.path(), &job);
    assert!(!output.tables.is_empty());
    assert_eq!(scan(&db), model);
    assert!(matches!(
        db.install_job(&output),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(orphans(dir.path(), &db), 0);
    assert_eq!(scan(&db), model);
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(scan(&db), model);
}

#[test]
fn a_flush_job_over_a_log_that_lost_writes_fails_as_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    put_range(&db, &mut model, 0, 100, 0);
    db.seal_memtable().unwrap();
    let mut job = db.next_job().unwrap().unwrap();
    if let JobWork::Flush(f) = &mut job.work {
        f.entries += 1;
    }
    let r = run_job(runner(dir.path()), &job);
    assert!(matches!(r, Err(Error::Corruption { .. })), "{r:?}");
    assert!(db.abandon_job(job.id).unwrap());
    assert_eq!(orphans(dir.path(), &db), 0);
}

#[test]
fn a_compaction_left_between_steps_here_does_not_stop_compaction_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..3 {
        put_range(&db, &mut model, round * 300, round * 300 + 300, round);
        db.flush().unwrap();
    }
    // A step here starts a compaction and leaves it between steps (as a writer facing too many
    // L0 tables does before jobs take over).
    let step = db.maintain(shaledb::db::Budget { bytes: 1 }).unwrap();
    assert!(step.more);
    // Jobs take over from it and run to the end: the tree settles below the L0 trigger.
    let (_, compactions) = run_all_jobs(dir.path(), &db);
    assert!(compactions > 0);
    assert!(db.stats().level_files[0] < 2, "{:?}", db.stats());
    assert_eq!(orphans(dir.path(), &db), 0);
    assert_eq!(scan(&db), model);
}

fn sync_log_number(job: &MaintenanceJob) -> u64 {
    match &job.work {
        JobWork::SyncLog(work) => work.wal,
        other => panic!("not a sync-log job: {other:?}"),
    }
}

/// A database in a fresh directory whose memtable is over half full (200 writes of ~220 bytes
/// in 64 KiB), and the sync-log job it hands out (and the log's number); none before that.
fn with_log_job() -> (
    tempfile::TempDir,
    Db,
    BTreeMap<Vec<u8>, Vec<u8>>,
    MaintenanceJob,
    u64,
) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    put_range(&db, &mut model, 0, 50, 0);
    assert!(db.next_log_job().unwrap().is_none());
    put_range(&db, &mut model, 50, 200, 0);
    let job = db.next_log_job().unwrap().unwrap();
    let wal = sync_log_number(&job);
    (dir, db, model, job, wal)
}

#[test]
fn a_log_made_durable_by_a_sync_log_job_is_started_by_the_next_switch_which_creates_no_file() {
    let (dir, db, mut model, job, wal) = with_log_job();
    assert_eq!(job.id, wal);
    assert!(job.outputs.is_empty());
    // Created here, before the job runs; one job at a time.
    assert!(logs(dir.path()).contains(&wal));
    assert!(db.next_log_job().unwrap().is_none());
    assert!(db.install_job(&run_remote(dir.path(), &job)).unwrap());
    // A log is ready: none is due until a switch takes it.
    assert!(db.next_log_job().unwrap().is_none());
    let before = logs(dir.path());
    db.seal_memtable().unwrap();
    assert!(
        logs(dir.path()).iter().all(|n| before.contains(n)),
        "the switch created a log: {before:?} -> {:?}",
        logs(dir.path())
    );
    // The writes after the switch go to the prepared log: reopened, they are all there.
    put_range(&db, &mut model, 200, 260, 1);
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(scan(&db), model);
    // A new log is due again once the memtable is half full, numbered above the one in use.
    put_range(&db, &mut model, 260, 400, 2);
    let next = db.next_log_job().unwrap().unwrap();
    assert!(sync_log_number(&next) > wal);
}

#[test]
fn a_sync_log_job_installed_after_a_switch_of_the_database_own_is_refused_and_its_log_deleted() {
    let (dir, db, mut model, job, wal) = with_log_job();
    // The switch comes first and creates a log of its own, numbered above the prepared one.
    db.seal_memtable().unwrap();
    let output = run_remote(dir.path(), &job);
    assert!(!db.install_job(&output).unwrap());
    assert!(!logs(dir.path()).contains(&wal));
    put_range(&db, &mut model, 200, 260, 1);
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(scan(&db), model);
}

#[test]
fn sync_log_jobs_abandoned_out_at_a_close_or_at_a_crash_leave_no_log_behind() {
    let (dir, db, mut model, job, wal) = with_log_job();
    // Abandoned: deleted at once, and a new one is due.
    assert!(db.abandon_job(job.id).unwrap());
    assert!(!logs(dir.path()).contains(&wal));
    // Out at a close: deleted by the close; its late install is not out.
    let job = db.next_log_job().unwrap().unwrap();
    let output = run_remote(dir.path(), &job);
    db.close().unwrap();
    assert!(!logs(dir.path()).contains(&sync_log_number(&job)));
    let db = Db::open(dir.path(), options()).unwrap();
    assert!(matches!(
        db.install_job(&output),
        Err(Error::InvalidArgument(_))
    ));
    // Out at a crash (the directory copied as it is while the job is out), torn to a few
    // bytes: the next open ignores it and deletes it.
    let mut job = None;
    for round in 0..20 {
        put_range(&db, &mut model, 200 + round * 50, 250 + round * 50, 1);
        job = db.next_log_job().unwrap();
        if job.is_some() {
            break;
        }
    }
    let wal = sync_log_number(&job.unwrap());
    let crashed = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n != "LOCK") {
            std::fs::copy(&path, crashed.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let torn = runner(crashed.path())
        .open(
            &shaledb::file_names::wal_file_name(wal),
            shaledb::storage::OpenMode::ReadWrite,
        )
        .unwrap();
    torn.truncate(5).unwrap();
    drop(torn);
    let reopened = Db::open(crashed.path(), options()).unwrap();
    assert_eq!(scan(&reopened), model);
    assert!(!logs(crashed.path()).contains(&wal));
    drop(db);
}
