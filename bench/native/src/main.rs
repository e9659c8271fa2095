//! The engine suite ("db") on ShaleDB, RocksDB and fjall in one run, with the very workloads of
//! `cargo bench -p shaledb --bench db` (included from `crates/core/benches/db`). Appends JSON
//! lines to the repository's `bench/results/db.jsonl` (or `$SHALEDB_BENCH_RESULTS/db.jsonl`).
//!
//! ```text
//! cargo run --release -- [FILTER...] [--engines=shaledb,rocksdb,fjall]
//! ```
//!
//! A panic in one engine's case (ShaleDB's `todo!()` while the engine is being written) ends
//! that case only; the other engines still run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../crates/core/benches/common/mod.rs"]
mod common;
#[path = "../../../crates/core/benches/db/engine.rs"]
mod engine;
#[path = "../../../crates/core/benches/db/shaledb_engine.rs"]
mod shaledb_engine;
#[path = "../../../crates/core/benches/db/workloads.rs"]
mod workloads;

mod fjall_engine;
mod rocksdb_engine;

use std::path::PathBuf;

use common::Bench;
use workloads::Config;

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
        common::drop_page_cache();
        match engine.as_str() {
            "shaledb" => workloads::run::<shaledb_engine::ShaleDb>(&bench, &cfg),
            "rocksdb" => workloads::run::<rocksdb_engine::RocksDb>(&bench, &cfg),
            "fjall" => workloads::run::<fjall_engine::Fjall>(&bench, &cfg),
            other => eprintln!("unknown engine {other:?} (shaledb, rocksdb, fjall)"),
        }
    }
}

/// The engines named by `--engines=a,b`; all three by default.
fn engines_arg() -> Vec<String> {
    std::env::args()
        .find_map(|a| a.strip_prefix("--engines=").map(str::to_owned))
        .unwrap_or_else(|| "shaledb,rocksdb,fjall".to_owned())
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}
