//! Tables read back exactly what was written.
mod sstable_support;

use sstable_support::*;

use shaledb::recordio::Compression;
use shaledb::sstable::{
    TableBuilder, TableOptions, TableReadOptions, TableReader, ValueKind, MAX_SEQ,
};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::Error;

/// Module named after the suite, so `cargo test -p shaledb sstable` selects these tests.
mod sstable_round_trip {
    use super::*;

    #[test]
    fn many_entries_with_versions_and_tombstones_round_trip() {
        let storage = MemoryStorage::new();
        let entries = sample_entries(3000, 40);
        let t = open(write_table(&storage, "t.sst", &entries, small_blocks()));
        assert!(t.data_blocks() > 100);
        assert_eq!(forward(&t), entries);
        assert_eq!(scanned(&t), entries);
        let p = t.properties();
        assert_eq!(p.entries, entries.len() as u64);
        assert_eq!(
            p.tombstones,
            entries
                .iter()
                .filter(|e| e.kind == ValueKind::Tombstone)
                .count() as u64
        );
        assert_eq!(p.smallest_key, entries[0].key);
        assert_eq!(p.largest_key, entries.last().unwrap().key);
        assert_eq!(p.min_seq, entries.iter().map(|e| e.seq).min().unwrap());
        assert_eq!(p.max_seq, entries.iter().map(|e| e.seq).max().unwrap());
        assert_eq!(p.format_version, 1);
    }

    #[test]
    fn get_returns_the_newest_version_visible_at_each_snapshot() {
        let storage = MemoryStorage::new();
        let entries = sample_entries(500, 10);
        let t = open(write_table(&storage, "t.sst", &entries, small_blocks()));
        for (i, e) in entries.iter().enumerate() {
            // At exactly its seq, the entry itself is visible.
            assert_eq!(t.get(&e.key, e.seq).unwrap().as_ref(), Some(e));
            // Just below its seq, the next older version of the same key (or nothing).
            let older = entries.get(i + 1).filter(|o| o.key == e.key);
            assert_eq!(t.get(&e.key, e.seq - 1).unwrap().as_ref(), older);
        }
        // The newest version at MAX_SEQ, tombstones returned as such.
        let first = &entries[0];
        assert_eq!(t.get(&first.key, MAX_SEQ).unwrap().as_ref(), Some(first));
        // Snapshot older than every version: nothing.
        assert_eq!(t.get(&first.key, 0).unwrap(), None);
        // Absent keys, between and around present ones.
        for k in [&b""[..], b"key-", b"key-00000001", b"key-99999999", b"zzz"] {
            assert_eq!(t.get(k, MAX_SEQ).unwrap(), None, "{k:?}");
        }
    }

    #[test]
    fn tables_with_and_without_snappy_hold_the_same_entries() {
        let storage = MemoryStorage::new();
        let entries = sample_entries(2000, 100);
        let plain = write_table(&storage, "plain.sst", &entries, small_blocks());
        let snappy = write_table(
            &storage,
            "snappy.sst",
            &entries,
            TableOptions {
                compression: Compression::Snappy,
                ..small_blocks()
            },
        );
        assert!(
            snappy.size().unwrap() < plain.size().unwrap() * 3 / 4,
            "compressible values should shrink"
        );
        for f in [plain, snappy] {
            let t = open(f);
            assert_eq!(forward(&t), entries);
            assert_eq!(scanned(&t), entries);
            for e in entries.iter().step_by(7) {
                assert_eq!(t.get(&e.key, e.seq).unwrap().as_ref(), Some(e));
            }
        }
    }

    #[test]
    fn empty_table_has_no_entries() {
        let storage = MemoryStorage::new();
        let t = open(write_table(&storage, "e.sst", &[], TableOptions::default()));
        assert_eq!(t.properties().entries, 0);
        assert_eq!(t.data_blocks(), 0);
        assert!(forward(&t).is_empty());
        assert!(scanned(&t).is_empty());
        assert_eq!(t.get(b"a", MAX_SEQ).unwrap(), None);
        let mut it = t.iter();
        it.seek_to_last().unwrap();
        assert!(!it.valid());
        it.seek(b"a").unwrap();
        assert!(!it.valid());
    }

    #[test]
    fn values_larger_than_a_block_round_trip() {
        let storage = MemoryStorage::new();
        let mut entries = sample_entries(20, 10);
        entries[5].value = (0..1_000_000u32).map(|i| (i * 31 % 251) as u8).collect();
        entries[5].kind = ValueKind::Value;
        let t = open(write_table(
            &storage,
            "h.sst",
            &entries,
            TableOptions::default(),
        ));
        assert_eq!(forward(&t), entries);
        assert_eq!(scanned(&t), entries);
        let e = &entries[5];
        assert_eq!(t.get(&e.key, e.seq).unwrap().as_ref(), Some(e));
    }

    #[test]
    fn out_of_order_and_invalid_adds_are_rejected() {
        let storage = MemoryStorage::new();
        let file = storage.open("o.sst", OpenMode::CreateNew).unwrap();
        let mut b = TableBuilder::new(file, TableOptions::default()).unwrap();
        b.add(b"b", 5, ValueKind::Value, b"1").unwrap();
        let bad = [
            (&b"a"[..], 9), // smaller key
            (&b"b"[..], 5), // same key and seq
            (&b"b"[..], 6), // same key, newer seq after older
        ];
        for (k, seq) in bad {
            assert!(
                matches!(
                    b.add(k, seq, ValueKind::Value, b""),
                    Err(Error::InvalidArgument(_))
                ),
                "{k:?} {seq}"
            );
        }
        assert!(matches!(
            b.add(b"c", MAX_SEQ + 1, ValueKind::Value, b""),
            Err(Error::InvalidArgument(_))
        ));
        b.add(b"b", 4, ValueKind::Tombstone, b"").unwrap();
        b.add(b"c", MAX_SEQ, ValueKind::Value, b"3").unwrap();
        assert_eq!(b.entries(), 3);
        b.finish().unwrap();
        let t = TableReader::open(
            storage.open("o.sst", OpenMode::Read).unwrap(),
            TableReadOptions::default(),
        )
        .unwrap();
        assert_eq!(forward(&t).len(), 3);
        assert_eq!(t.get(b"c", MAX_SEQ).unwrap().unwrap().value, b"3");
    }

    #[test]
    fn table_without_cache_or_filter_still_answers() {
        let storage = MemoryStorage::new();
        let entries = sample_entries(300, 10);
        let f = write_table(
            &storage,
            "n.sst",
            &entries,
            TableOptions {
                bloom_bits_per_key: 0,
                ..small_blocks()
            },
        );
        let t = TableReader::open(f, TableReadOptions::default()).unwrap();
        assert!(t.may_contain(b"anything"));
        for e in &entries {
            assert_eq!(t.get(&e.key, e.seq).unwrap().as_ref(), Some(e));
        }
    }
}
