//! The Node.js suite's workloads ("node", `bench/node/workloads.mjs`) on the native
//! `shaledb::Db`, engine `shaledb-native`, so that the cost of WebAssembly and of the JS binding
//! shows as a ratio beside the `shaledb` figures of the same run:
//!
//! ```sh
//! cargo run --release --no-default-features --bin node-workloads -- [FILTER...]  # in bench/native
//! bash bench/run-node.sh     # the Node engines, then this, with one SHALEDB_BENCH_RUN
//! ```
//!
//! Keys, values, orders, counts, settings and the sequence of operations mirror
//! `bench/node/harness.mjs` and `bench/node/workloads.mjs` exactly (same generators, same seeds,
//! same environment variables: `NODE_BENCH_N`, `NODE_BENCH_N_100B`, `NODE_BENCH_N_1KIB`,
//! `NODE_BENCH_GETS`, `NODE_BENCH_SCANS`, `NODE_BENCH_SYNC_OPS`, `NODE_BENCH_CACHE_MB`,
//! `NODE_BENCH_MEMTABLE_MB`, `NODE_BENCH_SETTLE_MS`, `NODE_BENCH_SIZES`; databases under
//! `SHALEDB_BENCH_DIR`, else the system temp directory). Storage is the native file system
//! (`Db::open`), with the background flush/compaction thread on (the native default).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::ops::Bound;
use std::path::Path;
use std::time::{Duration, Instant};

use shaledb::{Batch, Db, IterOptions, Options, WriteOptions};
use shaledb_bench_support::Bench;

const ENGINE: &str = "shaledb-native";
const KEY_SIZE: usize = 16;
const SCAN_LEN: usize = 1000;
const SEED_ORDER: u32 = 1;
const SEED_GETS: u32 = 2;
const SEED_SCANS: u32 = 3;
const SEED_VALUES: u32 = 7;

/// Settings of one value size (`Config` of harness.mjs).
struct Config {
    size: &'static str,
    value_size: usize,
    n: usize,
    gets: usize,
    scans: usize,
    sync_ops: usize,
    cache_bytes: u64,
    memtable_bytes: usize,
    settle: Duration,
}

fn env_int(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.replace('_', "");
    if v.is_empty() {
        return None;
    }
    Some(
        v.parse::<f64>()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number")) as u64,
    )
}

impl Config {
    fn new(size: &'static str) -> Config {
        let (value_size, default_n) = match size {
            "100B" => (100, 200_000),
            "1KiB" => (1024, 100_000),
            _ => panic!("unknown size {size} (known: 100B, 1KiB)"),
        };
        let n = env_int(&format!("NODE_BENCH_N_{}", size.to_uppercase()))
            .or_else(|| env_int("NODE_BENCH_N"))
            .unwrap_or(default_n)
            .max(SCAN_LEN as u64) as usize;
        Config {
            size,
            value_size,
            n,
            gets: env_int("NODE_BENCH_GETS")
                .unwrap_or(n.min(200_000) as u64)
                .max(1) as usize,
            scans: env_int("NODE_BENCH_SCANS").unwrap_or(1000).max(1) as usize,
            sync_ops: env_int("NODE_BENCH_SYNC_OPS").unwrap_or(2000).max(1) as usize,
            cache_bytes: env_int("NODE_BENCH_CACHE_MB").unwrap_or(64) << 20,
            memtable_bytes: (env_int("NODE_BENCH_MEMTABLE_MB").unwrap_or(4) << 20) as usize,
            settle: Duration::from_millis(env_int("NODE_BENCH_SETTLE_MS").unwrap_or(1000)),
        }
    }

    fn case(&self, op: &str) -> String {
        format!("{op}/{}", self.size)
    }
}

/// xorshift32, seeded as `Rng` in harness.mjs.
struct Rng(u32);

impl Rng {
    fn new(seed: u32) -> Rng {
        let x = (seed.wrapping_add(1).wrapping_mul(0x9e37_79b9)) ^ 0x5bd1_e995;
        Rng(if x == 0 { 1 } else { x })
    }

    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u32) as usize
    }
}

fn permutation(n: usize, seed: u32) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    let mut rng = Rng::new(seed);
    for i in (1..n).rev() {
        let j = rng.below(i + 1);
        p.swap(i, j);
    }
    p
}

/// Eight zero bytes, then `i` as a big-endian u64.
fn key(i: usize) -> [u8; KEY_SIZE] {
    let mut k = [0u8; KEY_SIZE];
    k[8..].copy_from_slice(&(i as u64).to_be_bytes());
    k
}

/// The value windows of `makeValues` (harness.mjs): a pool of 100-byte stretches of 50 random
/// bytes written twice, cut into consecutive windows of `len` bytes.
fn value_windows(len: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(SEED_VALUES);
    let stretches = (1usize << 20).div_ceil(100);
    let mut pool = vec![0u8; stretches * 100];
    for s in 0..stretches {
        for b in 0..50 {
            let byte = (rng.next() >> 24) as u8;
            pool[s * 100 + b] = byte;
            pool[s * 100 + 50 + b] = byte;
        }
    }
    pool.chunks_exact(len).map(<[u8]>::to_vec).collect()
}

struct Data {
    keys: Vec<[u8; KEY_SIZE]>,
    values: Vec<Vec<u8>>,
    random: Vec<u32>,
}

fn open(dir: &Path, cfg: &Config) -> Db {
    let mut options = Options::default();
    options.block_cache_size = cfg.cache_bytes;
    options.memtable_size = cfg.memtable_bytes;
    options.compression = true;
    options.bloom_bits_per_key = 10;
    options.background_thread = true;
    Db::open(dir, options).unwrap()
}

fn scratch() -> tempfile::TempDir {
    let mut b = tempfile::Builder::new();
    b.prefix("shaledb-bench-node-native-");
    match std::env::var_os("SHALEDB_BENCH_DIR") {
        Some(base) => {
            std::fs::create_dir_all(&base).unwrap();
            b.tempdir_in(base).unwrap()
        }
        None => b.tempdir().unwrap(),
    }
}

fn put_singles(db: &Db, d: &Data, order: impl Iterator<Item = usize>) {
    let w = d.values.len();
    for (j, i) in order.enumerate() {
        db.put(&d.keys[i], &d.values[j % w]).unwrap();
    }
}

fn put_batches(db: &Db, d: &Data, n: usize, size: usize) {
    let w = d.values.len();
    let keyspace = db.default_keyspace();
    let mut j = 0;
    while j < n {
        let m = size.min(n - j);
        let mut batch = Batch::new();
        for i in j..j + m {
            batch
                .put(&keyspace, &d.keys[d.random[i] as usize], &d.values[i % w])
                .unwrap();
        }
        db.write(&batch, WriteOptions::default()).unwrap();
        j += m;
    }
}

fn ops_per_s(ops: usize, elapsed: Duration) -> f64 {
    ops as f64 / elapsed.as_secs_f64()
}

fn run_size(bench: &Bench, cfg: &Config) {
    let n = cfg.n;
    println!(
        "== {ENGINE} {} (N={n}, GETS={}, SCANS={}x{SCAN_LEN}, SYNC={}, cache {} MiB, memtable {} MiB)",
        cfg.size,
        cfg.gets,
        cfg.scans,
        cfg.sync_ops,
        cfg.cache_bytes >> 20,
        cfg.memtable_bytes >> 20
    );
    shaledb_bench_support::drop_page_cache();
    let d = Data {
        keys: (0..n).map(key).collect(),
        values: value_windows(cfg.value_size),
        random: permutation(n, SEED_ORDER),
    };

    let c = cfg.case("put/seq");
    if bench.enabled(&c) {
        let dir = scratch();
        let db = open(dir.path(), cfg);
        let t = Instant::now();
        put_singles(&db, &d, 0..n);
        let e = t.elapsed();
        db.close().unwrap();
        bench.emit(&c, ENGINE, "ops/s", ops_per_s(n, e));
    }

    let reads = bench.enabled(&cfg.case("get/random")) || bench.enabled(&cfg.case("scan/1000"));
    let c = cfg.case("put/random");
    if bench.enabled(&c) || reads {
        let dir = scratch();
        let mut db = open(dir.path(), cfg);
        if bench.enabled(&c) {
            let t = Instant::now();
            put_singles(&db, &d, d.random.iter().map(|&i| i as usize));
            let e = t.elapsed();
            bench.emit(&c, ENGINE, "ops/s", ops_per_s(n, e));
        } else {
            put_batches(&db, &d, n, 1000);
        }
        if reads {
            db.close().unwrap();
            db = open(dir.path(), cfg);
            std::thread::sleep(cfg.settle);
            let c = cfg.case("get/random");
            if bench.enabled(&c) {
                let mut rng = Rng::new(SEED_GETS);
                let which: Vec<usize> = (0..cfg.gets).map(|_| rng.below(n)).collect();
                let mut bytes = 0;
                let t = Instant::now();
                for &i in &which {
                    if let Some(v) = db.get(&d.keys[i]).unwrap() {
                        bytes += v.len();
                    }
                }
                let e = t.elapsed();
                assert_eq!(bytes, cfg.gets * cfg.value_size, "{c}: value bytes read");
                bench.emit(&c, ENGINE, "ops/s", ops_per_s(cfg.gets, e));
                bench.emit(&c, ENGINE, "us/op", e.as_secs_f64() * 1e6 / cfg.gets as f64);
            }
            let c = cfg.case("scan/1000");
            if bench.enabled(&c) {
                let len = SCAN_LEN.min(n);
                let mut rng = Rng::new(SEED_SCANS);
                let starts: Vec<usize> = (0..cfg.scans).map(|_| rng.below(n - len + 1)).collect();
                let mut entries = 0;
                let t = Instant::now();
                for &s in &starts {
                    let options = IterOptions {
                        lower: Bound::Included(d.keys[s].to_vec()),
                        ..IterOptions::default()
                    };
                    let mut it = db.iter(options).unwrap();
                    let mut count = 0;
                    while count < len && it.valid() {
                        black_box((it.key(), it.value()));
                        count += 1;
                        it.advance().unwrap();
                    }
                    entries += count;
                }
                let e = t.elapsed();
                assert_eq!(entries, cfg.scans * len, "{c}: entries read");
                bench.emit(&c, ENGINE, "ops/s", ops_per_s(cfg.scans, e));
            }
        }
        db.close().unwrap();
    }

    for size in [100, 1000] {
        let c = cfg.case(&format!("put/batch{size}"));
        if !bench.enabled(&c) {
            continue;
        }
        let dir = scratch();
        let db = open(dir.path(), cfg);
        let t = Instant::now();
        put_batches(&db, &d, n, size);
        let e = t.elapsed();
        db.close().unwrap();
        bench.emit(&c, ENGINE, "ops/s", ops_per_s(n, e));
    }

    let c = cfg.case("put/sync");
    if bench.enabled(&c) {
        let m = cfg.sync_ops.min(n);
        let w = d.values.len();
        let dir = scratch();
        let db = open(dir.path(), cfg);
        let t = Instant::now();
        for j in 0..m {
            db.put_opt(
                &d.keys[d.random[j] as usize],
                &d.values[j % w],
                WriteOptions::SYNC,
            )
            .unwrap();
        }
        let e = t.elapsed();
        db.close().unwrap();
        bench.emit(&c, ENGINE, "ops/s", ops_per_s(m, e));
    }
}

fn main() {
    let bench = Bench::from_args("node");
    let sizes = std::env::var("NODE_BENCH_SIZES").unwrap_or_else(|_| "100B,1KiB".into());
    for size in sizes.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let size: &'static str = match size {
            "100B" => "100B",
            "1KiB" => "1KiB",
            other => panic!("unknown size {other} (known: 100B, 1KiB)"),
        };
        run_size(&bench, &Config::new(size));
    }
}
