//! Compactions of key ranges carried out as jobs (`Db::request_compaction`): what was written
//! before the request is flushed first, each level's pass is a compaction job, writes made
//! meanwhile are kept, requests finish in order, and the tree ends as `compact_range` leaves it.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod job_support;
mod sweep_support;

use std::collections::BTreeMap;

use job_support::{options, orphans, put_range, run_all_jobs, run_remote};
use shaledb::jobs::JobWork;
use shaledb::{Db, Error, Options};
use sweep_support::scan;

/// Runs the jobs due until ticket `ticket` is done; returns the compaction jobs run.
fn run_until_done(dir: &std::path::Path, db: &Db, ticket: u64) -> usize {
    let mut compactions = 0;
    // A request ends when `next_job` finds no pass of it left.
    while let Some(job) = db.next_job().unwrap() {
        if matches!(job.work, JobWork::Compaction(_)) {
            compactions += 1;
        }
        assert!(db.install_job(&run_remote(dir, &job)).unwrap());
    }
    assert!(db.compactions_done() >= ticket);
    compactions
}

/// Table files per level.
fn stats_levels(db: &Db) -> Vec<usize> {
    db.stats().level_files
}

/// A database with tables in several levels, overwrites, deletes and unflushed writes.
fn layered(dir: &std::path::Path) -> (Db, BTreeMap<Vec<u8>, Vec<u8>>) {
    let db = Db::open(dir, options()).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..6u32 {
        for i in 0..600u32 {
            let n = (i * 7 + round * 1000) % 3000;
            let key = format!("key{n:05}").into_bytes();
            // Little to compress: the tree spreads over several levels.
            let value: Vec<u8> = (0..150u32)
                .map(|b| (n.wrapping_mul(2_654_435_761) >> (b % 24)) as u8 ^ b as u8 ^ round as u8)
                .collect();
            db.put(&key, &value).unwrap();
            model.insert(key, value);
        }
        run_all_jobs(dir, &db);
    }
    for i in (0..700).step_by(3) {
        let key = format!("key{i:05}").into_bytes();
        db.delete(&key).unwrap();
        model.remove(&key);
    }
    put_range(&db, &mut model, 0, 50, 9);
    (db, model)
}

#[test]
fn a_compaction_requested_as_jobs_leaves_the_tree_as_compact_range_does() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model) = layered(dir.path());
    let twin_dir = tempfile::tempdir().unwrap();
    let (twin, twin_model) = layered(twin_dir.path());
    assert_eq!(model, twin_model);

    let ticket = db.request_compaction(None, None).unwrap();
    assert_eq!(db.compactions_done(), ticket - 1);
    let passes = run_until_done(dir.path(), &db, ticket);
    twin.compact_range(None, None).unwrap();

    assert!(passes >= 2, "{passes} compaction jobs (L0 and below)");
    assert_eq!(stats_levels(&db), stats_levels(&twin));
    assert_eq!(scan(&db), model);
    let (stats, twin_stats) = (db.stats(), twin.stats());
    assert!(
        stats.level_files[2..].iter().sum::<usize>() > 0,
        "{stats:?}"
    );
    assert_eq!(stats.level_files[0], 0, "{stats:?}");
    assert_eq!(
        stats.level_files.iter().filter(|&&n| n > 0).count(),
        1,
        "{stats:?}"
    );
    // Overwritten versions and tombstones are gone, as with compact_range.
    assert_eq!(stats.entries, model.len() as u64, "{stats:?}");
    assert_eq!(stats.entries, twin_stats.entries);
    assert_eq!(orphans(dir.path(), &db), 0);
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(scan(&db), model);
}

#[test]
fn writes_during_a_requested_compaction_are_kept_and_requests_finish_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut model) = layered(dir.path());
    let first = db.request_compaction(None, None).unwrap();
    put_range(&db, &mut model, 100, 300, 11);
    let second = db
        .request_compaction(Some(b"key00100"), Some(b"key00200"))
        .unwrap();
    assert!(second > first);
    let mut round = 12;
    while let Some(job) = db.next_job().unwrap() {
        let done = db.compactions_done();
        assert!(done == 0 || done == first, "done {done}");
        // Writes land between a job's hand-out and its install.
        put_range(&db, &mut model, round * 10, round * 10 + 40, round);
        round += 1;
        assert!(db.install_job(&run_remote(dir.path(), &job)).unwrap());
        assert_eq!(scan(&db), model);
    }
    assert_eq!(db.compactions_done(), second);
    // Nothing left requested: only what the tree needs.
    run_all_jobs(dir.path(), &db);
    assert_eq!(scan(&db), model);
    assert_eq!(orphans(dir.path(), &db), 0);
}

#[test]
fn an_abandoned_pass_of_a_requested_compaction_is_handed_out_again() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model) = layered(dir.path());
    let ticket = db.request_compaction(None, None).unwrap();
    let job = loop {
        let job = db.next_job().unwrap().unwrap();
        if matches!(job.work, JobWork::Compaction(_)) {
            break job;
        }
        assert!(db.install_job(&run_remote(dir.path(), &job)).unwrap());
    };
    let JobWork::Compaction(work) = &job.work else {
        unreachable!()
    };
    let level = work.level;
    assert!(db.abandon_job(job.id).unwrap());
    let again = db.next_job().unwrap().unwrap();
    let JobWork::Compaction(again_work) = &again.work else {
        panic!("{again:?}")
    };
    assert_eq!(again_work.level, level);
    assert!(db.install_job(&run_remote(dir.path(), &again)).unwrap());
    run_until_done(dir.path(), &db, ticket);
    assert_eq!(scan(&db), model);
    assert_eq!(db.stats().entries, model.len() as u64);
    assert_eq!(orphans(dir.path(), &db), 0);
}

#[test]
fn a_keyspace_range_requested_as_jobs_compacts_that_keyspace_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("other").unwrap();
    for round in 0..4u32 {
        for i in 0..300u32 {
            let key = format!("k{i:04}");
            ks.put(
                key.as_bytes(),
                format!("{round}-{}", "y".repeat(100)).as_bytes(),
            )
            .unwrap();
        }
        run_all_jobs(dir.path(), &db);
    }
    let ticket = ks.request_compaction(Some(b"k0000"), None).unwrap();
    run_until_done(dir.path(), &db, ticket);
    assert_eq!(db.stats().entries, 300);
    assert_eq!(
        ks.get(b"k0299").unwrap().unwrap(),
        format!("3-{}", "y".repeat(100)).into_bytes()
    );
}

#[test]
fn a_read_only_open_refuses_a_compaction_request() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), options()).unwrap().close().unwrap();
    let mut read_only: Options = options();
    read_only.read_only = true;
    let db = Db::open(dir.path(), read_only).unwrap();
    assert!(matches!(
        db.request_compaction(None, None),
        Err(Error::ReadOnly { .. })
    ));
}
