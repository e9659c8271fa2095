//! The engine suite ("db") on ShaleDB alone: `cargo bench -p shaledb --bench db [-- FILTER...]`.
//! The same workloads run on RocksDB and fjall beside ShaleDB in `bench/native`
//! (`bash bench/run-db.sh`); see `workloads.rs` for the cases and `engine.rs` for the settings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;
mod engine;
mod shaledb_engine;
mod workloads;

use common::Bench;
use workloads::Config;

fn main() {
    let bench = Bench::from_args("db");
    let cfg = Config::from_env();
    workloads::quiet_panics();
    workloads::fdatasync_baseline(&bench, &cfg);
    workloads::run::<shaledb_engine::ShaleDb>(&bench, &cfg);
}
