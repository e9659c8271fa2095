//! [`Engine`] `shaledb-jobs`: ShaleDB with no background thread, its flushes and compactions
//! run as jobs (`shaledb::jobs`) by a runner thread over its own storage of the directory, as
//! Node's maintenance worker runs them — to compare with the background thread (`shaledb`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use shaledb::jobs::run_job;
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::storage::Storage;
use shaledb::Db;

use crate::engine::{Engine, Settings};
use crate::shaledb_engine::ShaleDb;

/// How long the runner waits before asking again when no job is due.
const IDLE_POLL: Duration = Duration::from_micros(500);

/// ShaleDB and the thread running its jobs.
pub struct ShaleDbJobs {
    /// `None` once closed.
    inner: Option<ShaleDb>,
    stop: Arc<AtomicBool>,
    runner: Option<JoinHandle<()>>,
}

/// Runs jobs of `db` until `stop` (or the database fails).
fn run_jobs(db: Db, storage: Arc<dyn Storage>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        match db.next_job() {
            Ok(Some(job)) => match run_job(storage.clone(), &job) {
                Ok(output) => {
                    let _ = db.install_job(&output);
                }
                Err(_) => {
                    let _ = db.abandon_job(job.id);
                }
            },
            Ok(None) => std::thread::sleep(IDLE_POLL),
            Err(_) => return,
        }
    }
}

impl ShaleDbJobs {
    fn engine(&self) -> &ShaleDb {
        self.inner.as_ref().expect("open")
    }

    fn stop_runner(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(runner) = self.runner.take() {
            runner.join().unwrap();
        }
    }
}

impl Engine for ShaleDbJobs {
    const NAME: &'static str = "shaledb-jobs";

    fn open(dir: &Path, settings: &Settings) -> Self {
        let inner = ShaleDb::open_with(dir, settings, false);
        let storage: Arc<dyn Storage> = Arc::new(StdFsStorage::open(dir).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let db = inner.db().clone();
        let flag = stop.clone();
        let runner = std::thread::Builder::new()
            .name("shaledb-jobs".into())
            .spawn(move || run_jobs(db, storage, flag))
            .unwrap();
        ShaleDbJobs {
            inner: Some(inner),
            stop,
            runner: Some(runner),
        }
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) {
        self.engine().put(key, value, sync);
    }

    fn write_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) {
        self.engine().write_batch(entries, sync);
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.engine().get(key)
    }

    fn delete(&self, key: &[u8]) {
        self.engine().delete(key);
    }

    fn scan(&self, reverse: bool) -> u64 {
        self.engine().scan(reverse)
    }

    fn seek_read(&self, key: &[u8], n: usize) -> usize {
        self.engine().seek_read(key, n)
    }

    fn flush(&self) {
        self.engine().flush();
    }

    fn compact_all(&self) {
        self.engine().compact_all();
    }

    fn write_amplification(&self) -> Option<f64> {
        self.engine().write_amplification()
    }

    fn close(mut self) {
        self.stop_runner();
        if let Some(inner) = self.inner.take() {
            inner.close();
        }
    }
}

impl Drop for ShaleDbJobs {
    fn drop(&mut self) {
        self.stop_runner();
    }
}
