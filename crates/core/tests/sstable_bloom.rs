//! The Bloom filter answers for absent keys at about 1% false positives at 10 bits per key.
mod sstable_support;

use sstable_support::*;

use shaledb::sstable::{Entry, TableOptions, ValueKind};
use shaledb::storage::memory::MemoryStorage;

/// Module named after the suite, so `cargo test -p shaledb sstable` selects these tests.
mod sstable_bloom {
    use super::*;

    #[test]
    fn bloom_false_positive_rate_is_about_one_percent_at_10_bits_per_key() {
        let storage = MemoryStorage::new();
        let entries: Vec<Entry> = (0..20_000u32)
            .map(|i| Entry {
                key: (i * 2).to_be_bytes().to_vec(),
                seq: 1,
                kind: ValueKind::Value,
                value: b"v".to_vec(),
            })
            .collect();
        let t = open(write_table(
            &storage,
            "b.sst",
            &entries,
            TableOptions {
                sync_on_finish: false,
                ..TableOptions::default()
            },
        ));
        for e in &entries {
            assert!(t.may_contain(&e.key));
        }
        let absent = 100_000u32;
        let fp = (0..absent)
            .filter(|i| t.may_contain(&(i * 2 + 1).to_be_bytes()))
            .count();
        let rate = fp as f64 / f64::from(absent);
        assert!((0.002..0.02).contains(&rate), "false-positive rate {rate}");
    }
}
