//! The engine suite ("db"): every workload, written once over [`Engine`], so ShaleDB, RocksDB
//! and fjall run exactly the same operations (`bash bench/run-db.sh`; ShaleDB alone:
//! `cargo run --release --no-default-features -- --engines=shaledb` in `bench/native`).
//!
//! Keys are 16 bytes (the entry number, zero-padded decimal, so key order is number order);
//! values come from a pool of db_bench-style data that compresses to about half. `N` is the
//! number of entries (`DB_BENCH_N`, default 1,000,000); `OPS` the number of reads, seeks or
//! deletes a read case times (`DB_BENCH_OPS`, default min(N, 200,000)); `SYNC` the number of
//! synced writes (`DB_BENCH_SYNC_OPS`, default 500).
//!
//! db_bench cases (one database per engine, in this order):
//! - `fillseq` (own database): N puts in key order. ops/s.
//! - `fillrandom`: N puts, every key once, in random order. ops/s.
//! - `overwrite`: N puts of random existing keys. ops/s.
//! - then flush and full compaction (untimed), and
//!   `write_amplification` (x): bytes the process wrote through `write` system calls (WAL,
//!   tables, manifest, logs, background threads included) from the start of fillrandom to the
//!   end of the compaction, over key+value bytes put; `write_amplification/reported` (x): the
//!   engine's own figure where it has one;
//!   `space_amplification` (x): bytes of the database directory after closing it, over
//!   N x 116 live bytes. The database is then reopened for the rest.
//! - `readrandom`: OPS gets of random existing keys. ops/s and us/op.
//! - `readseq` / `readreverse`: one full scan forwards / backwards (key and value). ops/s.
//! - `seekrandom`: OPS times: new iterator, seek to a random key, read 10 entries. ops/s, us/op.
//! - `deleterandom`: OPS deletes of random keys. ops/s.
//!
//! Published comparisons (dgraph's RocksDB-vs-BoltDB test, a log-vs-SSTable engine study):
//! - `get/100keys/100B|1KiB|10KiB`: 100 keys put and flushed, read once to warm, then OPS gets
//!   of random ones. us/op.
//! - `put/sync/100B`: SYNC puts each with sync. us/op; beside it `fdatasync/100B` (engine
//!   `os`): SYNC appends of 100 bytes to a plain file, each followed by `fdatasync`.
//! - `readrandom/after-load/100|1000|10000|1000000`: load that many entries in batches of
//!   1,000, flush, compact, warm with a full scan and OPS gets, then OPS random gets. us/op.
//!   Sizes above N are skipped.
//! - `mixed/50-50/1000keys`: 1,000 keys loaded, then OPS operations, each a get or a put of a
//!   random key with equal odds. ops/s.
//! - `disk/10000entries`: 10,000 puts, flush, compaction, close; bytes of the directory.
//! - `put/sync/threads-1|2|4|8`: T threads each doing SYNC/2 synced puts of their own keys
//!   into one database. Total ops/s (group commit shows as growth with T).
//!
//! Tail latency ([`crate::latency`]): `latency/fillrandom`, `latency/put-sync-1|8`, each put
//! timed for a fixed duration; ops/s and us/p50, us/p99, us/p99.9, us/max.

use std::hint::black_box;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use crate::engine::{dir_bytes, process_write_bytes, Engine, Settings};
use crate::latency;
use shaledb_bench_support::Bench;

/// Key size in bytes.
pub const KEY_SIZE: usize = 16;
/// Value size of the db_bench cases in bytes.
pub const VALUE_SIZE: usize = 100;
/// Bytes of one db_bench entry (key + value).
const ENTRY: u64 = (KEY_SIZE + VALUE_SIZE) as u64;
/// Entries read after each seek in `seekrandom`.
const SEEK_NEXT: usize = 10;

/// Sizes of one run, from the environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// Entries of the db_bench cases (`DB_BENCH_N`, default 1,000,000).
    pub n: u64,
    /// Timed reads, seeks, deletes or mixed operations per case (`DB_BENCH_OPS`).
    pub ops: u64,
    /// Synced writes per sync case (`DB_BENCH_SYNC_OPS`, default 500).
    pub sync_ops: u64,
    /// Seconds every `latency/` case runs (`DB_BENCH_LATENCY_SECS`); unset, each case's own
    /// default ([`crate::latency`]).
    pub latency_secs: Option<u64>,
}

impl Config {
    /// Reads `DB_BENCH_N`, `DB_BENCH_OPS`, `DB_BENCH_SYNC_OPS` and `DB_BENCH_LATENCY_SECS`.
    pub fn from_env() -> Config {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        let n = var("DB_BENCH_N").unwrap_or(1_000_000).max(100);
        Config {
            n,
            ops: var("DB_BENCH_OPS").unwrap_or(n.min(200_000)).max(1),
            sync_ops: var("DB_BENCH_SYNC_OPS").unwrap_or(500).max(2),
            latency_secs: var("DB_BENCH_LATENCY_SECS").map(|s| s.max(1)),
        }
    }
}

/// Runs every enabled case on engine `E`. A panic inside a case (an engine error, or ShaleDB's
/// `todo!()` while it is being written) ends that case only, with a line saying so.
pub fn run<E: Engine>(bench: &Bench, cfg: &Config) {
    println!(
        "== {} (N={}, OPS={}, SYNC={})",
        E::NAME,
        cfg.n,
        cfg.ops,
        cfg.sync_ops
    );
    guarded::<E>("fillseq", || fillseq::<E>(bench, cfg));
    guarded::<E>("db_bench random cases", || db_bench_random::<E>(bench, cfg));
    guarded::<E>("get/100keys", || get_100_keys::<E>(bench, cfg));
    guarded::<E>("put/sync/100B", || put_sync::<E>(bench, cfg));
    for size in [100, 1000, 10_000, 1_000_000] {
        guarded::<E>("readrandom/after-load", || {
            after_load::<E>(bench, cfg, size)
        });
    }
    guarded::<E>("mixed/50-50/1000keys", || mixed::<E>(bench, cfg));
    guarded::<E>("disk/10000entries", || disk::<E>(bench));
    for threads in [1, 2, 4, 8] {
        guarded::<E>("put/sync/threads", || {
            sync_threads::<E>(bench, cfg, threads)
        });
    }
    guarded::<E>("latency/fillrandom", || {
        latency::fill_random::<E>(bench, cfg)
    });
    for threads in [1, 8] {
        guarded::<E>("latency/put-sync", || {
            latency::put_sync::<E>(bench, cfg, threads)
        });
    }
}

/// `fdatasync/100B` (engine `os`): the floor under every synced write. Run once per run.
pub fn fdatasync_baseline(bench: &Bench, cfg: &Config) {
    const CASE: &str = "fdatasync/100B";
    if !bench.enabled(CASE) {
        return;
    }
    let dir = bench.scratch();
    let path = dir.path().join("os.bin");
    let mut file = std::fs::File::create(&path).unwrap();
    let rec = Values::new(9).next(VALUE_SIZE).to_vec();
    let t = Instant::now();
    for _ in 0..cfg.sync_ops {
        file.write_all(&rec).unwrap();
        file.sync_data().unwrap();
    }
    bench.emit(CASE, "os", "us/op", us_per_op(t.elapsed(), cfg.sync_ops));
}

/// Replaces the default panic message with one line, and none for `todo!()` (the runner says
/// "not available yet" instead).
pub fn quiet_panics() {
    panic::set_hook(Box::new(|info| {
        let msg = panic_message(info.payload());
        if !msg.contains("not yet implemented") {
            let at = info.location().map(|l| l.to_string()).unwrap_or_default();
            eprintln!("panic at {at}: {msg}");
        }
    }));
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

fn guarded<E: Engine>(what: &str, f: impl FnOnce()) {
    if let Err(e) = panic::catch_unwind(AssertUnwindSafe(f)) {
        let msg = panic_message(e.as_ref());
        if msg.contains("not yet implemented") {
            println!("{}: not available yet ({what})", E::NAME);
        } else {
            println!("{}: {what} failed: {msg}", E::NAME);
        }
    }
}

fn fillseq<E: Engine>(bench: &Bench, cfg: &Config) {
    if !bench.enabled("fillseq") {
        return;
    }
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    let mut values = Values::new(1);
    let t = Instant::now();
    for i in 0..cfg.n {
        db.put(&key(i), values.next(VALUE_SIZE), false);
    }
    emit_ops::<E>(bench, "fillseq", cfg.n, t.elapsed(), false);
    db.close();
}

/// fillrandom, overwrite, the amplifications, then the read and delete cases on one database.
fn db_bench_random<E: Engine>(bench: &Bench, cfg: &Config) {
    const CASES: [&str; 9] = [
        "fillrandom",
        "overwrite",
        "write_amplification",
        "space_amplification",
        "readrandom",
        "readseq",
        "readreverse",
        "seekrandom",
        "deleterandom",
    ];
    if !CASES.iter().any(|c| bench.enabled(c)) {
        return;
    }
    let n = cfg.n;
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    let mut values = Values::new(2);
    let order = permutation(n, 3);
    let io_start = process_write_bytes();
    let t = Instant::now();
    for &i in &order {
        db.put(&key(u64::from(i)), values.next(VALUE_SIZE), false);
    }
    emit_ops::<E>(bench, "fillrandom", n, t.elapsed(), false);
    drop(order);
    let mut put_bytes = n * ENTRY;
    if CASES[1..4].iter().any(|c| bench.enabled(c)) {
        let mut rng = Rng::new(4);
        let t = Instant::now();
        for _ in 0..n {
            db.put(&key(rng.below(n)), values.next(VALUE_SIZE), false);
        }
        emit_ops::<E>(bench, "overwrite", n, t.elapsed(), false);
        put_bytes += n * ENTRY;
    }
    db.compact_all();
    if bench.enabled("write_amplification") {
        if let (Some(a), Some(b)) = (io_start, process_write_bytes()) {
            let wa = (b - a) as f64 / put_bytes as f64;
            bench.emit("write_amplification", E::NAME, "x", wa);
        }
        if let Some(wa) = db.write_amplification() {
            bench.emit("write_amplification/reported", E::NAME, "x", wa);
        }
    }
    db.close();
    if bench.enabled("space_amplification") {
        let sa = dir_bytes(dir.path()) as f64 / (n * ENTRY) as f64;
        bench.emit("space_amplification", E::NAME, "x", sa);
    }
    let db = E::open(dir.path(), &Settings::default());
    if bench.enabled("readrandom") {
        let mut rng = Rng::new(5);
        let t = Instant::now();
        let found = (0..cfg.ops)
            .filter(|_| black_box(db.get(&key(rng.below(n)))).is_some())
            .count();
        emit_ops::<E>(bench, "readrandom", cfg.ops, t.elapsed(), true);
        assert_eq!(found as u64, cfg.ops, "readrandom: keys missing");
    }
    for (case, reverse) in [("readseq", false), ("readreverse", true)] {
        if bench.enabled(case) {
            let t = Instant::now();
            let count = db.scan(reverse);
            emit_ops::<E>(bench, case, count, t.elapsed(), false);
            assert_eq!(count, n, "{case}: wrong entry count");
        }
    }
    if bench.enabled("seekrandom") {
        let mut rng = Rng::new(6);
        let t = Instant::now();
        for _ in 0..cfg.ops {
            black_box(db.seek_read(&key(rng.below(n)), SEEK_NEXT));
        }
        emit_ops::<E>(bench, "seekrandom", cfg.ops, t.elapsed(), true);
    }
    if bench.enabled("deleterandom") {
        let mut rng = Rng::new(7);
        let t = Instant::now();
        for _ in 0..cfg.ops {
            db.delete(&key(rng.below(n)));
        }
        emit_ops::<E>(bench, "deleterandom", cfg.ops, t.elapsed(), false);
    }
    db.close();
}

fn get_100_keys<E: Engine>(bench: &Bench, cfg: &Config) {
    for (name, size) in [("100B", 100), ("1KiB", 1024), ("10KiB", 10 * 1024)] {
        let case = format!("get/100keys/{name}");
        if !bench.enabled(&case) {
            continue;
        }
        let dir = bench.scratch();
        let db = E::open(dir.path(), &Settings::default());
        let mut values = Values::new(8);
        for i in 0..100 {
            db.put(&key(i), values.next(size), false);
        }
        db.flush();
        for i in 0..100 {
            assert!(db.get(&key(i)).is_some(), "{case}: key missing");
        }
        let mut rng = Rng::new(9);
        let t = Instant::now();
        for _ in 0..cfg.ops {
            black_box(db.get(&key(rng.below(100))));
        }
        bench.emit(&case, E::NAME, "us/op", us_per_op(t.elapsed(), cfg.ops));
        db.close();
    }
}

fn put_sync<E: Engine>(bench: &Bench, cfg: &Config) {
    const CASE: &str = "put/sync/100B";
    if !bench.enabled(CASE) {
        return;
    }
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    let mut values = Values::new(10);
    let t = Instant::now();
    for i in 0..cfg.sync_ops {
        db.put(&key(i), values.next(VALUE_SIZE), true);
    }
    bench.emit(CASE, E::NAME, "us/op", us_per_op(t.elapsed(), cfg.sync_ops));
    db.close();
}

fn after_load<E: Engine>(bench: &Bench, cfg: &Config, entries: u64) {
    let case = format!("readrandom/after-load/{entries}");
    if !bench.enabled(&case) {
        return;
    }
    if entries > cfg.n {
        println!(
            "{}: {case} skipped (DB_BENCH_N={} is smaller)",
            E::NAME,
            cfg.n
        );
        return;
    }
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    load(&db, entries, 11);
    db.flush();
    db.compact_all();
    assert_eq!(db.scan(false), entries, "{case}: wrong entry count");
    let mut rng = Rng::new(12);
    for _ in 0..cfg.ops {
        black_box(db.get(&key(rng.below(entries))));
    }
    let t = Instant::now();
    for _ in 0..cfg.ops {
        black_box(db.get(&key(rng.below(entries))));
    }
    bench.emit(&case, E::NAME, "us/op", us_per_op(t.elapsed(), cfg.ops));
    db.close();
}

fn mixed<E: Engine>(bench: &Bench, cfg: &Config) {
    const CASE: &str = "mixed/50-50/1000keys";
    if !bench.enabled(CASE) {
        return;
    }
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    load(&db, 1000, 13);
    let mut values = Values::new(14);
    let mut rng = Rng::new(15);
    let t = Instant::now();
    for _ in 0..cfg.ops {
        let r = rng.next();
        let k = key(r % 1000);
        if r & (1 << 40) == 0 {
            black_box(db.get(&k));
        } else {
            db.put(&k, values.next(VALUE_SIZE), false);
        }
    }
    emit_ops::<E>(bench, CASE, cfg.ops, t.elapsed(), false);
    db.close();
}

fn disk<E: Engine>(bench: &Bench) {
    const CASE: &str = "disk/10000entries";
    if !bench.enabled(CASE) {
        return;
    }
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    let mut values = Values::new(16);
    for i in 0..10_000 {
        db.put(&key(i), values.next(VALUE_SIZE), false);
    }
    db.flush();
    db.compact_all();
    db.close();
    bench.emit(CASE, E::NAME, "bytes", dir_bytes(dir.path()) as f64);
}

fn sync_threads<E: Engine>(bench: &Bench, cfg: &Config, threads: u64) {
    let case = format!("put/sync/threads-{threads}");
    if !bench.enabled(&case) {
        return;
    }
    let per_thread = cfg.sync_ops / 2;
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    let t = Instant::now();
    std::thread::scope(|s| {
        for th in 0..threads {
            let db = &db;
            s.spawn(move || {
                let mut values = Values::new(17 + th);
                for i in 0..per_thread {
                    db.put(&key(th * 1_000_000_000 + i), values.next(VALUE_SIZE), true);
                }
            });
        }
    });
    let ops = per_thread * threads;
    bench.emit(
        &case,
        E::NAME,
        "ops/s",
        ops as f64 / t.elapsed().as_secs_f64(),
    );
    db.close();
}

/// Puts `entries` keys `0..entries` in batches of 1,000 (not synced).
fn load<E: Engine>(db: &E, entries: u64, seed: u64) {
    let mut values = Values::new(seed);
    let mut batch = Vec::with_capacity(1000);
    for i in 0..entries {
        batch.push((key(i).to_vec(), values.next(VALUE_SIZE).to_vec()));
        if batch.len() == 1000 || i + 1 == entries {
            db.write_batch(&batch, false);
            batch.clear();
        }
    }
}

fn emit_ops<E: Engine>(bench: &Bench, case: &str, ops: u64, elapsed: Duration, latency: bool) {
    if !bench.enabled(case) {
        return;
    }
    bench.emit(case, E::NAME, "ops/s", ops as f64 / elapsed.as_secs_f64());
    if latency {
        bench.emit(case, E::NAME, "us/op", us_per_op(elapsed, ops));
    }
}

fn us_per_op(elapsed: Duration, ops: u64) -> f64 {
    elapsed.as_secs_f64() * 1e6 / ops as f64
}

/// The 16-byte key of entry `i`: `i` in zero-padded decimal.
pub fn key(mut i: u64) -> [u8; KEY_SIZE] {
    let mut k = [b'0'; KEY_SIZE];
    for d in k.iter_mut().rev() {
        *d = b'0' + (i % 10) as u8;
        i /= 10;
    }
    k
}

/// xorshift64* pseudo-random numbers, deterministic per seed.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next number.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `0..n` in a random order (Fisher-Yates).
fn permutation(n: u64, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    let mut rng = Rng::new(seed);
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
    v
}

/// Value bytes as db_bench makes them: a 1 MiB pool where every 100-byte stretch is 50 random
/// bytes written twice, so values compress to about half; values are consecutive windows of
/// the pool.
pub struct Values {
    pool: Vec<u8>,
    pos: usize,
}

impl Values {
    /// A pool seeded with `seed`.
    pub fn new(seed: u64) -> Values {
        let mut rng = Rng::new(seed);
        let mut pool = Vec::with_capacity(1 << 20);
        while pool.len() < 1 << 20 {
            let half: Vec<u8> = (0..50).map(|_| (rng.next() >> 56) as u8).collect();
            pool.extend_from_slice(&half);
            pool.extend_from_slice(&half);
        }
        Values { pool, pos: 0 }
    }

    /// The next value of `len` bytes (at most 1 MiB).
    pub fn next(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.pool.len() {
            self.pos = 0;
        }
        let v = &self.pool[self.pos..self.pos + len];
        self.pos += len;
        v
    }
}
