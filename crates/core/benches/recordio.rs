//! RecordIO benchmarks (go-sstables workloads). TODO(recordio): implement.
mod common;

fn main() {
    let bench = common::Bench::from_args("recordio");
    let _ = bench.enabled("");
}
