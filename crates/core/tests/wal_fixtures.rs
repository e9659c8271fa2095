//! `fixtures/shaledb-wal-v1/wal-000001.log` was written by write-batch encoding version 1 (this
//! code): it must replay to the same batches forever, and today's writer must produce it byte for
//! byte. Regenerate (only for a new format version, in a new folder) with
//! `cargo test -p shaledb --test wal_fixtures -- --ignored`.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::path::PathBuf;

use shaledb::batch::WriteBatch;
use shaledb::recordio::Compression;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::wal::{WalEnd, WalOptions, WalReader, WalWriter};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shaledb-wal-v1/wal-000001.log")
}

/// Three batches: puts, a delete and a range delete, and a compressible one (Snappy).
fn v1_batches() -> Vec<WriteBatch> {
    let mut a = WriteBatch::new();
    a.put(b"apple", b"red").unwrap();
    a.put(b"", b"empty key").unwrap();
    a.set_first_seq(1);
    let mut b = WriteBatch::new();
    b.delete(b"apple").unwrap();
    b.delete_range(b"b", b"d").unwrap();
    b.set_first_seq(3);
    let mut c = WriteBatch::new();
    c.put(b"zeros", &[0u8; 1000]).unwrap();
    c.set_first_seq(10);
    vec![a, b, c]
}

fn write_v1(s: &MemoryStorage) -> Vec<u8> {
    let opts = WalOptions {
        compression: Compression::Snappy,
    };
    let mut w = WalWriter::create(s, 1, opts).unwrap();
    for b in v1_batches() {
        w.append(b.as_bytes()).unwrap();
    }
    let f = s.open("wal-000001.log", OpenMode::Read).unwrap();
    let mut buf = vec![0u8; f.size().unwrap() as usize];
    f.read_exact_at(0, &mut buf).unwrap();
    buf
}

#[test]
fn the_v1_wal_fixture_replays_to_its_batches() {
    let bytes = std::fs::read(fixture()).unwrap();
    let s = MemoryStorage::new();
    s.open("wal-000001.log", OpenMode::CreateNew)
        .unwrap()
        .write_at(0, &bytes)
        .unwrap();
    let mut got = Vec::new();
    let r = WalReader::replay(&s, 1, |seq, b| {
        got.push((seq, b));
        Ok(())
    })
    .unwrap();
    assert_eq!(r.end, WalEnd::Clean);
    assert_eq!(r.last_seq, Some(10));
    let want: Vec<_> = v1_batches()
        .into_iter()
        .map(|b| (b.first_seq(), b))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn todays_writer_produces_the_v1_fixture_byte_for_byte() {
    let bytes = std::fs::read(fixture()).unwrap();
    assert_eq!(write_v1(&MemoryStorage::new()), bytes);
}

#[test]
#[ignore = "writes the fixture"]
fn write_v1_wal_fixture() {
    let path = fixture();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, write_v1(&MemoryStorage::new())).unwrap();
}
