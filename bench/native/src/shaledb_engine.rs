//! [`Engine`] for ShaleDB, through its public `Db` API only.

use std::hint::black_box;
use std::path::Path;

use shaledb::{Batch, Db, IterOptions, Keyspace, Options, WriteOptions};

use crate::engine::{Engine, Settings};

/// A ShaleDB database opened with the shared [`Settings`].
pub struct ShaleDb {
    db: Db,
    keyspace: Keyspace,
}

impl ShaleDb {
    /// Opens with the shared [`Settings`]; `background_thread: false` leaves maintenance to
    /// jobs (`crate::shaledb_jobs_engine`).
    pub fn open_with(dir: &Path, settings: &Settings, background_thread: bool) -> ShaleDb {
        let mut options = Options::default();
        options.block_cache_size = settings.block_cache_bytes;
        options.memtable_size = settings.memtable_bytes as usize;
        options.bloom_bits_per_key = settings.bloom_bits_per_key;
        options.compression = settings.compression;
        options.block_size = settings.block_size;
        options.background_thread = background_thread;
        let db = Db::open(dir, options).unwrap();
        let keyspace = db.default_keyspace();
        ShaleDb { db, keyspace }
    }

    /// The database.
    pub fn db(&self) -> &Db {
        &self.db
    }
}

impl Engine for ShaleDb {
    const NAME: &'static str = "shaledb";

    fn open(dir: &Path, settings: &Settings) -> Self {
        ShaleDb::open_with(dir, settings, true)
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) {
        self.db.put_opt(key, value, WriteOptions { sync }).unwrap();
    }

    fn write_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) {
        let mut batch = Batch::new();
        for (k, v) in entries {
            batch.put(&self.keyspace, k, v).unwrap();
        }
        self.db.write(&batch, WriteOptions { sync }).unwrap();
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.db.get(key).unwrap()
    }

    fn delete(&self, key: &[u8]) {
        self.db.delete(key).unwrap();
    }

    fn scan(&self, reverse: bool) -> u64 {
        let options = if reverse {
            IterOptions::default().reversed()
        } else {
            IterOptions::default()
        };
        let mut it = self.db.iter(options).unwrap();
        let mut count = 0;
        while it.valid() {
            black_box((it.key(), it.value()));
            count += 1;
            it.advance().unwrap();
        }
        count
    }

    fn seek_read(&self, key: &[u8], n: usize) -> usize {
        let mut it = self.db.iter(IterOptions::default()).unwrap();
        it.seek(key).unwrap();
        let mut count = 0;
        while count < n && it.valid() {
            black_box((it.key(), it.value()));
            count += 1;
            it.advance().unwrap();
        }
        count
    }

    fn flush(&self) {
        self.db.flush().unwrap();
    }

    fn compact_all(&self) {
        self.db.flush().unwrap();
        self.db.compact_range(None, None).unwrap();
    }

    fn write_amplification(&self) -> Option<f64> {
        Some(self.db.stats().write_amplification)
    }

    fn close(self) {
        self.db.close().unwrap();
    }
}
