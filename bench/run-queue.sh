#!/usr/bin/env bash
# Runs the queue suite ("queue") in one run: ShaleDB's queue server (examples/queue-server),
# siberite and darner driven by siberite's own load tool over loopback (bench/queue/run.mjs),
# reserve+ack round trips (bench/queue's reserve-ack client), and the queue API in-process
# (bench/queue's queue-inproc); appends JSON lines to bench/results/queue.jsonl, then renders
# bench/results/REPORT.md.
#
#   bash bench/run-queue.sh                         # everything, ~10-15 minutes on 2 cores
#   bash bench/run-queue.sh flood rss               # workload groups whose name contains a filter
#   bash bench/run-queue.sh --engines=shaledb,siberite
#   QUEUE_BENCH_PACK_1K_MAX=8388608 bash bench/run-queue.sh packing/1KiB   # siberite's 14M items
#
# Sizes: see the environment variables at the top of bench/queue/run.mjs (bench/queue/README.md).
# The peers build from bench/peers (or $QUEUE_PEERS_DIR) into bench/queue/.build: siberite
# needs Go; darner's build.sh apt-installs its Debian packages. QUEUE_BENCH_REBUILD=1 rebuilds
# them. darner listens on every interface: it runs only inside this benchmark, stopped by pid.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
export SHALEDB_BENCH_RUN="${SHALEDB_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
export SHALEDB_BENCH_RESULTS="${SHALEDB_BENCH_RESULTS:-$PWD/bench/results}"

peers="${QUEUE_PEERS_DIR:-$REPO/bench/peers}"
build="$REPO/bench/queue/.build"
[ -d "$peers/siberite" ] && [ -d "$peers/darner" ] || die "no peers in $peers (set QUEUE_PEERS_DIR)"

section "build the peers into bench/queue/.build"
if [ "${QUEUE_BENCH_REBUILD:-0}" = 1 ] || [ ! -x "$build/siberite/siberite" ] || [ ! -x "$build/siberite/siberite-bench" ]; then
  command -v go >/dev/null || die "siberite needs Go (>= 1.17) on PATH"
  bash "$peers/siberite/build.sh" "$build/siberite"
fi
if [ "${QUEUE_BENCH_REBUILD:-0}" = 1 ] || [ ! -x "$build/darner/darner" ]; then
  bash "$peers/darner/build.sh" "$build/darner"
fi

section "build ShaleDB's queue server and the queue benchmarks (release)"
cargo build --release -p shaledb-queue-server
(cd bench/queue && cargo build --release)

# A thousand connections on each side of loopback.
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

section "run the queue suite (run $SHALEDB_BENCH_RUN)"
node bench/queue/run.mjs "$@"
node bench/report.mjs
