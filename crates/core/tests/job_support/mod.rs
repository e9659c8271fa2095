//! What the tests of maintenance jobs share: small tables and memtables, a runner's own
//! storage over the directory, jobs run through bytes in another thread, and orphan counts.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]
#![allow(dead_code, reason = "each test binary uses part of the support module")]

use std::collections::BTreeMap;
use std::sync::Arc;

use shaledb::file_names::{parse_file_name, FileKind};
use shaledb::jobs::{run_job, JobOutput, JobWork, MaintenanceJob};
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::storage::Storage;
use shaledb::{Db, Options};

pub fn options() -> Options {
    let mut o = Options::default();
    o.memtable_size = 64 * 1024;
    o.max_immutable_memtables = 4;
    o.l0_compaction_trigger = 2;
    o.target_file_size = 32 * 1024;
    o.base_level_size = 64 * 1024;
    o.block_size = 1024;
    o.background_thread = false;
    o
}

/// A runner's own storage over `dir` (another handle on the same files, as in a worker).
pub fn runner(dir: &std::path::Path) -> Arc<dyn Storage> {
    Arc::new(StdFsStorage::open(dir).unwrap())
}

/// Runs `job` as a runner in another thread would: through bytes both ways.
pub fn run_remote(dir: &std::path::Path, job: &MaintenanceJob) -> JobOutput {
    let bytes = job.encode();
    let storage = runner(dir);
    let out = std::thread::spawn(move || {
        run_job(storage, &MaintenanceJob::decode(&bytes).unwrap())
            .unwrap()
            .encode()
    })
    .join()
    .unwrap();
    JobOutput::decode(&out).unwrap()
}

pub fn put_range(db: &Db, model: &mut BTreeMap<Vec<u8>, Vec<u8>>, from: u32, to: u32, v: u32) {
    for i in from..to {
        let key = format!("key{:05}", i % 700).into_bytes();
        let value = format!("v{v}-{i}-{}", "x".repeat(200)).into_bytes();
        db.put(&key, &value).unwrap();
        model.insert(key, value);
    }
}

/// Table files in `dir` that `db` does not name.
pub fn orphans(dir: &std::path::Path, db: &Db) -> usize {
    let tables = runner(dir)
        .list()
        .unwrap()
        .iter()
        .filter(|n| matches!(parse_file_name(n), Some(FileKind::Table(_))))
        .count();
    tables - db.stats().level_files.iter().sum::<usize>()
}

/// Runs every job due until none is.
pub fn run_all_jobs(dir: &std::path::Path, db: &Db) -> (usize, usize) {
    let (mut flushes, mut compactions) = (0, 0);
    while let Some(job) = db.next_job().unwrap() {
        match job.work {
            JobWork::Flush(_) => flushes += 1,
            JobWork::Compaction(_) => compactions += 1,
            JobWork::SyncLog(_) | JobWork::Delete(_) => {}
        }
        assert!(db.install_job(&run_remote(dir, &job)).unwrap());
    }
    (flushes, compactions)
}

/// Log files in `dir`, by number.
pub fn logs(dir: &std::path::Path) -> Vec<u64> {
    numbers_of(dir, |kind| match kind {
        FileKind::Wal(n) => Some(n),
        _ => None,
    })
}

/// Table files in `dir`, by number.
pub fn tables_on_disk(dir: &std::path::Path) -> Vec<u64> {
    numbers_of(dir, |kind| match kind {
        FileKind::Table(n) => Some(n),
        _ => None,
    })
}

fn numbers_of(dir: &std::path::Path, pick: impl Fn(FileKind) -> Option<u64>) -> Vec<u64> {
    let mut numbers: Vec<u64> = runner(dir)
        .list()
        .unwrap()
        .iter()
        .filter_map(|n| parse_file_name(n).and_then(&pick))
        .collect();
    numbers.sort_unstable();
    numbers
}
