//! The engine suite ("db") on ShaleDB, RocksDB and fjall in one run ([`workloads`]). Appends
//! JSON lines to the repository's `bench/results/db.jsonl` (or
//! `$SHALEDB_BENCH_RESULTS/db.jsonl`).
//!
//! ```text
//! cargo run --release -- [FILTER...] [--engines=shaledb,rocksdb,fjall]
//! cargo run --release --no-default-features -- [FILTER...]   # ShaleDB alone, no RocksDB build
//! cargo run --release --no-default-features --features fjall-peer -- [FILTER...]  # and fjall
//! ```
//!
//! A panic in one engine's case (ShaleDB's `todo!()` while the engine is being written) ends
//! that case only; the other engines still run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

#[cfg(feature = "fjall-peer")]
use shaledb_bench_native::fjall_engine;
#[cfg(feature = "rocksdb-peer")]
use shaledb_bench_native::rocksdb_engine;
use shaledb_bench_native::workloads::{self, Config};
use shaledb_bench_native::{shaledb_engine, shaledb_jobs_engine};
use shaledb_bench_support::Bench;

fn main() {
    let results = std::env::var_os("SHALEDB_BENCH_RESULTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../results"));
    let bench = Bench::from_args_to("db", results);
    let engines = engines_arg();
    let cfg = Config::from_env();
    workloads::quiet_panics();
    workloads::fdatasync_baseline(&bench, &cfg);
    for engine in &engines {
        shaledb_bench_support::drop_page_cache();
        match engine.as_str() {
            "shaledb" => workloads::run::<shaledb_engine::ShaleDb>(&bench, &cfg),
            "shaledb-jobs" => {
                workloads::run::<shaledb_jobs_engine::ShaleDbJobs>(&bench, &cfg);
            }
            #[cfg(feature = "rocksdb-peer")]
            "rocksdb" => workloads::run::<rocksdb_engine::RocksDb>(&bench, &cfg),
            #[cfg(feature = "fjall-peer")]
            "fjall" => workloads::run::<fjall_engine::Fjall>(&bench, &cfg),
            other => eprintln!(
                "engine {other:?} is not built (shaledb, shaledb-jobs; rocksdb and fjall need the \
                 `rocksdb-peer` and `fjall-peer` features, both in `peers`)"
            ),
        }
    }
}

/// The engines named by `--engines=a,b`; by default every engine built.
fn engines_arg() -> Vec<String> {
    let mut built = vec!["shaledb"];
    if cfg!(feature = "rocksdb-peer") {
        built.push("rocksdb");
    }
    if cfg!(feature = "fjall-peer") {
        built.push("fjall");
    }
    std::env::args()
        .find_map(|a| a.strip_prefix("--engines=").map(str::to_owned))
        .unwrap_or_else(|| built.join(","))
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}
