//! The go-sstables v4 writer produces files byte-identical to what go-sstables v1.7.0 writes
//! for the same records (`tests/fixtures/go-sstables-recordio/gen`), and they read back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use shaledb::recordio::{Compression, Reader, ReaderOptions, Writer, WriterFormat, WriterOptions};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/go-sstables-recordio/gen")
            .join(rel),
    )
    .unwrap()
}

fn write_go(comp: Compression, records: &[Option<&[u8]>], buffer_size: usize) -> Vec<u8> {
    let s = MemoryStorage::new();
    let f = s.open("f", OpenMode::Create).unwrap();
    let opts = WriterOptions {
        format: WriterFormat::GoV4(comp),
        buffer_size,
        ..WriterOptions::default()
    };
    let mut w = Writer::new(f, opts).unwrap();
    let mut offsets = vec![];
    for r in records {
        offsets.push(match r {
            Some(r) => w.write(r).unwrap(),
            None => w.write_nil().unwrap(),
        });
    }
    let (f, size) = w.finish().unwrap();
    let mut out = vec![0u8; size as usize];
    f.read_exact_at(0, &mut out).unwrap();
    // Offsets returned are record header offsets.
    let r = Reader::open(f, ReaderOptions::default()).unwrap();
    for (o, rec) in offsets.iter().zip(records) {
        assert_eq!(r.read_at(*o).unwrap().unwrap().data.as_deref(), *rec);
    }
    out
}

const ABC: [Option<&[u8]>; 3] = [Some(b"a"), Some(b"bb"), Some(b"ccc")];

#[test]
fn uncompressed_file_is_byte_identical() {
    for buffer in [0, 7, 4 << 20] {
        assert_eq!(
            write_go(Compression::None, &ABC, buffer),
            fixture("none.rio")
        );
    }
}

#[test]
fn snappy_file_is_byte_identical() {
    assert_eq!(
        write_go(Compression::Snappy, &ABC, 4 << 20),
        fixture("snappy.rio")
    );
}

#[test]
fn nil_and_empty_file_is_byte_identical() {
    let records: [Option<&[u8]>; 3] = [None, Some(b""), Some(b"x")];
    assert_eq!(
        write_go(Compression::None, &records, 4 << 20),
        fixture("nil_empty.rio")
    );
}

#[test]
fn compressed_go_files_round_trip_with_nil_records() {
    let big: Vec<u8> = (0..100_000u32).map(|i| (i % 7) as u8).collect();
    let records: [Option<&[u8]>; 5] = [None, Some(b""), Some(&big), None, Some(b"tail")];
    for comp in [Compression::None, Compression::Snappy, Compression::Gzip] {
        let bytes = write_go(comp, &records, 4096);
        let s = MemoryStorage::new();
        let f = s.open("g", OpenMode::Create).unwrap();
        f.write_at(0, &bytes).unwrap();
        let mut r = Reader::open(f, ReaderOptions::default()).unwrap();
        for rec in records {
            assert_eq!(r.read_next().unwrap().unwrap().data, rec, "{comp:?}");
        }
        assert!(r.read_next().unwrap().is_none());
    }
}

#[test]
fn go_writer_refuses_lzw_and_mixed_compression() {
    let s = MemoryStorage::new();
    let f = s.open("f", OpenMode::Create).unwrap();
    let opts = |c| WriterOptions {
        format: WriterFormat::GoV4(c),
        ..WriterOptions::default()
    };
    assert!(Writer::new(f.clone(), opts(Compression::Lzw)).is_err());
    let mut w = Writer::new(f, opts(Compression::None)).unwrap();
    assert!(w.write_with(Some(b"x"), Compression::Snappy).is_err());
}
