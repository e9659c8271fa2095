//! A table cursor moving forward reads blocks ahead: far fewer storage calls for a scan, the
//! same entries, and the same errors as blocks read one by one.
#![allow(clippy::unwrap_used)]
mod sstable_support;

use std::sync::Arc;

use sstable_support::*;

use shaledb::sstable::{Entry, TableIter, TableReadOptions, TableReader};
use shaledb::storage::faulty::{Fault, FaultyStorage};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};

/// `entries` in a table of small blocks on a storage that counts and fails calls; opened
/// without a block cache, so every block a cursor loads comes from storage.
fn table_on_faulty_storage(entries: &[Entry]) -> (FaultyStorage, TableReader) {
    let memory = MemoryStorage::new();
    write_table(&memory, "t.sst", entries, small_blocks());
    let faulty = FaultyStorage::new(Arc::new(memory));
    let file = faulty.open("t.sst", OpenMode::Read).unwrap();
    let table = TableReader::open(file, TableReadOptions::default()).unwrap();
    (faulty, table)
}

/// The first error of `step`ping `it` (which must meet one before it runs off the table).
fn first_error(
    it: &mut TableIter,
    step: fn(&mut TableIter) -> shaledb::Result<()>,
) -> shaledb::Error {
    loop {
        assert!(it.valid(), "the cursor ran off the table without an error");
        if let Err(e) = step(it) {
            return e;
        }
    }
}

fn entry(it: &TableIter) -> Entry {
    Entry {
        key: it.key().to_vec(),
        seq: it.seq(),
        kind: it.kind(),
        value: it.value().to_vec(),
    }
}

/// Module named after the suite, so `cargo test -p shaledb sstable` selects these tests.
mod sstable_readahead {
    use super::*;

    #[test]
    fn a_forward_scan_reads_many_blocks_per_storage_call_and_yields_every_entry() {
        let entries = sample_entries(3000, 100);
        let (storage, t) = table_on_faulty_storage(&entries);
        let blocks = t.data_blocks() as u64;
        assert!(blocks > 1000, "{blocks} blocks");
        let before = storage.io_calls();
        assert_eq!(forward(&t), entries);
        let calls = storage.io_calls() - before;
        assert!(
            calls * 50 < blocks,
            "{calls} storage calls for {blocks} blocks"
        );
    }

    #[test]
    fn a_cursor_moving_backward_or_seeking_reads_only_the_blocks_it_lands_on() {
        let entries = sample_entries(800, 100);
        let (storage, t) = table_on_faulty_storage(&entries);
        let blocks = t.data_blocks() as u64;
        // Backward: one read per block, never more (nothing is read ahead, or behind).
        let before = storage.io_calls();
        let mut it = t.iter();
        it.seek_to_last().unwrap();
        let mut back = Vec::new();
        while it.valid() {
            back.push(entry(&it));
            it.prev().unwrap();
        }
        back.reverse();
        assert_eq!(back, entries);
        assert_eq!(storage.io_calls() - before, blocks);
        // Seeks far apart: one block read each.
        let before = storage.io_calls();
        let mut it = t.iter();
        for e in entries.iter().step_by(97) {
            it.seek_at(&e.key, e.seq).unwrap();
            assert_eq!(entry(&it), *e);
        }
        let seeks = entries.iter().step_by(97).count() as u64;
        assert_eq!(storage.io_calls() - before, seeks);
    }

    #[test]
    fn a_read_failing_while_reading_ahead_is_the_cursors_error_and_a_new_seek_reads_again() {
        let entries = sample_entries(1500, 100);
        let (storage, t) = table_on_faulty_storage(&entries);
        // The third read of the scan: its second readahead (the first block is read alone, the
        // second starts reading ahead).
        storage.arm(3, Fault::Error);
        let mut it = t.iter();
        it.seek_to_first().unwrap();
        let mut seen = Vec::new();
        let failed = loop {
            if !it.valid() {
                panic!("the scan ended without the armed fault");
            }
            seen.push(entry(&it));
            if let Err(e) = it.next() {
                break e;
            }
        };
        assert!(storage.fault_fired());
        assert_eq!(failed.code(), "IO", "{failed}");
        assert!(!it.valid());
        assert_eq!(seen, entries[..seen.len()]);
        // The cursor reads again from where it stopped, to the end.
        let next = &entries[seen.len()];
        it.seek_at(&next.key, next.seq).unwrap();
        while it.valid() {
            seen.push(entry(&it));
            it.next().unwrap();
        }
        assert_eq!(seen, entries);
    }

    #[test]
    fn a_damaged_block_read_ahead_is_the_same_corruption_error_as_read_alone() {
        let entries = sample_entries(1500, 100);
        let memory = MemoryStorage::new();
        let file = write_table(&memory, "t.sst", &entries, small_blocks());
        // A byte in the middle of the data section (the metadata sits at the end).
        let at = file.size().unwrap() / 3;
        let mut byte = [0u8; 1];
        file.read_exact_at(at, &mut byte).unwrap();
        let rw = memory.open("t.sst", OpenMode::ReadWrite).unwrap();
        rw.write_at(at, &[byte[0] ^ 0x40]).unwrap();
        let t = TableReader::open(file, TableReadOptions::default()).unwrap();
        // Forward (reading ahead) and backward (block by block) meet the same damaged block.
        let mut it = t.iter();
        it.seek_to_first().unwrap();
        let ahead = first_error(&mut it, TableIter::next);
        let mut it = t.iter();
        it.seek_to_last().unwrap();
        let alone = first_error(&mut it, TableIter::prev);
        assert_eq!(ahead.code(), "CORRUPTION", "{ahead}");
        assert!(ahead.to_string().contains("t.sst"), "{ahead}");
        assert_eq!(ahead.to_string(), alone.to_string());
    }
}
