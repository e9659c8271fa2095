//! Helpers shared by the `iter_*` behaviour tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;

use shaledb::iter::InternalIterator;
use shaledb::sstable::{
    BlockCache, Entry, TableBuilder, TableOptions, TableReadOptions, TableReader, ValueKind,
};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};

/// An entry.
pub fn entry(key: &[u8], seq: u64, kind: ValueKind, value: &[u8]) -> Entry {
    Entry {
        key: key.to_vec(),
        seq,
        kind,
        value: value.to_vec(),
    }
}

/// A value entry.
pub fn put(key: &str, seq: u64, value: &str) -> Entry {
    entry(key.as_bytes(), seq, ValueKind::Value, value.as_bytes())
}

/// A point tombstone.
pub fn del(key: &str, seq: u64) -> Entry {
    entry(key.as_bytes(), seq, ValueKind::Tombstone, b"")
}

/// A range tombstone over [start, end).
pub fn del_range(start: &str, end: &str, seq: u64) -> Entry {
    entry(
        start.as_bytes(),
        seq,
        ValueKind::RangeTombstone,
        end.as_bytes(),
    )
}

/// Writes `entries` (any order; sorted here) as a table with small blocks and opens it.
pub fn table(storage: &MemoryStorage, name: &str, entries: &[Entry]) -> TableReader {
    let mut sorted = entries.to_vec();
    sorted.sort_by(|a, b| shaledb::sstable::compare_internal(&a.key, a.seq, &b.key, b.seq));
    let file = storage.open(name, OpenMode::CreateNew).unwrap();
    let mut b = TableBuilder::new(
        file,
        TableOptions {
            block_size: 64,
            restart_interval: 2,
            sync_on_finish: false,
            ..TableOptions::default()
        },
    )
    .unwrap();
    for e in &sorted {
        b.add(&e.key, e.seq, e.kind, &e.value).unwrap();
    }
    b.finish().unwrap();
    TableReader::open(
        storage.open(name, OpenMode::Read).unwrap(),
        TableReadOptions {
            cache: Some(Arc::new(BlockCache::new(1 << 20))),
            ..TableReadOptions::default()
        },
    )
    .unwrap()
}

/// The cursor's current entry, if any.
pub fn current(it: &dyn InternalIterator) -> Option<Entry> {
    it.valid()
        .then(|| entry(it.key(), it.seq(), it.kind(), it.value()))
}

/// Every entry from the first, forward.
pub fn collect_forward(it: &mut dyn InternalIterator) -> Vec<Entry> {
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while let Some(e) = current(it) {
        out.push(e);
        it.next().unwrap();
    }
    out
}

/// Every entry from the last, backward.
pub fn collect_backward(it: &mut dyn InternalIterator) -> Vec<Entry> {
    it.seek_to_last().unwrap();
    let mut out = Vec::new();
    while let Some(e) = current(it) {
        out.push(e);
        it.prev().unwrap();
    }
    out
}
