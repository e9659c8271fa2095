#!/usr/bin/env bash
# Runs the engine suite ("db") on ShaleDB, RocksDB and fjall in one run (bench/native),
# appending JSON lines to bench/results/db.jsonl, then renders bench/results/REPORT.md.
#
#   bash bench/run-db.sh                      # every case, N = 1,000,000
#   bash bench/run-db.sh readrandom fillseq   # cases whose name contains a filter
#   DB_BENCH_N=100000 bash bench/run-db.sh    # smaller database
#   bash bench/run-db.sh --engines=rocksdb,fjall
#   bash bench/run-db.sh --engines=shaledb    # ShaleDB alone: built without the peers
#
# The first build compiles RocksDB from source (~10 minutes on 2 cores); its bindings need
# libclang, which this script installs with apt-get when it is missing.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
export SHALEDB_BENCH_RUN="${SHALEDB_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
export SHALEDB_BENCH_RESULTS="${SHALEDB_BENCH_RESULTS:-$PWD/bench/results}"
# The peers (RocksDB, fjall) are compiled only when an engine list asks for them, or none is given.
features=()
for a in "$@"; do
  case "$a" in
    --engines=*) grep -qE 'rocksdb|fjall' <<<"${a#--engines=}" || features=(--no-default-features) ;;
  esac
done
if [ ${#features[@]} = 0 ] && ! have_libclang; then
  apt_install "RocksDB's bindings need libclang" libclang-dev
fi
(cd bench/native && cargo build --release "${features[@]}")
bench/native/target/release/shaledb-bench-native "$@"
node bench/report.mjs
