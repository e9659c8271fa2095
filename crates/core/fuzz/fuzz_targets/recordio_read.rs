//! Fuzzes the RecordIO reader: any file content, read sequentially and at offsets, must give
//! records or typed errors, never a panic, and never allocate more than the file holds
//! (no record-size cap is set, so a length from the input cannot hide behind one).
#![no_main]

use libfuzzer_sys::fuzz_target;
use shaledb::recordio::{Reader, ReaderOptions};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};

fuzz_target!(|data: &[u8]| {
    let storage = MemoryStorage::new();
    let Ok(file) = storage.open("fuzz", OpenMode::Create) else {
        return;
    };
    if file.write_at(0, data).is_err() {
        return;
    }
    let options = ReaderOptions {
        max_record_size: u64::MAX,
        ..ReaderOptions::default()
    };
    let Ok(mut reader) = Reader::open(file, options) else {
        return;
    };
    for _ in 0..=data.len() {
        match reader.read_next() {
            Ok(Some(_)) => {}
            _ => break,
        }
    }
    for offset in 0..=data.len() as u64 {
        if let Ok(Some(rec)) = reader.read_at(offset) {
            let _ = reader.read_at_sized(offset, rec.next_offset - offset);
        }
    }
});
