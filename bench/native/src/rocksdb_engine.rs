//! [`Engine`] for RocksDB through the `rocksdb` crate (rust-rocksdb 0.24, RocksDB 10.x).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use rocksdb::statistics::Ticker;
use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, Options, WriteBatch, WriteOptions, DB};

use crate::engine::{dir_bytes, Engine, Settings};

/// A RocksDB database opened with the shared [`Settings`]: LRU block cache, full Bloom filters,
/// Snappy, one write buffer of the memtable size; everything else RocksDB's defaults (leveled
/// compaction, two background jobs, WAL on).
pub struct RocksDb {
    db: DB,
    options: Options,
    plain: WriteOptions,
    synced: WriteOptions,
    dir: PathBuf,
}

impl Engine for RocksDb {
    const NAME: &'static str = "rocksdb";

    fn open(dir: &Path, settings: &Settings) -> Self {
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&Cache::new_lru_cache(settings.block_cache_bytes as usize));
        table.set_bloom_filter(f64::from(settings.bloom_bits_per_key), false);
        table.set_block_size(settings.block_size);
        let mut options = Options::default();
        options.create_if_missing(true);
        options.set_block_based_table_factory(&table);
        options.set_compression_type(if settings.compression {
            DBCompressionType::Snappy
        } else {
            DBCompressionType::None
        });
        options.set_write_buffer_size(settings.memtable_bytes as usize);
        options.enable_statistics();
        let db = DB::open(&options, dir).unwrap();
        let mut synced = WriteOptions::default();
        synced.set_sync(true);
        RocksDb {
            db,
            options,
            plain: WriteOptions::default(),
            synced,
            dir: dir.to_owned(),
        }
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) {
        let wo = if sync { &self.synced } else { &self.plain };
        self.db.put_opt(key, value, wo).unwrap();
    }

    fn write_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) {
        let mut batch = WriteBatch::default();
        for (k, v) in entries {
            batch.put(k, v);
        }
        let wo = if sync { &self.synced } else { &self.plain };
        self.db.write_opt(batch, wo).unwrap();
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.db.get(key).unwrap()
    }

    fn delete(&self, key: &[u8]) {
        self.db.delete_opt(key, &self.plain).unwrap();
    }

    fn scan(&self, reverse: bool) -> u64 {
        let mut it = self.db.raw_iterator();
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        let mut count = 0;
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            black_box((k, v));
            count += 1;
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status().unwrap();
        count
    }

    fn seek_read(&self, key: &[u8], n: usize) -> usize {
        let mut it = self.db.raw_iterator();
        it.seek(key);
        let mut count = 0;
        while count < n {
            let (Some(k), Some(v)) = (it.key(), it.value()) else {
                break;
            };
            black_box((k, v));
            count += 1;
            it.next();
        }
        it.status().unwrap();
        count
    }

    fn flush(&self) {
        self.db.flush().unwrap();
    }

    fn compact_all(&self) {
        self.db.flush().unwrap();
        self.db.compact_range::<&[u8], &[u8]>(None, None);
    }

    fn disk_bytes(&self) -> u64 {
        dir_bytes(&self.dir)
    }

    /// (WAL + flush + compaction bytes written) / bytes of user write batches, from RocksDB's
    /// statistics since open.
    fn write_amplification(&self) -> Option<f64> {
        let t = |ticker| self.options.get_ticker_count(ticker) as f64;
        let user = t(Ticker::BytesWritten);
        let disk = t(Ticker::WalFileBytes) + t(Ticker::FlushWriteBytes) + t(Ticker::CompactWriteBytes);
        (user > 0.0).then(|| disk / user)
    }
}
