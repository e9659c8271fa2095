#!/usr/bin/env bash
# The replication suite (issue 15): the change feed forwarded through a real nats-server on
# loopback to follower processes (bench/replication/run.mjs, ~1-2 minutes): the leader's maximum
# unsynced rate for batches of 100, then forwarding throughput and lag p50/p99 from the leader's
# commit to each follower's apply at 50% and 90% of it with 1 and 3 followers. Appends to
# bench/results/replication.jsonl (or $SHALEDB_BENCH_RESULTS/replication.jsonl), then renders
# bench/results/REPORT.md.
#
#   bash bench/run-replication.sh
#   SHALEDB_BENCH_RESULTS=/tmp/me REPLICATION_BENCH_SECONDS=3 bash bench/run-replication.sh
#
# Needs what the test command builds (scripts/setup.sh --nats for nats-server, the WebAssembly
# module and packages/js: scripts/build-wasm.sh, npm run build -w shaledb).
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
export SHALEDB_BENCH_RUN="${SHALEDB_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
export SHALEDB_BENCH_RESULTS="${SHALEDB_BENCH_RESULTS:-$REPO/bench/results}"

bash scripts/setup.sh --nats
node bench/replication/run.mjs
if [ "$SHALEDB_BENCH_RESULTS" = "$REPO/bench/results" ]; then node bench/report.mjs; fi
