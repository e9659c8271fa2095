//! [`Engine`] for fjall 3 (pure Rust LSM; `Database` of `Keyspace`s).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use fjall::config::{
    BlockSizePolicy, BloomConstructionPolicy, CompressionPolicy, FilterPolicy, FilterPolicyEntry,
};
use fjall::{CompressionType, Database, Keyspace, KeyspaceCreateOptions, PersistMode};

use crate::engine::{dir_bytes, Engine, Settings};

/// A fjall database with one keyspace, opened with the shared [`Settings`]: block cache size,
/// memtable size, Bloom filters on every level, LZ4 on every level (fjall has no Snappy; its
/// default leaves L0 and L1 uncompressed), 4 KiB blocks. A synced write is the write followed
/// by `persist(SyncData)` (fdatasync of the journal).
pub struct Fjall {
    db: Database,
    keyspace: Keyspace,
    dir: PathBuf,
}

impl Engine for Fjall {
    const NAME: &'static str = "fjall";

    fn open(dir: &Path, settings: &Settings) -> Self {
        let db = Database::builder(dir)
            .cache_size(settings.block_cache_bytes)
            .open()
            .unwrap();
        let compression = if settings.compression {
            CompressionType::Lz4
        } else {
            CompressionType::None
        };
        let bloom = BloomConstructionPolicy::BitsPerKey(settings.bloom_bits_per_key as f32);
        let keyspace = db
            .keyspace("bench", || {
                KeyspaceCreateOptions::default()
                    .max_memtable_size(settings.memtable_bytes)
                    .filter_policy(FilterPolicy::all(FilterPolicyEntry::Bloom(bloom)))
                    .data_block_compression_policy(CompressionPolicy::all(compression))
                    .data_block_size_policy(BlockSizePolicy::all(settings.block_size as u32))
            })
            .unwrap();
        Fjall {
            db,
            keyspace,
            dir: dir.to_owned(),
        }
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) {
        self.keyspace.insert(key, value).unwrap();
        if sync {
            self.db.persist(PersistMode::SyncData).unwrap();
        }
    }

    fn write_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) {
        let mut batch = self.db.batch();
        if sync {
            batch = batch.durability(Some(PersistMode::SyncData));
        }
        for (k, v) in entries {
            batch.insert(&self.keyspace, k.as_slice(), v.as_slice());
        }
        batch.commit().unwrap();
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.keyspace.get(key).unwrap().map(|v| v.to_vec())
    }

    fn delete(&self, key: &[u8]) {
        self.keyspace.remove(key).unwrap();
    }

    fn scan(&self, reverse: bool) -> u64 {
        let mut count = 0;
        let mut visit = |guard: fjall::Guard| {
            black_box(guard.into_inner().unwrap());
            count += 1;
        };
        if reverse {
            self.keyspace.iter().rev().for_each(&mut visit);
        } else {
            self.keyspace.iter().for_each(&mut visit);
        }
        count
    }

    fn seek_read(&self, key: &[u8], n: usize) -> usize {
        self.keyspace
            .range(key..)
            .take(n)
            .map(|guard| black_box(guard.into_inner().unwrap()))
            .count()
    }

    fn flush(&self) {
        self.keyspace.rotate_memtable_and_wait().unwrap();
    }

    fn compact_all(&self) {
        self.flush();
        self.keyspace.major_compact().unwrap();
    }

    fn disk_bytes(&self) -> u64 {
        dir_bytes(&self.dir)
    }
}
