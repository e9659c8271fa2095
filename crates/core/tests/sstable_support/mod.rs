//! Helpers shared by the `sstable_*` behaviour tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;

use shaledb::sstable::{
    BlockCache, Entry, TableBuilder, TableOptions, TableReadOptions, TableReader, ValueKind,
};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{FileHandle, OpenMode, Storage};

/// Entries in table order: `keys` distinct keys, each with 1..=3 versions, some tombstones.
pub fn sample_entries(keys: usize, value_len: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    for i in 0..keys {
        let key = format!("key-{:08}", i * 7).into_bytes();
        let versions = 1 + (i % 3);
        for v in 0..versions {
            let tomb = (i + v) % 5 == 0;
            let value = if tomb {
                Vec::new()
            } else {
                let mut val = format!("value-{i}-{v}-").into_bytes();
                val.resize(value_len.max(val.len()), b'a' + (i % 26) as u8);
                val
            };
            out.push(Entry {
                key: key.clone(),
                seq: 10_000_000 - (i as u64) * 10 + (versions - v) as u64,
                kind: if tomb {
                    ValueKind::Tombstone
                } else {
                    ValueKind::Value
                },
                value,
            });
        }
    }
    out
}

/// Writes `entries` into a new file `name` of `storage`.
pub fn write_table(
    storage: &MemoryStorage,
    name: &str,
    entries: &[Entry],
    options: TableOptions,
) -> FileHandle {
    let file = storage.open(name, OpenMode::CreateNew).unwrap();
    let mut b = TableBuilder::new(file, options).unwrap();
    for e in entries {
        b.add(&e.key, e.seq, e.kind, &e.value).unwrap();
    }
    b.finish().unwrap();
    storage.open(name, OpenMode::Read).unwrap()
}

/// Small blocks so that tests cross many block boundaries.
pub fn small_blocks() -> TableOptions {
    TableOptions {
        block_size: 256,
        restart_interval: 4,
        sync_on_finish: false,
        ..TableOptions::default()
    }
}

/// Opens `file` with a fresh cache.
pub fn open(file: FileHandle) -> TableReader {
    TableReader::open(
        file,
        TableReadOptions {
            cache: Some(Arc::new(BlockCache::new(1 << 20))),
            ..TableReadOptions::default()
        },
    )
    .unwrap()
}

/// Every entry of the table, by forward iteration.
pub fn forward(t: &TableReader) -> Vec<Entry> {
    let mut it = t.iter();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push(Entry {
            key: it.key().to_vec(),
            seq: it.seq(),
            kind: it.kind(),
            value: it.value().to_vec(),
        });
        it.next().unwrap();
    }
    out
}

/// Every entry of the table, by the sequential scan.
pub fn scanned(t: &TableReader) -> Vec<Entry> {
    let mut s = t.scan().unwrap();
    let mut out = Vec::new();
    while let Some(e) = s.next_entry().unwrap() {
        out.push(Entry {
            key: e.key.to_vec(),
            seq: e.seq,
            kind: e.kind,
            value: e.value.to_vec(),
        });
    }
    out
}
