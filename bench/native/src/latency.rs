//! Tail-latency cases of the engine suite: every put timed on its own, for a fixed duration that
//! is the same for every engine (so each engine does as much work as it can in that time).
//!
//! - `latency/fillrandom`: one writer, unsynced puts of random 16-byte keys (100-byte values)
//!   for `DB_BENCH_LATENCY_SECS` (default 60 s): long enough for flushes and compactions to
//!   run under the writer, whose stalls show in the tail.
//! - `latency/put-sync-1`, `latency/put-sync-8`: 1 or 8 threads doing synced puts of their own
//!   keys for `DB_BENCH_LATENCY_SECS` (default 10 s); the distribution is over every put of
//!   every thread.
//!
//! Each case emits `ops/s` (puts over the duration), then `us/p50`, `us/p99`, `us/p99.9` and
//! `us/max`: microseconds per put, from an HDR histogram (3 significant digits).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::engine::{Engine, Settings};
use crate::workloads::{key, Config, Rng, Values, VALUE_SIZE};
use shaledb_bench_support::Bench;

/// Default duration of `latency/fillrandom`.
pub const FILL_SECS: u64 = 60;
/// Default duration of the synced cases.
pub const SYNC_SECS: u64 = 10;
/// Keys are drawn from `0..KEY_SPACE` (16 decimal digits: the whole key), so repeats are rare.
const KEY_SPACE: u64 = 10_000_000_000_000_000;

/// `latency/fillrandom` on engine `E`.
pub fn fill_random<E: Engine>(bench: &Bench, cfg: &Config) {
    const CASE: &str = "latency/fillrandom";
    if !bench.enabled(CASE) {
        return;
    }
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    let mut values = Values::new(20);
    let mut rng = Rng::new(21);
    let run = Duration::from_secs(cfg.latency_secs.unwrap_or(FILL_SECS));
    let mut hist = histogram();
    let start = Instant::now();
    let mut now = start;
    while now - start < run {
        let k = key(rng.below(KEY_SPACE));
        let v = values.next(VALUE_SIZE);
        let t = Instant::now();
        db.put(&k, v, false);
        now = Instant::now();
        hist.saturating_record(nanos(now - t));
    }
    emit::<E>(bench, CASE, &hist, now - start);
    db.close();
}

/// `latency/put-sync-<threads>` on engine `E`: each thread puts keys of its own, synced.
pub fn put_sync<E: Engine>(bench: &Bench, cfg: &Config, threads: u64) {
    let case = format!("latency/put-sync-{threads}");
    if !bench.enabled(&case) {
        return;
    }
    let dir = bench.scratch();
    let db = E::open(dir.path(), &Settings::default());
    let run = Duration::from_secs(cfg.latency_secs.unwrap_or(SYNC_SECS));
    let start = Instant::now();
    let hists: Vec<Histogram<u64>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|th| {
                let db = &db;
                s.spawn(move || {
                    let mut values = Values::new(22 + th);
                    let mut hist = histogram();
                    let mut now = Instant::now();
                    let mut i = 0;
                    while now - start < run {
                        let k = key(th * 1_000_000_000 + i);
                        let v = values.next(VALUE_SIZE);
                        let t = Instant::now();
                        db.put(&k, v, true);
                        now = Instant::now();
                        hist.saturating_record(nanos(now - t));
                        i += 1;
                    }
                    hist
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let elapsed = start.elapsed();
    let mut all = histogram();
    for h in &hists {
        all.add(h).unwrap();
    }
    emit::<E>(bench, &case, &all, elapsed);
    db.close();
}

/// An empty histogram of nanoseconds, 1 ns to 1 hour at 3 significant digits (a longer put is
/// recorded as 1 hour).
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap()
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Emits `ops/s` (puts recorded over `elapsed`) and the percentiles in microseconds.
fn emit<E: Engine>(bench: &Bench, case: &str, hist: &Histogram<u64>, elapsed: Duration) {
    let us = |ns: u64| ns as f64 / 1000.0;
    bench.emit(
        case,
        E::NAME,
        "ops/s",
        hist.len() as f64 / elapsed.as_secs_f64(),
    );
    for (metric, q) in [("us/p50", 0.5), ("us/p99", 0.99), ("us/p99.9", 0.999)] {
        bench.emit(case, E::NAME, metric, us(hist.value_at_quantile(q)));
    }
    bench.emit(case, E::NAME, "us/max", us(hist.max()));
}
