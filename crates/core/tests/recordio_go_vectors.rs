//! Every go-sstables RecordIO vector file (versions 1 to 4, plus files written by go-sstables
//! v1.7.0) reads exactly as `tests/fixtures/go-sstables-recordio` documents (EXPECTED.md):
//! sequentially and with `read_at` at every record's offset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use shaledb::recordio::{Compression, Reader, ReaderOptions, Version};
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{FileHandle, OpenMode, Storage};
use shaledb::Error;

fn fixture(rel: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/go-sstables-recordio")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn handle(bytes: &[u8]) -> FileHandle {
    let s = MemoryStorage::new();
    let f = s.open("f", OpenMode::Create).unwrap();
    f.write_at(0, bytes).unwrap();
    f
}

fn open(rel: &str) -> shaledb::Result<Reader> {
    Reader::open(handle(&fixture(rel)), ReaderOptions::default())
}

fn ascending(n: usize) -> Option<Vec<u8>> {
    Some((0..n).map(|k| k as u8).collect())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Magic,
    HeaderCrc,
    Corrupt,
}

fn kind_of(e: &Error) -> Kind {
    match e {
        Error::MagicMismatch { .. } => Kind::Magic,
        Error::HeaderChecksumMismatch { .. } => Kind::HeaderCrc,
        Error::Corruption { .. } => Kind::Corrupt,
        other => panic!("unexpected error kind: {other:?}"),
    }
}

/// Reads `rel` sequentially; returns (offset, record) pairs and the final error kind, if any.
/// (offset, next offset, data) of one record read.
type Read = (u64, u64, Option<Vec<u8>>);

fn read_all(rel: &str) -> (Vec<Read>, Option<Kind>) {
    let mut r = open(rel).unwrap();
    let mut out = Vec::new();
    loop {
        match r.read_next() {
            Ok(Some(rec)) => out.push((rec.offset, rec.next_offset, rec.data.map(<[u8]>::to_vec))),
            Ok(None) => {
                // A clean end stays a clean end.
                assert!(r.read_next().unwrap().is_none());
                return (out, None);
            }
            Err(e) => return (out, Some(kind_of(&e))),
        }
    }
}

/// Checks the sequential result, then `read_at` at every record offset.
fn check(rel: &str, comp: Compression, expected: &[Option<Vec<u8>>], end: Option<Kind>) {
    let r = open(rel).unwrap();
    assert_eq!(r.file_compression(), comp, "{rel}");
    let (got, err) = read_all(rel);
    let records: Vec<_> = got.iter().map(|(_, _, d)| d.clone()).collect();
    assert_eq!(records.len(), expected.len(), "{rel}: record count");
    for (i, (g, e)) in records.iter().zip(expected).enumerate() {
        assert_eq!(g, e, "{rel}: record {i}");
    }
    assert_eq!(err, end, "{rel}: end of reading");
    let mut prev_next = 8;
    for (offset, next, data) in &got {
        assert_eq!(*offset, prev_next, "{rel}: records are back to back");
        prev_next = *next;
        let at = r.read_at(*offset).unwrap().unwrap();
        assert_eq!((&at.data, at.next_offset), (data, *next), "{rel} @{offset}");
        let sized = r.read_at_sized(*offset, next - offset).unwrap();
        assert_eq!(&sized.data, data, "{rel} @{offset} sized");
    }
    // Exactly at the end: a clean end; past it: an error.
    assert_eq!(r.read_at(r.size()).unwrap(), None, "{rel}");
    assert!(r.read_at(r.size() + 1).is_err(), "{rel}");
    assert!(r.read_at(42_000).is_err(), "{rel}");
}

fn open_err(rel: &str) -> Error {
    open(rel).expect_err(rel)
}

const PREFIXES: [&str; 4] = ["v1", "v2", "v3", "v4"];

#[test]
fn version_and_compression_are_checked_at_open() {
    for v in PREFIXES {
        for (file, version) in [("_v0", 0), ("_v256", 256)] {
            let rel = format!("{v}/recordio_UncompressedSingleRecord{file}");
            match open_err(&rel) {
                Error::VersionUnsupported { version: got, .. } => assert_eq!(got, version, "{rel}"),
                e => panic!("{rel}: {e:?}"),
            }
        }
        if v != "v1" {
            let rel = format!("{v}/recordio_UncompressedSingleRecord_comp300");
            match open_err(&rel) {
                Error::UnknownCompression { code: 300, .. } => {}
                e => panic!("{rel}: {e:?}"),
            }
        }
    }
    for (i, v) in PREFIXES.iter().enumerate() {
        let r = open(&format!("{v}/recordio_UncompressedSingleRecord")).unwrap();
        assert_eq!(r.version(), Version::Go(i as u32 + 1));
    }
}

#[test]
fn single_records_read_in_every_version() {
    for v in PREFIXES {
        let rel = format!("{v}/recordio_UncompressedSingleRecord");
        check(&rel, Compression::None, &[ascending(13)], None);
    }
}

#[test]
fn single_record_read_at_mmap_expectations() {
    for (v, end) in [("v2", 26u64), ("v3", 27), ("v4", 32)] {
        let r = open(&format!("{v}/recordio_UncompressedSingleRecord")).unwrap();
        assert_eq!(r.read_at(8).unwrap().unwrap().data, ascending(13));
        assert!(
            matches!(r.read_at(9), Err(Error::MagicMismatch { offset: 9, .. })),
            "{v}"
        );
        assert_eq!(r.read_at(end).unwrap(), None, "{v}");
        assert!(
            matches!(r.read_at(end - 1), Err(Error::MagicMismatch { .. })),
            "{v}: {:?}",
            r.read_at(end - 1)
        );
        assert!(r.read_at(42_000).is_err());
    }
}

#[test]
fn multi_record_files_hold_255_ascending_records() {
    let expected: Vec<_> = (0..255).map(ascending).collect();
    for v in PREFIXES {
        check(
            &format!("{v}/recordio_UncompressedWriterMultiRecord_asc"),
            Compression::None,
            &expected,
            None,
        );
        check(
            &format!("{v}/recordio_SnappyWriterMultiRecord_asc"),
            Compression::Snappy,
            &expected,
            None,
        );
    }
}

#[test]
fn compressed_single_records_v2_to_v4() {
    for v in ["v2", "v3", "v4"] {
        check(
            &format!("{v}/recordio_UncompressedSingleRecord_comp1"),
            Compression::Gzip,
            &[ascending(1337)],
            None,
        );
        check(
            &format!("{v}/recordio_UncompressedSingleRecord_comp2"),
            Compression::Snappy,
            &[ascending(1337)],
            None,
        );
    }
}

#[test]
fn v1_patched_compression_fails_to_decompress() {
    for (file, comp) in [
        ("_comp1", Compression::Gzip),
        ("_comp2", Compression::Snappy),
    ] {
        let rel = format!("v1/recordio_UncompressedSingleRecord{file}");
        let mut r = open(&rel).unwrap();
        assert_eq!(r.file_compression(), comp);
        match r.read_next() {
            Err(Error::Corruption { offset: 8, .. }) => {}
            other => panic!("{rel}: must not return the raw bytes: {other:?}"),
        }
        assert!(matches!(
            r.read_at(8),
            Err(Error::Corruption { offset: 8, .. })
        ));
    }
}

#[test]
fn magic_mismatch_stops_reading_before_any_record() {
    for v in PREFIXES {
        check(
            &format!("{v}/recordio_UncompressedSingleRecord_mnm"),
            Compression::None,
            &[],
            Some(Kind::Magic),
        );
        let r = open(&format!("{v}/recordio_UncompressedSingleRecord_mnm")).unwrap();
        assert!(matches!(
            r.read_at(8),
            Err(Error::MagicMismatch { offset: 8, .. })
        ));
    }
}

#[test]
fn directio_zero_padding_is_a_clean_end_only_sequentially() {
    let rec = Some(vec![13u8, 6, 29, 7]);
    for (v, record_end) in [("v2", 17u64), ("v3", 18), ("v4", 23)] {
        let rel = format!("{v}/recordio_UncompressedSingleRecord_directio");
        check(&rel, Compression::None, std::slice::from_ref(&rec), None);
        let r = open(&rel).unwrap();
        assert_eq!(r.size(), 4096);
        assert!(
            matches!(r.read_at(record_end), Err(Error::MagicMismatch { .. })),
            "{rel}: the mmap reader has no padding rule"
        );
        let trailer = format!("{v}/recordio_UncompressedSingleRecord_directio_trailer");
        check(
            &trailer,
            Compression::None,
            std::slice::from_ref(&rec),
            Some(Kind::Magic),
        );
    }
}

#[test]
fn magic_number_in_payloads_does_not_resync() {
    let expected = [
        Some(vec![0x91, 0x8d, 0x4c]),
        Some(vec![21, 8, 23]),
        Some(vec![0x91, 0x8d, 0x4c]),
    ];
    for (v, offsets) in [("v3", [8u64, 17, 26]), ("v4", [8, 21, 34])] {
        let rel = format!("{v}/recordio_UncompressedMagicNumberContent");
        check(&rel, Compression::None, &expected, None);
        let (got, _) = read_all(&rel);
        let got: Vec<u64> = got.iter().map(|g| g.0).collect();
        assert_eq!(got, offsets);
    }
}

#[test]
fn nil_and_empty_records_are_distinct() {
    for (v, empty_at) in [("v3", 14u64), ("v4", 19)] {
        let rel = format!("{v}/recordio_UncompressedNilAndEmptyRecord");
        check(&rel, Compression::None, &[None, Some(vec![])], None);
        let r = open(&rel).unwrap();
        assert_eq!(r.read_at(8).unwrap().unwrap().data, None);
        assert_eq!(r.read_at(empty_at).unwrap().unwrap().data, Some(vec![]));
    }
}

#[test]
fn v4_header_checksum_failure() {
    let rel = "v4/recordio_UncompressedCrcFailure";
    check(rel, Compression::None, &[], Some(Kind::HeaderCrc));
    let mut r = open(rel).unwrap();
    match r.read_next() {
        Err(Error::HeaderChecksumMismatch {
            offset: 8,
            stored: 0x0553_A84B,
            computed: 0xF173_A84B,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn files_written_by_go_sstables_v1_7_0() {
    let abc = [
        Some(b"a".to_vec()),
        Some(b"bb".to_vec()),
        Some(b"ccc".to_vec()),
    ];
    check("gen/none.rio", Compression::None, &abc, None);
    check("gen/snappy.rio", Compression::Snappy, &abc, None);
    check(
        "gen/nil_empty.rio",
        Compression::None,
        &[None, Some(vec![]), Some(b"x".to_vec())],
        None,
    );
}

#[test]
fn every_vector_file_is_covered() {
    // Guards against a fixture added without a test above.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/go-sstables-recordio");
    let mut n = 0;
    for v in ["v1", "v2", "v3", "v4", "gen"] {
        n += std::fs::read_dir(dir.join(v)).unwrap().count();
    }
    assert_eq!(n, 8 + 11 + 13 + 14 + 3);
}

#[test]
fn truncated_go_files_report_torn_tails() {
    let bytes = fixture("v4/recordio_UncompressedWriterMultiRecord_asc");
    let mut offsets = vec![];
    let mut r = Reader::open(handle(&bytes), ReaderOptions::default()).unwrap();
    while let Some(rec) = r.read_next().unwrap() {
        offsets.push(rec.offset);
    }
    for cut in [9usize, 100, 1000, bytes.len() - 1] {
        let mut r = Reader::open(handle(&bytes[..cut]), ReaderOptions::default()).unwrap();
        let last_good = *offsets.iter().rfind(|&&o| o <= cut as u64).unwrap();
        loop {
            match r.read_next() {
                Ok(Some(_)) => {}
                Ok(None) => {
                    assert_eq!(last_good, cut as u64);
                    break;
                }
                Err(Error::TornTail { valid_up_to, .. }) => {
                    assert_eq!(valid_up_to, last_good);
                    break;
                }
                Err(e) => panic!("cut {cut}: {e:?}"),
            }
        }
    }
}

#[test]
fn lzw_records_written_by_go_compress_lzw_decode_with_weezl() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/go-lzw/v4_lzw.rio");
    let bytes = std::fs::read(p).unwrap();
    let f = handle(&bytes);
    let mut r = Reader::open(f, ReaderOptions::default()).unwrap();
    assert_eq!(r.file_compression(), Compression::Lzw);
    let expected = [
        ascending(1337),
        None,
        Some(vec![]),
        Some(
            (0..200_000usize)
                .map(|i| ((i * i + i / 3) % 251) as u8)
                .collect(),
        ),
        Some((0..100_000usize).map(|i| (i / 100) as u8).collect()),
        Some(b"x".to_vec()),
    ];
    let mut offsets = vec![];
    for (i, e) in expected.iter().enumerate() {
        let rec = r.read_next().unwrap().unwrap();
        assert_eq!(rec.data.map(<[u8]>::to_vec), *e, "record {i}");
        offsets.push(rec.offset);
    }
    assert!(r.read_next().unwrap().is_none());
    for (o, e) in offsets.iter().zip(&expected) {
        assert_eq!(r.read_at(*o).unwrap().unwrap().data, *e);
    }
}
