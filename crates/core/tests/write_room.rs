//! Where writes wait when memtables wait for flushes: a writer flushes one itself only when it
//! must switch its memtable (not while the live one has room), `Db::write_would_flush` says
//! beforehand when that is near, and with jobs a flush waits for the compaction out while L0 is
//! one table short of the slowdown trigger (so flushes cannot outrun compactions).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

mod job_support;

use job_support::run_remote;
use shaledb::jobs::JobWork;
use shaledb::{Db, Options};

fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.max_immutable_memtables = 2;
    o.background_thread = false;
    o
}

fn value(i: u32) -> Vec<u8> {
    format!("{i:08}-{}", "v".repeat(1000)).into_bytes()
}

#[test]
fn a_writer_with_room_left_does_not_flush_while_memtables_wait_and_one_that_must_switch_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.l0_compaction_trigger = 100;
    let db = Db::open(dir.path(), o).unwrap();
    // About 2.6 memtables: two sealed (the most allowed), the live one half full.
    let mut i = 0u32;
    while i < 150 {
        db.put(&i.to_be_bytes(), &value(i)).unwrap();
        i += 1;
    }
    assert_eq!(
        db.stats().level_files[0],
        0,
        "no flush while the live memtable has room"
    );
    assert!(!db.write_would_flush());
    // Nearly full: the next writes may flush; then one that must switch flushes the oldest.
    while !db.write_would_flush() {
        db.put(&i.to_be_bytes(), &value(i)).unwrap();
        i += 1;
        assert!(i < 400, "write_would_flush never said so");
    }
    assert_eq!(db.stats().level_files[0], 0);
    while db.stats().level_files[0] == 0 {
        db.put(&i.to_be_bytes(), &value(i)).unwrap();
        i += 1;
        assert!(i < 400, "no writer flushed");
    }
    assert!(!db.write_would_flush());
    for k in 0..i {
        assert_eq!(db.get(&k.to_be_bytes()).unwrap(), Some(value(k)), "key {k}");
    }
}

#[test]
fn with_jobs_a_flush_waits_for_the_compaction_out_when_l0_is_one_short_of_the_slowdown_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.max_immutable_memtables = 4;
    o.l0_compaction_trigger = 2;
    o.l0_slowdown_trigger = 3;
    let db = Db::open(dir.path(), o).unwrap();
    let mut i = 0u32;
    let mut fill_and_seal = |db: &Db| {
        for _ in 0..20 {
            db.put(&i.to_be_bytes(), &value(i)).unwrap();
            i += 1;
        }
        db.seal_memtable().unwrap();
    };
    // Two L0 tables through flush jobs: a compaction is due.
    for _ in 0..2 {
        fill_and_seal(&db);
        let job = db.next_job().unwrap().unwrap();
        assert!(matches!(job.work, JobWork::Flush(_)), "{job:?}");
        assert!(db.install_job(&run_remote(dir.path(), &job)).unwrap());
    }
    let compaction = db.next_job().unwrap().unwrap();
    assert!(
        matches!(compaction.work, JobWork::Compaction(_)),
        "{compaction:?}"
    );
    // L0 holds 2 of the trigger's 3: the next flush waits while the compaction is out.
    fill_and_seal(&db);
    while let Some(job) = db.next_job().unwrap() {
        assert!(
            !matches!(job.work, JobWork::Flush(_)),
            "a flush beside the compaction: {job:?}"
        );
        assert!(db.install_job(&run_remote(dir.path(), &job)).unwrap());
    }
    assert!(db
        .install_job(&run_remote(dir.path(), &compaction))
        .unwrap());
    let flush = loop {
        let job = db
            .next_job()
            .unwrap()
            .expect("the flush, once the compaction is in");
        if matches!(job.work, JobWork::Flush(_)) {
            break job;
        }
        assert!(db.install_job(&run_remote(dir.path(), &job)).unwrap());
    };
    assert!(db.install_job(&run_remote(dir.path(), &flush)).unwrap());
    for k in 0..i {
        assert_eq!(db.get(&k.to_be_bytes()).unwrap(), Some(value(k)), "key {k}");
    }
}
