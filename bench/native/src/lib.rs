//! ShaleDB's engine benchmarks, as a library the two programs share:
//! - `shaledb-bench-native` (`src/main.rs`, `bash bench/run-db.sh`): the engine suite ("db",
//!   [`workloads`]) on ShaleDB and, with the `peers` feature (the default), RocksDB and fjall,
//!   in one run, through one trait ([`engine::Engine`]);
//! - `node-workloads` (`src/bin/node_workloads.rs`, run by `bash bench/run-node.sh`): the Node
//!   suite's workloads on the native engine, beside the WebAssembly package's figures.
//!
//! Results are JSON lines (crate `shaledb-bench-support`) in `bench/results/<suite>.jsonl`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod engine;
#[cfg(feature = "fjall-peer")]
pub mod fjall_engine;
pub mod latency;
#[cfg(feature = "rocksdb-peer")]
pub mod rocksdb_engine;
pub mod shaledb_engine;
pub mod shaledb_jobs_engine;
pub mod workloads;
