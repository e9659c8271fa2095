//! SSTable benchmarks: go-sstables' own table workloads (see `bench/peers/gosst`), on disk.
//!
//! - `flush/<N>MiB`: build a table from a sorted in-memory map (4-byte big-endian counter keys,
//!   one shared 1 KiB random value) until N MiB of key+value bytes; MB/s of key+value bytes,
//!   timing file creation, every add and `finish`.
//! - `scan/<N>MiB`: a table keyed by SHA-1 of the big-endian u32 counter, 1 KiB values; MB/s of
//!   key+value bytes from open to the end of a full scan.
//! - `get/<N>MiB`: us per get, 200,000 gets cycling through the shuffled keys, with a block cache
//!   big enough for the table (go-sstables reads through mmap from the page cache).
//!
//! Settings as go-sstables' defaults: Snappy on data, Bloom filter on, no fsync at the end.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use shaledb::recordio::Compression;
use shaledb::sstable::{BlockCache, TableBuilder, TableOptions, TableReadOptions, TableReader};
use shaledb::sstable::{ValueKind, MAX_SEQ};
use shaledb::storage::std_fs::StdFsStorage;
use shaledb::storage::{OpenMode, Storage};
use shaledb_bench_support::{mb_per_s, random_bytes, Bench};

const MIB: u64 = 1024 * 1024;

fn options() -> TableOptions {
    TableOptions {
        compression: Compression::Snappy,
        sync_on_finish: false,
        ..TableOptions::default()
    }
}

/// Writes `map` (every key with the one shared `value`) as table `name`; returns the seconds
/// taken from creating the file to the end of `finish`.
fn write(storage: &StdFsStorage, name: &str, map: &BTreeMap<Vec<u8>, ()>, value: &[u8]) -> f64 {
    let t = Instant::now();
    let file = storage.open(name, OpenMode::Create).unwrap();
    let mut b = TableBuilder::new(file, options()).unwrap();
    for k in map.keys() {
        b.add(k, 1, ValueKind::Value, value).unwrap();
    }
    b.finish().unwrap();
    t.elapsed().as_secs_f64()
}

fn flush(bench: &Bench, mb: u64) {
    let case = format!("flush/{mb}MiB");
    if !bench.enabled(&case) {
        return;
    }
    let dir = bench.scratch();
    let storage = StdFsStorage::open(dir.path()).unwrap();
    let value = random_bytes(1024, 7);
    let mut map = BTreeMap::new();
    let mut bytes = 0u64;
    let mut i = 0u32;
    while bytes < mb * MIB {
        map.insert(i.to_be_bytes().to_vec(), ());
        bytes += 4 + value.len() as u64;
        i += 1;
    }
    let secs = write(&storage, "flush.sst", &map, &value);
    bench.emit(&case, "shaledb", "MB/s", bytes as f64 / secs / 1e6);
}

fn scan_and_get(bench: &Bench, mb: u64, gets: usize) {
    let scan_case = format!("scan/{mb}MiB");
    let get_case = format!("get/{mb}MiB");
    if !bench.enabled(&scan_case) && !bench.enabled(&get_case) {
        return;
    }
    let dir = bench.scratch();
    let storage = StdFsStorage::open(dir.path()).unwrap();
    let value = random_bytes(1024, 11);
    let mut map = BTreeMap::new();
    let mut bytes = 0u64;
    let mut i = 0u32;
    while bytes < mb * MIB {
        let k = sha1_smol::Sha1::from(i.to_be_bytes())
            .digest()
            .bytes()
            .to_vec();
        bytes += (k.len() + value.len()) as u64;
        map.insert(k, ());
        i += 1;
    }
    write(&storage, "scan.sst", &map, &value);
    let cache = Arc::new(BlockCache::new(mb * MIB * 2));

    let t = Instant::now();
    let file = storage.open("scan.sst", OpenMode::Read).unwrap();
    let table = TableReader::open(
        file,
        TableReadOptions {
            cache: Some(cache.clone()),
            ..TableReadOptions::default()
        },
    )
    .unwrap();
    let mut scan = table.scan().unwrap();
    let mut scanned = 0u64;
    while let Some(e) = scan.next_entry().unwrap() {
        scanned += (e.key.len() + e.value.len()) as u64;
    }
    let elapsed = t.elapsed();
    assert_eq!(scanned, bytes);
    if bench.enabled(&scan_case) {
        bench.emit(&scan_case, "shaledb", "MB/s", mb_per_s(scanned, elapsed));
    }

    if bench.enabled(&get_case) {
        let mut keys: Vec<Vec<u8>> = map.into_keys().collect();
        shuffle(&mut keys, 42);
        let t = Instant::now();
        for i in 0..gets {
            let k = &keys[i % keys.len()];
            let e = table.get(k, MAX_SEQ).unwrap();
            assert!(e.is_some());
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / gets as f64;
        if std::env::var("SSTABLE_BENCH_DETAIL").is_ok() {
            let t = Instant::now();
            for i in 0..gets * 10 {
                let k = &keys[i % keys.len()];
                let _ = table.get(k, MAX_SEQ).unwrap();
            }
            eprintln!(
                "warm get: {:.3} us",
                t.elapsed().as_secs_f64() * 1e6 / gets as f64 / 10.0
            );
            eprintln!("cache: {cache:?}, blocks {}", table.data_blocks());
            let t = Instant::now();
            let mut n = 0;
            for i in 0..gets {
                n += usize::from(table.may_contain(&keys[i % keys.len()]));
            }
            eprintln!(
                "bloom only: {:.3} us ({n})",
                t.elapsed().as_secs_f64() * 1e6 / gets as f64
            );
        }
        bench.emit(&get_case, "shaledb", "us/op", us);
    }
}

/// Fisher–Yates with xorshift, deterministic.
fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

fn main() {
    let bench = Bench::from_args("sstable");
    shaledb_bench_support::drop_page_cache();
    for mb in [32, 64, 128] {
        flush(&bench, mb);
    }
    for mb in [32, 128] {
        scan_and_get(&bench, mb, 200_000);
    }
}
