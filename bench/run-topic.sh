#!/usr/bin/env bash
# The topic suite (issue 14): minikafka's own benchmark (`go test -bench`, its three benchmarks
# Publish1Topic, Throughput, EndToEndLatency) against minikafka's broker and against ShaleDB's
# log server (examples/log-server) over loopback TCP, then the same three in-process on
# `shaledb::topic` (bench/topic, Rust). One line per figure is appended to
# bench/results/topic.jsonl (or $SHALEDB_BENCH_RESULTS/topic.jsonl); then REPORT.md is rendered.
#
#   bash bench/run-topic.sh                          # everything
#   TOPIC_BENCHTIME=50000x bash bench/run-topic.sh   # go test -benchtime (default 100000x)
#
# -benchtime is a message count, the same for both brokers: EndToEndLatency's percentiles
# include queueing behind the whole burst of b.N messages (its p99 is about the run's length),
# so they compare only at the same b.N (minikafka's p99 keeps the last 100,000 samples).
#   SHALEDB_BENCH_RESULTS=/tmp/me bash bench/run-topic.sh
#
# minikafka's benchmark starts its broker in-process; a patched copy of it
# (bench/topic/external-broker.patch, applied to a copy in bench/topic/.build, never to
# bench/peers) can instead drive an external broker (BENCH_EXTERNAL_BROKER=1, BENCH_PUB_PORT,
# BENCH_SUB_PORT), reports EndToEndLatency's p50 and p999 beside its p99, and raises minikafka's
# idle polling deadline from 100 ms to 2 s (its peer README: under CPU contention the 100 ms read
# deadline can expire between a frame's length and payload and desynchronise the stream).
# minikafka listens on all interfaces on fixed ports 5555/5556: it runs only inside this bounded
# run, one run at a time, with a fresh TMPDIR deleted afterwards. The log server listens on
# loopback only ($LOG_SERVER_PUB / $LOG_SERVER_SUB, default 127.0.0.1:15555 / :15556).
# Needs Go >= 1.18 and a C compiler (cgo), node, and bench/peers/minikafka (or $MINIKAFKA_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export SHALEDB_BENCH_RUN="${SHALEDB_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
results="${SHALEDB_BENCH_RESULTS:-$root/bench/results}"
mkdir -p "$results"
host="$(nproc)x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//; s/"/'"'"'/g')"
peer="${MINIKAFKA_DIR:-$root/bench/peers/minikafka}"
build="$root/bench/topic/.build"
benchtime="${TOPIC_BENCHTIME:-100000x}"
pub="${LOG_SERVER_PUB:-127.0.0.1:15555}"
sub="${LOG_SERVER_SUB:-127.0.0.1:15556}"

scratch=""
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  if [ -n "$scratch" ]; then rm -rf "$scratch"; fi
}
trap cleanup EXIT

echo "== building minikafka's benchmark from a patched copy of $peer/src"
rm -rf "$build/src"
mkdir -p "$build"
cp -r "$peer/src" "$build/src"
(cd "$build" && patch -s -p1 <"$root/bench/topic/external-broker.patch")
(
  cd "$build/src/bench/minikafka"
  unset GOWORK
  GOPROXY=off GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=1 GOFLAGS=-buildvcs=false \
    go test -c -o "$build/minikafka-bench.test" .
)
echo "== building the log server and the in-process benchmark"
cargo build --release -q -p shaledb-log-server
cargo build --release -q --manifest-path bench/topic/Cargo.toml

# Runs minikafka's benchmark binary (bounded) with a fresh TMPDIR, its lines as engine $1.
run_go() {
  local engine=$1
  shift
  scratch="$(mktemp -d)"
  echo "== minikafka's benchmark against $engine (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  # Results on stdout; the brokers' log lines (stderr) apart, so they cannot split a result line.
  env TMPDIR="$scratch" "$@" timeout 900 "$build/minikafka-bench.test" \
    -test.bench=. -test.benchmem -test.run='^$' -test.benchtime="$benchtime" -test.timeout=14m \
    2>"$scratch/log.txt" | grep -v -e '^ ' -e '^Vulnerab' -e '^Flags' | tee "$scratch/out.txt" || true
  echo "($(wc -l <"$scratch/log.txt") log lines on stderr, the first:)"
  head -5 "$scratch/log.txt"
  node bench/topic/go-bench-to-jsonl.mjs "$engine" "$SHALEDB_BENCH_RUN" "$host" "$results/topic.jsonl" <"$scratch/out.txt"
  rm -rf "$scratch"
  scratch=""
}

# minikafka's own broker, in the benchmark's process (ports 5555/5556).
run_go minikafka

# ShaleDB's log server, started for this run on a fresh data directory, stopped by its pid.
data="$(mktemp -d)"
target_dir="$(cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
"$target_dir/release/log-server" --data "$data/db" --publish "$pub" --subscribe "$sub" 2>"$data/server.log" &
server=$!
for _ in $(seq 100); do grep -q "publish on" "$data/server.log" 2>/dev/null && break; sleep 0.1; done
run_go shaledb BENCH_EXTERNAL_BROKER=1 BENCH_PUB_PORT="${pub##*:}" BENCH_SUB_PORT="${sub##*:}" BENCH_BROKER_HOST="${pub%:*}"
kill "$server"
wait "$server" 2>/dev/null || true
server=""
grep -v -e "publish on" -e "stopping" "$data/server.log" | head -20 || true
rm -rf "$data"

echo "== in-process (Rust, shaledb::topic; load average: $(cut -d' ' -f1-3 /proc/loadavg))"
SHALEDB_BENCH_RESULTS="$results" "$root/bench/topic/target/release/shaledb-bench-topic"

if [ "$results" = "$root/bench/results" ]; then node bench/report.mjs; fi
