//! The in-process half of the topic suite (`bash bench/run-topic.sh`): minikafka's three
//! workloads on `shaledb::topic` in one process, no network. Appends `inproc/...` lines
//! (engine `shaledb`) to `bench/results/topic.jsonl` (or `$SHALEDB_BENCH_RESULTS`).
//!
//! - `inproc/Publish1Topic`: 2 x cores threads appending 5-byte records, each append awaited.
//! - `inproc/Throughput`: one publisher, one subscriber that must receive all.
//! - `inproc/EndToEndLatency`: one publisher appending its send time, flooded, then paced at
//!   50% and 90% of the flooded publisher's rate; p50/p99/p999 of send-to-receive latency, and
//!   p99/p999 of the appends alone (the publisher's share).
//!
//! Environment: `TOPIC_BENCH_SECONDS` (default 2) is the length of each paced run;
//! `TOPIC_BENCH_MAX_RATE` (records/s) fixes the rate the loads are shares of, to compare two
//! builds at the same load (by default it is the flooded publisher's rate of that run);
//! `TOPIC_BENCH_MAINTENANCE` = `normal` | `low` (default) | `idle` is
//! `Options::maintenance_priority`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod percentiles;
mod workloads;

use std::path::PathBuf;
use std::time::Duration;

use shaledb::topic::TopicOptions;
use shaledb::{Db, MaintenancePriority, Options};
use shaledb_bench_support::Bench;

use crate::percentiles::quantile;

fn main() {
    let results = std::env::var_os("SHALEDB_BENCH_RESULTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../results"));
    let bench = Bench::from_args_to("topic", results);
    let secs: f64 = std::env::var("TOPIC_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let dir = bench.scratch();
    // Each case on a database of its own: no flush or compaction left over from the last.
    let mut options = Options::default();
    options.maintenance_priority = match std::env::var("TOPIC_BENCH_MAINTENANCE").as_deref() {
        Ok("normal") => MaintenancePriority::Normal,
        Ok("idle") => MaintenancePriority::Idle,
        _ => MaintenancePriority::Low,
    };
    let topic = |name: &str| {
        let db = Db::open(dir.path().join(name), options.clone()).unwrap();
        db.topic(name, TopicOptions::default()).unwrap()
    };
    let us = |d: Duration, n: u64| d.as_secs_f64() * 1e6 / n.max(1) as f64;

    if bench.enabled("inproc/Publish1Topic") {
        let workers = 2 * std::thread::available_parallelism().map_or(1, |n| n.get());
        let (n, took) =
            workloads::publish_1_topic(&topic("publish"), workers, Duration::from_secs_f64(secs));
        bench.emit("inproc/Publish1Topic", "shaledb", "us/op", us(took, n));
        bench.emit(
            "inproc/Publish1Topic",
            "shaledb",
            "ops/s",
            n as f64 / took.as_secs_f64(),
        );
    }
    if bench.enabled("inproc/Throughput") {
        let n = 300_000;
        let took = workloads::throughput(&topic("throughput"), n);
        bench.emit("inproc/Throughput", "shaledb", "us/op", us(took, n));
        bench.emit(
            "inproc/Throughput",
            "shaledb",
            "ops/s",
            n as f64 / took.as_secs_f64(),
        );
    }
    if bench.enabled("inproc/EndToEndLatency") {
        let n = 300_000;
        let flooded = workloads::end_to_end(&topic("e2e-flooded"), n, None);
        // TOPIC_BENCH_MAX_RATE fixes the rate the loads are shares of (records/s), for comparing
        // builds at one load; by default it is the flooded publisher's.
        let max_rate = std::env::var("TOPIC_BENCH_MAX_RATE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(n as f64 / flooded.publish_elapsed.as_secs_f64());
        let report = |case: &str, l: &workloads::Latencies| {
            for (name, q) in [("p50", 0.5), ("p99", 0.99), ("p999", 0.999)] {
                let v = quantile(&l.sorted_ns, q) as f64 / 1e3;
                bench.emit(&format!("{case}/{name}"), "shaledb", "us", v);
            }
            // The publisher's share: how long the appends themselves took.
            for (name, q) in [("p99", 0.99), ("p999", 0.999)] {
                let v = quantile(&l.append_sorted_ns, q) as f64 / 1e3;
                bench.emit(&format!("{case}/append-{name}"), "shaledb", "us", v);
            }
        };
        bench.emit(
            "inproc/EndToEndLatency",
            "shaledb",
            "us/op",
            us(flooded.elapsed, n),
        );
        report("inproc/EndToEndLatency", &flooded);
        for share in [50u32, 90] {
            let rate = max_rate * f64::from(share) / 100.0;
            let n = ((rate * secs) as u64).max(1000);
            let l = workloads::end_to_end(&topic(&format!("e2e-{share}")), n, Some(rate));
            let case = format!("inproc/EndToEndLatency/{share}%load");
            bench.emit(
                &case,
                "shaledb",
                "ops/s",
                n as f64 / l.publish_elapsed.as_secs_f64(),
            );
            report(&case, &l);
        }
    }
}
