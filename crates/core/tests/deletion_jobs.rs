//! Deletion jobs (`Db::hand_out_deletions`): obsolete tables and logs are removed by the runner,
//! not by the thread that installs outputs; a deletion job abandoned is handed out again, and
//! what no job removed goes at the close (after a crash, at the next open: the fault sweep).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod job_support;
mod sweep_support;

use std::collections::BTreeMap;

use job_support::{logs, options, orphans, put_range, run_remote, tables_on_disk};
use shaledb::jobs::{DeleteWork, JobWork, MaintenanceJob};
use shaledb::Db;
use sweep_support::scan;

/// Runs the flush and compaction jobs due until none is, holding back deletion jobs (returned).
fn run_all_but_deletions(dir: &std::path::Path, db: &Db) -> Vec<MaintenanceJob> {
    let mut deletions = Vec::new();
    while let Some(job) = db.next_job().unwrap() {
        if matches!(job.work, JobWork::Delete(_)) {
            deletions.push(job);
            continue;
        }
        assert!(db.install_job(&run_remote(dir, &job)).unwrap());
    }
    deletions
}

/// A database leaving deletions to jobs, written to until a deletion job is handed out (held).
fn until_a_deletion_is_held(
    dir: &std::path::Path,
) -> (Db, BTreeMap<Vec<u8>, Vec<u8>>, Vec<MaintenanceJob>) {
    let db = Db::open(dir, options()).unwrap();
    db.hand_out_deletions(true);
    let mut model = BTreeMap::new();
    let mut held = Vec::new();
    for round in 0..4 {
        put_range(&db, &mut model, round * 500, round * 500 + 500, round);
        held.extend(run_all_but_deletions(dir, &db));
        if !held.is_empty() {
            break;
        }
    }
    (db, model, held)
}

fn deletion(job: &MaintenanceJob) -> &DeleteWork {
    match &job.work {
        JobWork::Delete(work) => work,
        other => panic!("not a deletion: {other:?}"),
    }
}

#[test]
fn obsolete_tables_and_logs_left_to_deletion_jobs_are_removed_by_the_runner_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.hand_out_deletions(true);
    let mut model = BTreeMap::new();
    let mut removed_tables = 0;
    let mut removed_logs = 0;
    for round in 0..6 {
        put_range(&db, &mut model, round * 500, round * 500 + 500, round);
        let mut held = run_all_but_deletions(dir.path(), &db);
        // One deletion job out at a time.
        assert!(held.len() <= 1, "{held:?}");
        while let Some(job) = held.pop() {
            let work = deletion(&job).clone();
            // Installing outputs removed nothing the job names.
            let tables = tables_on_disk(dir.path());
            assert!(work.tables.iter().all(|n| tables.contains(n)), "{work:?}");
            let logs_before = logs(dir.path());
            assert!(
                work.logs.iter().all(|n| logs_before.contains(n)),
                "{work:?}"
            );
            let output = run_remote(dir.path(), &job);
            assert!(output.tables.is_empty());
            assert!(db.install_job(&output).unwrap());
            let tables = tables_on_disk(dir.path());
            assert!(work.tables.iter().all(|n| !tables.contains(n)), "{work:?}");
            let logs_after = logs(dir.path());
            assert!(
                work.logs.iter().all(|n| !logs_after.contains(n)),
                "{work:?}"
            );
            removed_tables += work.tables.len();
            removed_logs += work.logs.len();
            // Files that became obsolete while it was out come in the next one.
            held = run_all_but_deletions(dir.path(), &db);
        }
        assert_eq!(scan(&db), model, "after round {round}");
    }
    assert!(
        removed_tables > 0 && removed_logs > 0,
        "{removed_tables} tables, {removed_logs} logs"
    );
    assert_eq!(orphans(dir.path(), &db), 0);
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(scan(&db), model);
}

#[test]
fn an_abandoned_deletion_job_is_handed_out_again_and_what_jobs_left_goes_at_the_close() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model, mut held) = until_a_deletion_is_held(dir.path());
    let job = held.pop().expect("a deletion job");
    let work = deletion(&job).clone();
    assert!(db.abandon_job(job.id).unwrap());
    // Abandoned: its files are noted again for the next one (none was removed meanwhile).
    let again = db.next_job().unwrap().expect("the deletion again");
    let again_work = deletion(&again);
    assert!(work.tables.iter().all(|n| again_work.tables.contains(n)));
    assert!(work.logs.iter().all(|n| again_work.logs.contains(n)));
    assert!(tables_on_disk(dir.path()).len() > db.stats().level_files.iter().sum::<usize>());
    // Out when the database closes: the close removes its files itself.
    db.close().unwrap();
    let on_disk = tables_on_disk(dir.path());
    assert!(work.tables.iter().all(|n| !on_disk.contains(n)));
    let on_disk = logs(dir.path());
    assert!(work.logs.iter().all(|n| !on_disk.contains(n)));
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(orphans(dir.path(), &db), 0);
    assert_eq!(scan(&db), model);
    // A late runner of the closed open's job removes nothing the new open needs.
    let output = run_remote(dir.path(), &again);
    assert!(output.tables.is_empty());
    assert_eq!(scan(&db), model);
}

#[test]
fn with_deletions_taken_back_obsolete_files_are_removed_here_again() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model, held) = until_a_deletion_is_held(dir.path());
    assert!(!held.is_empty());
    assert!(orphans(dir.path(), &db) > 0);
    db.hand_out_deletions(false);
    // The job out keeps its files; once it is abandoned, the next pass removes them here.
    for job in held {
        assert!(db.abandon_job(job.id).unwrap());
    }
    assert_eq!(orphans(dir.path(), &db), 0);
    assert_eq!(scan(&db), model);
}

#[test]
fn a_change_feed_never_starts_in_a_log_left_to_a_deletion_job() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.hand_out_deletions(true);
    for i in 0..300u32 {
        db.put(format!("k{i:05}").as_bytes(), &[7u8; 64]).unwrap();
    }
    db.flush().unwrap();
    // The flushed log is obsolete but still on disk: a deletion job has it.
    let job = db.next_job().unwrap().expect("a deletion job");
    assert!(!deletion(&job).logs.is_empty());
    assert!(deletion(&job)
        .logs
        .iter()
        .all(|n| logs(dir.path()).contains(n)));
    match db.changes(1) {
        Err(shaledb::Error::ChangesTruncated { since, oldest }) => {
            assert_eq!(since, 1);
            assert!(oldest > 1);
        }
        other => panic!("expected ChangesTruncated, got {other:?}"),
    }
    assert!(db.install_job(&run_remote(dir.path(), &job)).unwrap());
    assert!(matches!(
        db.changes(1),
        Err(shaledb::Error::ChangesTruncated { .. })
    ));
}
