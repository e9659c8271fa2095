//! RecordIO benchmarks: go-sstables' recordio workloads (`bench/peers/gosst`) on disk, with
//! the same totals, record sizes and timing (from the open file to the final flush and close).
//!
//! `cargo bench -p shaledb --bench recordio [-- FILTER...]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::time::{Duration, Instant};

use shaledb::recordio::{Compression, Reader, ReaderOptions, Writer, WriterOptions};
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb_bench_support::{mb_per_s, random_bytes, Bench, GO_MB};

const SIZES: [(&str, usize); 4] = [
    ("1KiB", 1024),
    ("10KiB", 10 * 1024),
    ("100KiB", 100 * 1024),
    ("1MB", GO_MB),
];

/// Writes `total / size` records of `size` bytes; returns (bytes, elapsed).
fn write(
    storage: &StdFsStorage,
    size: usize,
    total: usize,
    c: Compression,
    sync: bool,
) -> (u64, Duration) {
    let rec = random_bytes(size, size as u64);
    let n = (total / size).max(1);
    let file = storage.open("w.rio", OpenMode::Create).unwrap();
    let opts = WriterOptions {
        compression: c,
        buffer_size: 4 * 1024 * 1024,
        ..WriterOptions::default()
    };
    let t = Instant::now();
    let mut w = Writer::new(file, opts).unwrap();
    for _ in 0..n {
        if sync {
            w.write_sync(&rec).unwrap();
        } else {
            w.write(&rec).unwrap();
        }
    }
    let (file, _) = w.finish().unwrap();
    drop(file);
    let elapsed = t.elapsed();
    storage.remove("w.rio").unwrap();
    ((n * size) as u64, elapsed)
}

/// `write/sync/1KiB` beside its OS floor, interleaved so that both see the same disk: each
/// round appends one 1 KiB record with `Writer::write_sync`, then appends 1 KiB to a plain file
/// with `write` + `fdatasync`. Returns (shaledb time including the final close, os time).
fn sync_vs_fdatasync(
    storage: &StdFsStorage,
    dir: &std::path::Path,
    n: usize,
) -> (Duration, Duration) {
    let rec = random_bytes(1024, 1024);
    let path = dir.join("os.bin");
    let mut os = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&path)
        .unwrap();
    let file = storage.open("s.rio", OpenMode::Create).unwrap();
    let (mut ours, mut theirs) = (Duration::ZERO, Duration::ZERO);
    let t = Instant::now();
    let mut w = Writer::new(file, WriterOptions::default()).unwrap();
    ours += t.elapsed();
    for _ in 0..n {
        let t = Instant::now();
        w.write_sync(&rec).unwrap();
        ours += t.elapsed();
        let t = Instant::now();
        os.write_all(&rec).unwrap();
        os.sync_data().unwrap();
        theirs += t.elapsed();
    }
    let t = Instant::now();
    drop(w.finish().unwrap());
    ours += t.elapsed();
    drop(os);
    std::fs::remove_file(path).unwrap();
    storage.remove("s.rio").unwrap();
    (ours, theirs)
}

fn read(storage: &StdFsStorage, total: usize) -> f64 {
    let rec = random_bytes(1024, 1);
    let file = storage.open("r.rio", OpenMode::Create).unwrap();
    let mut w = Writer::new(file, WriterOptions::default()).unwrap();
    for _ in 0..total / 1024 {
        w.write(&rec).unwrap();
    }
    drop(w.finish().unwrap());
    let t = Instant::now();
    let file = storage.open("r.rio", OpenMode::Read).unwrap();
    let mut r = Reader::open(file, ReaderOptions::default()).unwrap();
    let mut bytes = 0u64;
    while let Some(rec) = r.read_next().unwrap() {
        bytes += rec.data.map_or(0, <[u8]>::len) as u64;
    }
    drop(r);
    let v = mb_per_s(bytes, t.elapsed());
    storage.remove("r.rio").unwrap();
    v
}

fn main() {
    let bench = Bench::from_args("recordio");
    shaledb_bench_support::drop_page_cache();
    let dir = bench.scratch();
    let storage = StdFsStorage::open(dir.path()).unwrap();
    // (No warm-up write: deleting its file right before the first case made that case
    // erratic — 1.1 to 2.8 GB/s — while go-sstables, which has none, measured steadily.)
    for (name, size) in SIZES {
        for (c, total) in [
            (Compression::None, 256 << 20),
            (Compression::Snappy, 128 << 20),
            (Compression::Gzip, 128 << 20),
        ] {
            let case = format!("write/{}/{name}", c.name());
            if bench.enabled(&case) {
                let (bytes, t) = write(&storage, size, total, c, false);
                bench.emit(&case, "shaledb", "MB/s", mb_per_s(bytes, t));
            }
        }
    }
    if bench.enabled("write/sync/1KiB") || bench.enabled("fdatasync/1KiB") {
        let n = 300;
        let (ours, os) = sync_vs_fdatasync(&storage, dir.path(), n);
        let us = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
        bench.emit(
            "write/sync/1KiB",
            "shaledb",
            "MB/s",
            mb_per_s((n * 1024) as u64, ours),
        );
        bench.emit("write/sync/1KiB", "shaledb", "us/op", us(ours));
        bench.emit("fdatasync/1KiB", "os", "us/op", us(os));
    }
    if bench.enabled("read/1KiB") {
        bench.emit("read/1KiB", "shaledb", "MB/s", read(&storage, 256 << 20));
    }
}
