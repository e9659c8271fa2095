#!/usr/bin/env bash
# Runs the Node.js suite ("node") in one run: ShaleDB (the npm package, WebAssembly), classic-level,
# lmdb and better-sqlite3 through Node (bench/node), then the same workloads on the native Rust
# `shaledb::Db` (engine shaledb-native, bench/native/src/bin/node_workloads.rs), appending JSON lines
# to bench/results/node.jsonl, then renders bench/results/REPORT.md.
#
#   bash bench/run-node.sh                                  # everything (~4 minutes on 2 cores)
#   bash bench/run-node.sh get/random scan                  # cases whose name contains a filter
#   bash bench/run-node.sh --engines=lmdb,shaledb-native    # some engines only
#   bash bench/run-node.sh --sizes=100B
#   NODE_BENCH_N=1000000 bash bench/run-node.sh             # 1M entries for both sizes
#
# Other settings (environment): see bench/node/README.md. The peers install from npm into
# bench/node/node_modules only (npm ci there), never into the root workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
export SHALEDB_BENCH_RUN="${SHALEDB_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
export SHALEDB_BENCH_RESULTS="${SHALEDB_BENCH_RESULTS:-$PWD/bench/results}"

engines="" sizes="" filters=()
for a in "$@"; do
  case "$a" in
    --engines=*) engines="${a#--engines=}" ;;
    --sizes=*) sizes="${a#--sizes=}" ;;
    --*) echo "unknown option $a" >&2; exit 2 ;;
    *) filters+=("$a") ;;
  esac
done
engines="${engines:-${NODE_BENCH_ENGINES:-shaledb,shaledb-promise,shaledb-promise-caller,classic-level,lmdb,better-sqlite3,shaledb-native}}"
[ -n "$sizes" ] && export NODE_BENCH_SIZES="$sizes"
node_engines="$(tr ',' '\n' <<<"$engines" | grep -vx 'shaledb-native' | paste -sd, - || true)"
run_native=0
tr ',' '\n' <<<"$engines" | grep -qx 'shaledb-native' && run_native=1

# ShaleDB's npm package: the wasm module and the TypeScript build.
bash scripts/setup.sh
bash scripts/build-wasm.sh
npm run build -w shaledb

# The peers, into bench/node/node_modules (better-sqlite3 compiles SQLite if no prebuilt binary
# downloads: about a minute).
if [ ! -f bench/node/node_modules/.package-lock.json ] ||
  [ bench/node/package-lock.json -nt bench/node/node_modules/.package-lock.json ]; then
  (cd bench/node && npm ci --no-audit --no-fund)
fi

# Databases on disk, the same place for every engine (not a tmpfs /tmp).
SHALEDB_BENCH_DIR="${SHALEDB_BENCH_DIR:-$(cd bench/node && node --input-type=module -e 'import { scratchBase } from "./harness.mjs"; console.log(scratchBase())')}"
export SHALEDB_BENCH_DIR

status=0
if [ -n "$node_engines" ]; then
  node bench/node/main.mjs --engines="$node_engines" "${filters[@]}" || status=$?
fi
if [ "$run_native" = 1 ]; then
  echo "== shaledb-native: bench/native, node-workloads (built without the RocksDB and fjall peers)"
  (cd bench/native && cargo run -q --release --no-default-features --bin node-workloads -- "${filters[@]}") ||
    status=$?
fi
node bench/report.mjs
exit "$status"
