//! Group commit under real concurrency on a real directory: 8 threads of synced puts; every
//! acknowledged write is readable after reopening. Prints how many writes shared each fsync
//! (no timing assertions: the ratio depends on the machine).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly on unexpected errors"
)]
#![cfg(not(target_arch = "wasm32"))]

use std::sync::Arc;

use shaledb::storage::faulty::FaultyStorage;
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::{Db, Options, WriteOptions};

const THREADS: u32 = 8;
const PUTS_PER_THREAD: u32 = 250;

fn key(t: u32, i: u32) -> Vec<u8> {
    format!("t{t}/{i:06}").into_bytes()
}

fn value(t: u32, i: u32) -> Vec<u8> {
    format!("value of {t}/{i} {}", "v".repeat((i % 50) as usize)).into_bytes()
}

#[test]
fn eight_synced_writers_share_fsyncs_and_every_acknowledged_write_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    // FaultyStorage injects nothing here: it only counts the fsyncs reaching the disk.
    let counting = FaultyStorage::new(Arc::new(StdFsStorage::open(dir.path()).unwrap()));
    let mut options = Options::default();
    options.background_thread = false; // only WAL syncs during the writes
    let db = Db::open_storage(Arc::new(counting.clone()), options).unwrap();
    let syncs_before = counting.syncs();
    let started = std::time::Instant::now();
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..PUTS_PER_THREAD {
                    db.put_opt(&key(t, i), &value(t, i), WriteOptions::SYNC)
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let elapsed = started.elapsed();
    let syncs = counting.syncs() - syncs_before;
    let writes = u64::from(THREADS * PUTS_PER_THREAD);
    assert!(
        syncs >= 1 && syncs <= writes,
        "{syncs} fsyncs for {writes} writes"
    );
    eprintln!(
        "{THREADS} threads: {writes} synced writes, {syncs} fsyncs, {:.2} writes per fsync, \
         {:.0} writes/s",
        writes as f64 / syncs as f64,
        writes as f64 / elapsed.as_secs_f64()
    );
    db.close().unwrap();

    let db = Db::open(dir.path(), Options::default()).unwrap();
    for t in 0..THREADS {
        for i in 0..PUTS_PER_THREAD {
            assert_eq!(db.get(&key(t, i)).unwrap(), Some(value(t, i)), "{t}/{i}");
        }
    }
    db.close().unwrap();
}
