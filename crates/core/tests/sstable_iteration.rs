//! Cursors move across block boundaries in both directions.
mod sstable_support;

use sstable_support::*;

use shaledb::sstable::{Entry, TableIter};
use shaledb::storage::memory::MemoryStorage;

fn here(it: &TableIter) -> Option<(Vec<u8>, u64)> {
    it.valid().then(|| (it.key().to_vec(), it.seq()))
}

fn id(e: &Entry) -> Option<(Vec<u8>, u64)> {
    Some((e.key.clone(), e.seq))
}

/// Module named after the suite, so `cargo test -p shaledb sstable` selects these tests.
mod sstable_iteration {
    use super::*;

    #[test]
    fn reverse_iteration_equals_reversed_forward() {
        let storage = MemoryStorage::new();
        let entries = sample_entries(1500, 30);
        let t = open(write_table(&storage, "t.sst", &entries, small_blocks()));
        let mut it = t.iter();
        it.seek_to_last().unwrap();
        let mut back = Vec::new();
        while it.valid() {
            back.push((it.key().to_vec(), it.seq(), it.value().to_vec()));
            it.prev().unwrap();
        }
        back.reverse();
        let fwd: Vec<_> = forward(&t)
            .into_iter()
            .map(|e| (e.key, e.seq, e.value))
            .collect();
        assert_eq!(back, fwd);
        assert_eq!(fwd.len(), entries.len());
    }

    #[test]
    fn seek_next_and_prev_cross_block_boundaries() {
        let storage = MemoryStorage::new();
        let entries = sample_entries(800, 50);
        let t = open(write_table(&storage, "t.sst", &entries, small_blocks()));
        assert!(t.data_blocks() > 50);
        let mut it = t.iter();
        for (i, e) in entries.iter().enumerate() {
            // seek(key) lands on the newest version of the key.
            it.seek(&e.key).unwrap();
            let newest = entries.iter().position(|x| x.key == e.key).unwrap();
            assert_eq!(here(&it), id(&entries[newest]));
            // seek_at lands exactly on the entry; next and prev step to its neighbours.
            it.seek_at(&e.key, e.seq).unwrap();
            assert_eq!(here(&it), id(e));
            it.next().unwrap();
            assert_eq!(here(&it), entries.get(i + 1).and_then(id));
            it.seek_at(&e.key, e.seq).unwrap();
            it.prev().unwrap();
            assert_eq!(here(&it), i.checked_sub(1).and_then(|p| id(&entries[p])));
            // A key just after this one lands on the next key's newest version.
            let mut after = e.key.clone();
            after.push(0);
            it.seek(&after).unwrap();
            let next_key = entries.iter().find(|x| x.key > e.key);
            assert_eq!(here(&it), next_key.and_then(id));
        }
        it.seek(b"").unwrap();
        assert_eq!(here(&it), id(&entries[0]));
        it.prev().unwrap();
        assert!(!it.valid());
        it.seek(b"zzzz").unwrap();
        assert!(!it.valid());
        it.seek_to_last().unwrap();
        assert_eq!(here(&it), entries.last().and_then(id));
        it.next().unwrap();
        assert!(!it.valid());
    }

    #[test]
    fn scan_matches_forward_iteration() {
        let storage = MemoryStorage::new();
        let entries = sample_entries(1000, 200);
        let t = open(write_table(&storage, "t.sst", &entries, small_blocks()));
        assert_eq!(scanned(&t), forward(&t));
    }
}
