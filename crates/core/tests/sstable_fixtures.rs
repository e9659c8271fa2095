//! Tables written by every released table format version stay readable.
//!
//! `fixtures/shaledb-sstable-v1/small.sst` was written by format version 1 (this code) with
//! `write_v1_fixture` below: 200 keys with 1–3 versions each, tombstones, Snappy on, 512-byte
//! blocks, restart interval 4, a Bloom filter. Never regenerate it once released; add a new
//! directory for a new version instead.
#![allow(clippy::unwrap_used)]

mod sstable_support;

use std::path::PathBuf;

use sstable_support::*;

use shaledb::recordio::Compression;
use shaledb::sstable::{Entry, TableOptions, TableReadOptions, TableReader, ValueKind, MAX_SEQ};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shaledb-sstable-v1")
}

/// The fixture's content. Frozen here (not shared with other tests) so the fixture never drifts.
fn v1_entries() -> Vec<Entry> {
    frozen_entries(200, 24)
}

fn frozen_entries(keys: usize, value_len: usize) -> Vec<Entry> {
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

fn v1_options() -> TableOptions {
    TableOptions {
        block_size: 512,
        restart_interval: 4,
        compression: Compression::Snappy,
        sync_on_finish: false,
        ..TableOptions::default()
    }
}

/// Module named after the suite, so `cargo test -p shaledb sstable` selects these tests.
mod sstable_fixtures {
    use super::*;

    #[test]
    fn reads_the_v1_fixture() {
        let bytes = std::fs::read(fixture_dir().join("small.sst")).unwrap();
        let storage = MemoryStorage::new();
        let f = storage.open("small.sst", OpenMode::CreateNew).unwrap();
        f.write_at(0, &bytes).unwrap();
        let t = TableReader::open(f, TableReadOptions::default()).unwrap();
        let entries = v1_entries();
        assert_eq!(t.properties().format_version, 1);
        assert_eq!(t.properties().entries, entries.len() as u64);
        assert_eq!(forward(&t), entries);
        assert_eq!(scanned(&t), entries);
        for e in &entries {
            assert_eq!(t.get(&e.key, MAX_SEQ).unwrap().unwrap().key, e.key);
            assert_eq!(t.get(&e.key, e.seq).unwrap().as_ref(), Some(e));
        }
    }

    /// Regenerates the fixture: `cargo test -p shaledb --test sstable_fixtures -- --ignored`.
    #[test]
    #[ignore = "writes the committed fixture; run only to create it"]
    fn write_v1_fixture() {
        let storage = MemoryStorage::new();
        let f = write_table(&storage, "small.sst", &v1_entries(), v1_options());
        let mut buf = vec![0u8; f.size().unwrap() as usize];
        f.read_exact_at(0, &mut buf).unwrap();
        std::fs::write(fixture_dir().join("small.sst"), buf).unwrap();
    }
}
