//! SSTable benchmarks (go-sstables workloads). TODO(sstable): implement.
mod common;

fn main() {
    let bench = common::Bench::from_args("sstable");
    let _ = bench.enabled("");
}
