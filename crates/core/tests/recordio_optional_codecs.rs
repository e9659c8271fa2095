//! The optional codecs (crate features `gzip` and `lzw`, on by default, off in the WebAssembly
//! build): with a feature the codec works; without it, a record that needs the codec is
//! `Error::UnsupportedCompression` (code `UNSUPPORTED_COMPRESSION`), never a panic, and the
//! records before it still read. `cargo test --workspace` runs these with the features;
//! `scripts/test.sh` also runs them with `--no-default-features`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use shaledb::recordio::{Compression, Reader, ReaderOptions, Writer, WriterFormat, WriterOptions};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{FileHandle, OpenMode, Storage};
use shaledb::Error;

fn fixture(rel: &str) -> FileHandle {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let f = MemoryStorage::new()
        .open("f.rio", OpenMode::Create)
        .unwrap();
    f.write_at(0, &bytes).unwrap();
    f
}

fn new_file() -> FileHandle {
    MemoryStorage::new()
        .open("t.rio", OpenMode::Create)
        .unwrap()
}

/// Asserts that `result` is `UnsupportedCompression` naming `compression` and file `f.rio` or
/// `t.rio`.
fn assert_unsupported<T: std::fmt::Debug>(result: shaledb::Result<T>, compression: &str) {
    match result {
        Err(e @ Error::UnsupportedCompression { .. }) => {
            assert_eq!(e.code(), "UNSUPPORTED_COMPRESSION");
            let Error::UnsupportedCompression {
                file,
                compression: c,
            } = e
            else {
                unreachable!()
            };
            assert!(file == "f.rio" || file == "t.rio", "{file}");
            assert_eq!(c, compression);
        }
        other => panic!("expected UnsupportedCompression({compression}), got {other:?}"),
    }
}

#[test]
fn a_gzip_record_reads_with_the_gzip_feature_and_is_unsupported_compression_without() {
    // mixed.rio (recordio_shale_format.rs): records 0-4 are stored or snappy, record 5 is gzip.
    let mut r = Reader::open(
        fixture("shaledb-recordio-v1/mixed.rio"),
        ReaderOptions::default(),
    )
    .unwrap();
    let mut offsets = Vec::new();
    for _ in 0..5 {
        offsets.push(r.read_next().unwrap().unwrap().offset);
    }
    let sixth = r.read_next();
    if Compression::Gzip.is_supported() {
        assert_eq!(sixth.unwrap().unwrap().data.map(<[u8]>::len), Some(4000));
    } else {
        assert_unsupported(sixth, "gzip");
        // The records before it are still readable at their offsets.
        for o in offsets {
            assert!(r.read_at(o).unwrap().is_some());
        }
    }
}

#[test]
fn an_lzw_record_reads_with_the_lzw_feature_and_is_unsupported_compression_without() {
    let mut r = Reader::open(fixture("go-lzw/v4_lzw.rio"), ReaderOptions::default()).unwrap();
    assert_eq!(r.file_compression(), Compression::Lzw);
    let first = r.read_next();
    if Compression::Lzw.is_supported() {
        assert_eq!(first.unwrap().unwrap().data.map(<[u8]>::len), Some(1337));
    } else {
        assert_unsupported(first, "lzw");
    }
}

#[test]
fn writing_gzip_needs_the_gzip_feature() {
    let shale_gzip = WriterOptions {
        compression: Compression::Gzip,
        ..WriterOptions::default()
    };
    let go_gzip = WriterOptions {
        format: WriterFormat::GoV4(Compression::Gzip),
        ..WriterOptions::default()
    };
    let mut plain = Writer::new(new_file(), WriterOptions::default()).unwrap();
    let record = Some(&b"gzip me, gzip me, gzip me"[..]);
    if Compression::Gzip.is_supported() {
        for options in [shale_gzip, go_gzip] {
            let mut w = Writer::new(new_file(), options).unwrap();
            w.write_with(record, Compression::Gzip).unwrap();
        }
        plain.write_with(record, Compression::Gzip).unwrap();
    } else {
        assert_unsupported(Writer::new(new_file(), shale_gzip), "gzip");
        assert_unsupported(Writer::new(new_file(), go_gzip), "gzip");
        assert_unsupported(plain.write_with(record, Compression::Gzip), "gzip");
        // The writer is still usable.
        plain.write_with(record, Compression::Snappy).unwrap();
    }
}

#[test]
fn lzw_is_never_written_whatever_the_build() {
    let go_lzw = WriterOptions {
        format: WriterFormat::GoV4(Compression::Lzw),
        ..WriterOptions::default()
    };
    assert!(matches!(
        Writer::new(new_file(), go_lzw),
        Err(Error::InvalidArgument(_))
    ));
    let mut plain = Writer::new(new_file(), WriterOptions::default()).unwrap();
    assert!(matches!(
        plain.write_with(Some(b"x"), Compression::Lzw),
        Err(Error::InvalidArgument(_))
    ));
}
