//! Fixtures of every WAL format version, in `fixtures/shaledb-wal-v{N}/`:
//! - v1 (`wal-000001.log`, write-batch encoding 1, no log header), written by the first release:
//!   it must replay to the same batches forever;
//! - v2 (`wal-000001.log`, log header, batch records carrying synced offsets, a sealed record):
//!   today's writer must produce it byte for byte, and it must replay forever.
//!
//! Regenerate the newest (only for a new format version, in a new folder) with
//! `cargo test -p shaledb --test wal_fixtures -- --ignored`.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a test failure (clippy.toml only covers #[test] fns)"
)]

use std::path::PathBuf;

use shaledb::recordio::Compression;
use shaledb::storage::memory::MemoryStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb::write::batch::WriteBatch;
use shaledb::write::wal::{WalEnd, WalOptions, WalReader, WalReplay, WalWriter};

fn fixture(version: u32) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
        "tests/fixtures/shaledb-wal-v{version}/wal-000001.log"
    ))
}

/// Three batches: puts, a delete and a range delete, and a compressible one (Snappy). Version 1
/// had a gap before the third (its writer only promised increasing sequence numbers); version 2
/// logs are dense.
fn batches(version: u32) -> Vec<WriteBatch> {
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
    c.set_first_seq(if version == 1 { 10 } else { 5 });
    vec![a, b, c]
}

/// Today's writer: the v2 batches, then the log sealed into log 2.
fn write_current() -> Vec<u8> {
    let s = MemoryStorage::new();
    let opts = WalOptions {
        compression: Compression::Snappy,
        ..WalOptions::default()
    };
    let mut w = WalWriter::create(&s, 1, 1, opts).unwrap();
    for b in batches(2) {
        w.append(b.as_bytes()).unwrap();
    }
    // The fixture's writer synced the log before it sealed it (today a sync of the next log
    // does): the sealed record says every byte before it was synced.
    w.sync().unwrap();
    w.seal(2).unwrap();
    let f = s.open("wal-000001.log", OpenMode::Read).unwrap();
    let mut buf = vec![0u8; f.size().unwrap() as usize];
    f.read_exact_at(0, &mut buf).unwrap();
    buf
}

fn replay_fixture(version: u32) -> (WalReplay, Vec<(u64, WriteBatch)>) {
    let bytes = std::fs::read(fixture(version)).unwrap();
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
    (r, got)
}

fn with_seqs(batches: Vec<WriteBatch>) -> Vec<(u64, WriteBatch)> {
    batches.into_iter().map(|b| (b.first_seq(), b)).collect()
}

#[test]
fn the_v1_wal_fixture_replays_to_its_batches() {
    let (r, got) = replay_fixture(1);
    assert_eq!((r.end, r.format, r.last_seq), (WalEnd::Clean, 1, Some(10)));
    assert_eq!(got, with_seqs(batches(1)));
}

#[test]
fn the_v2_wal_fixture_replays_to_its_batches_and_its_seal() {
    let (r, got) = replay_fixture(2);
    assert_eq!((r.end, r.format, r.last_seq), (WalEnd::Clean, 2, Some(5)));
    assert_eq!((r.sealed, r.next_seq), (Some(2), Some(6)));
    assert_eq!(r.header.map(|h| (h.number, h.first_seq)), Some((1, 1)));
    assert_eq!(got, with_seqs(batches(2)));
}

#[test]
fn todays_writer_produces_the_v2_fixture_byte_for_byte() {
    assert_eq!(write_current(), std::fs::read(fixture(2)).unwrap());
}

#[test]
#[ignore = "writes the fixture"]
fn write_v2_wal_fixture() {
    let path = fixture(2);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, write_current()).unwrap();
}
