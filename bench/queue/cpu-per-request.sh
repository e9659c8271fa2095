#!/usr/bin/env bash
# Server CPU time per request under siberite-bench's flood (10 queues, equal sets and gets of
# 64 B): the server's utime+stime from /proc before and after, divided by the requests.
# Needs bench/run-queue.sh to have built the peers and the servers once.
#
#   bash bench/queue/cpu-per-request.sh shaledb 10 100000   # engine, connections, sets (+ as many gets)
#   SHALEDB_SERVER=/path/to/shaledb-queue-server bash bench/queue/cpu-per-request.sh shaledb 10 100000
#
# Prints one line: engine, connections, requests/s, CPU µs per request. darner binds every
# interface: it runs only for the measurement and is stopped by its pid.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="$here/.build"
engine=${1:?engine: shaledb, siberite or darner}
conns=${2:-10}
total=${3:-100000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/queue-cpu.XXXXXX")
case $engine in
  shaledb) port=22151; "${SHALEDB_SERVER:-$repo/target/release/shaledb-queue-server}" --listen 127.0.0.1:$port --data "$dir" >/dev/null 2>&1 & ;;
  siberite) port=22152; "$build/siberite/siberite" -listen 127.0.0.1:$port -data "$dir" >/dev/null 2>&1 & ;;
  darner) port=22153; "$build/darner/darner" -p $port -d "$dir" >/dev/null 2>&1 & ;;
  *) echo "unknown engine $engine" >&2; exit 2 ;;
esac
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
sleep 1
each=$((total / conns))
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks)
out=$("$build/siberite/siberite-bench" -host 127.0.0.1 -port $port -queue db_bench -concurrency "$conns" \
  -queues 10 -sets $each -gets $each -item_size 64 2>&1)
t1=$(ticks)
rps=$(grep -o 'Requests per second: [0-9.]*' <<<"$out" | awk '{print $4}')
awk -v e="$engine" -v c="$conns" -v r="$rps" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v n="$((each * conns * 2))" \
  'BEGIN { printf "%s conns=%d req/s=%s cpu_us_per_req=%.1f\n", e, c, r, t * 1e6 / hz / n }'
