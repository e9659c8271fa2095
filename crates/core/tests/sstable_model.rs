//! A table answers get, seek and iteration exactly like a `BTreeMap` model of its entries.
mod sstable_support;

use std::collections::BTreeMap;

use proptest::prelude::*;
use sstable_support::*;

use shaledb::recordio::Compression;
use shaledb::sstable::{Entry, TableOptions, ValueKind};
use shaledb::storage::memory::MemoryStorage;

/// Model key: (user key, Reverse(seq)) so that BTreeMap order is table order.
type Model = BTreeMap<(Vec<u8>, std::cmp::Reverse<u64>), (ValueKind, Vec<u8>)>;

fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xff]), 0..6)
}

/// Module named after the suite, so `cargo test -p shaledb sstable` selects these tests.
mod sstable_model {
    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]

        #[test]
        fn table_matches_btreemap_model(
            raw in prop::collection::vec(
                (key_strategy(), 0u64..20, any::<bool>(), prop::collection::vec(any::<u8>(), 0..60)),
                0..300,
            ),
            probes in prop::collection::vec((key_strategy(), 0u64..22), 30),
            block_size in prop::sample::select(vec![64usize, 200, 4096]),
            restart_interval in 1usize..20,
            snappy in any::<bool>(),
        ) {
            let mut model = Model::new();
            for (k, seq, tomb, v) in raw {
                let kind = if tomb { ValueKind::Tombstone } else { ValueKind::Value };
                model.insert((k, std::cmp::Reverse(seq)), (kind, v));
            }
            let entries: Vec<Entry> = model
                .iter()
                .map(|((k, s), (kind, v))| Entry { key: k.clone(), seq: s.0, kind: *kind, value: v.clone() })
                .collect();
            let storage = MemoryStorage::new();
            let options = TableOptions {
                block_size,
                restart_interval,
                compression: if snappy { Compression::Snappy } else { Compression::None },
                sync_on_finish: false,
                ..TableOptions::default()
            };
            let t = open(write_table(&storage, "m.sst", &entries, options));
            prop_assert_eq!(&forward(&t), &entries);
            prop_assert_eq!(&scanned(&t), &entries);

            let mut it = t.iter();
            for (k, snap) in probes {
                // get: newest version of k with seq <= snap.
                let want = model
                    .range((k.clone(), std::cmp::Reverse(snap))..)
                    .next()
                    .filter(|((mk, _), _)| *mk == k)
                    .map(|((mk, s), (kind, v))| Entry { key: mk.clone(), seq: s.0, kind: *kind, value: v.clone() });
                prop_assert_eq!(t.get(&k, snap).unwrap(), want.clone());
                if want.is_some() {
                    prop_assert!(t.may_contain(&k));
                }
                // seek_at: first entry at or after (k, snap), then one step each way.
                let pos = entries.partition_point(|e| (e.key.as_slice(), std::cmp::Reverse(e.seq)) < (k.as_slice(), std::cmp::Reverse(snap)));
                it.seek_at(&k, snap).unwrap();
                let here = |it: &shaledb::sstable::TableIter| it.valid().then(|| (it.key().to_vec(), it.seq()));
                let at = |i: usize| entries.get(i).map(|e| (e.key.clone(), e.seq));
                prop_assert_eq!(here(&it), at(pos));
                if it.valid() {
                    it.prev().unwrap();
                    prop_assert_eq!(here(&it), pos.checked_sub(1).and_then(at));
                    it.seek_at(&k, snap).unwrap();
                    it.next().unwrap();
                    prop_assert_eq!(here(&it), at(pos + 1));
                }
                // seek: newest version of the first key >= k.
                let pos = entries.partition_point(|e| e.key < k);
                it.seek(&k).unwrap();
                prop_assert_eq!(here(&it), at(pos));
            }
        }
    }
}
