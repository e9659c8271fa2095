//! Damaged tables give typed errors (naming the file), never a panic and never wrong data.
#![allow(clippy::unwrap_used)]
mod sstable_support;

use sstable_support::*;

use shaledb::recordio::Compression;
use shaledb::sstable::{
    Entry, TableOptions, TableReadOptions, TableReader, MAX_SEQ, TABLE_FORMAT_VERSION,
};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{FileHandle, OpenMode, Storage};
use shaledb::{Error, Result};

fn table_bytes(entries: &[Entry], compression: Compression) -> Vec<u8> {
    let storage = MemoryStorage::new();
    let f = write_table(
        &storage,
        "t.sst",
        entries,
        TableOptions {
            compression,
            ..small_blocks()
        },
    );
    let mut buf = vec![0u8; f.size().unwrap() as usize];
    f.read_exact_at(0, &mut buf).unwrap();
    buf
}

fn file_with(bytes: &[u8]) -> FileHandle {
    let storage = MemoryStorage::new();
    let f = storage.open("bad.sst", OpenMode::CreateNew).unwrap();
    f.write_at(0, bytes).unwrap();
    f
}

/// Reads everything the table offers; every successful answer must match `entries`.
fn check_all(t: &TableReader, entries: &[Entry]) -> Result<()> {
    let mut it = t.iter();
    it.seek_to_first()?;
    let mut i = 0;
    while it.valid() {
        let e = &entries[i];
        assert_eq!(
            (it.key(), it.seq(), it.value()),
            (&e.key[..], e.seq, &e.value[..])
        );
        i += 1;
        it.next()?;
    }
    assert_eq!(i, entries.len(), "iteration ended early without an error");
    let mut s = t.scan()?;
    let mut i = 0;
    while let Some(got) = s.next_entry()? {
        let e = &entries[i];
        assert_eq!(
            (got.key, got.seq, got.value),
            (&e.key[..], e.seq, &e.value[..])
        );
        i += 1;
    }
    assert_eq!(i, entries.len(), "scan ended early without an error");
    for e in entries {
        if let Some(got) = t.get(&e.key, e.seq)? {
            assert_eq!(&got, e);
        } else {
            panic!("entry lost without an error");
        }
    }
    Ok(())
}

fn assert_typed(e: &Error) {
    assert!(
        matches!(
            e.code(),
            "CORRUPTION"
                | "VERSION_UNSUPPORTED"
                | "IO"
                | "RECORD_TOO_LARGE"
                | "UNSUPPORTED_COMPRESSION"
        ),
        "unexpected error {e:?}"
    );
}

/// Module named after the suite, so `cargo test -p shaledb sstable` selects these tests.
mod sstable_corruption {
    use super::*;

    #[test]
    fn truncated_table_at_every_length_gives_a_typed_error() {
        let entries = sample_entries(60, 20);
        let bytes = table_bytes(&entries, Compression::None);
        for len in 0..bytes.len() {
            match TableReader::open(file_with(&bytes[..len]), TableReadOptions::default()) {
                Ok(_) => panic!("a table cut to {len} of {} bytes opened", bytes.len()),
                Err(e) => {
                    assert_eq!(e.code(), "CORRUPTION", "len {len}: {e:?}");
                    assert!(e.to_string().contains("bad.sst"), "{e}");
                }
            }
        }
    }

    #[test]
    fn flipped_bytes_give_a_typed_error_or_correct_data() {
        let entries = sample_entries(60, 20);
        for compression in [Compression::None, Compression::Snappy] {
            let bytes = table_bytes(&entries, compression);
            for at in 0..bytes.len() {
                for bit in [0x01u8, 0x80] {
                    let mut bad = bytes.clone();
                    bad[at] ^= bit;
                    let t = match TableReader::open(file_with(&bad), TableReadOptions::default()) {
                        Ok(t) => t,
                        Err(e) => {
                            assert_typed(&e);
                            continue;
                        }
                    };
                    if let Err(e) = check_all(&t, &entries) {
                        assert_typed(&e);
                    }
                }
            }
        }
    }

    #[test]
    fn newer_table_format_is_refused() {
        let entries = sample_entries(10, 5);
        let mut bytes = table_bytes(&entries, Compression::None);
        let n = bytes.len();
        // The version is the u32 before the 8-byte magic.
        bytes[n - 12..n - 8].copy_from_slice(&(TABLE_FORMAT_VERSION + 1).to_le_bytes());
        match TableReader::open(file_with(&bytes), TableReadOptions::default()) {
            Err(Error::VersionUnsupported { version, file }) => {
                assert_eq!(version, TABLE_FORMAT_VERSION + 1);
                assert_eq!(file, "bad.sst");
            }
            other => panic!("expected VersionUnsupported, got {other:?}"),
        }
    }

    #[test]
    fn a_file_that_is_not_a_table_is_refused() {
        for bytes in [&b""[..], b"hello", &[0u8; 200]] {
            let e = TableReader::open(file_with(bytes), TableReadOptions::default()).unwrap_err();
            assert_eq!(e.code(), "CORRUPTION");
        }
        let _ = MAX_SEQ;
    }
}
