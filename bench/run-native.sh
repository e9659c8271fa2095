#!/usr/bin/env bash
# Runs the native RecordIO and SSTable benchmarks and go-sstables (bench/peers/gosst) in one
# run, then renders bench/results/REPORT.md. Each suite runs NATIVE_BENCH_REPEATS times (default
# 4, even: each engine goes first as often) per engine, the two engines taking turns at going first
# after the page cache is dropped (the first writer after a drop pays for reclaiming it); one line
# per figure is appended to bench/results/<suite>.jsonl: the median, with "spread": [min, max].
#
#   bash bench/run-native.sh                              # everything
#   bash bench/run-native.sh recordio                     # one suite
#   NATIVE_BENCH_REPEATS=5 bash bench/run-native.sh recordio
#
# Needs Go for the peer (skipped with a note when `go` is missing); go-sstables comes from the Go
# module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
suites=("${@:-recordio sstable}")
read -r -a suites <<<"${suites[*]}"
repeats="${NATIVE_BENCH_REPEATS:-4}"
export SHALEDB_BENCH_RUN="${SHALEDB_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
host="$(nproc)x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//; s/"/'"'"'/g')"
# go-sstables, through a small Go program of ours (bench/peers/gosst) built against its release
# from the Go module proxy.
peer="bench/peers/gosst"
if command -v go >/dev/null; then
  (cd "$peer" && go build -o /tmp/gosst .)
  have_peer=1
else
  echo "note: go is missing; running ShaleDB only" >&2
  have_peer=0
fi
rounds="$(mktemp -d)"
trap 'rm -rf "$rounds"' EXIT
cargo bench -q -p shaledb --no-run >/dev/null

# One engine's run of one suite, its lines into $rounds/<suite>-<engine>-<round>.jsonl.
run_shaledb() {
  echo "== $1 round $2: shaledb"
  mkdir -p "$rounds/$1-shaledb-$2"
  SHALEDB_BENCH_RESULTS="$rounds/$1-shaledb-$2" cargo bench -q -p shaledb --bench "$1"
}
run_peer() {
  echo "== $1 round $2: go-sstables"
  local only
  only=$([ "$1" = sstable ] && echo table || echo "$1")
  # The same memory state as ShaleDB's benchmark starts from (drop_page_cache in crates/bench-support).
  sync; (echo 1 > /proc/sys/vm/drop_caches) 2>/dev/null || true
  mkdir -p "$rounds/$1-go-$2"
  /tmp/gosst -only "$only" | node -e '
    const [run, host, out] = process.argv.slice(1);
    const lines = [];
    require("readline").createInterface({ input: process.stdin })
      .on("line", (l) => { if (l.trim()) { const o = JSON.parse(l); o.run = run; o.host = host; lines.push(JSON.stringify(o)); console.log(lines[lines.length - 1]); } })
      .on("close", () => require("fs").writeFileSync(out, lines.map((l) => l + "\n").join("")));
  ' "$SHALEDB_BENCH_RUN" "$host" "$rounds/$1-go-$2/$1.jsonl"
}

for suite in "${suites[@]}"; do
  for round in $(seq 1 "$repeats"); do
    if [ "$have_peer" = 0 ] || [ $((round % 2)) = 1 ]; then
      run_shaledb "$suite" "$round"
      [ "$have_peer" = 1 ] && run_peer "$suite" "$round"
    else
      run_peer "$suite" "$round"
      run_shaledb "$suite" "$round"
    fi
  done
  node bench/common/median.mjs "$rounds"/"$suite"-*/"$suite".jsonl >>"bench/results/$suite.jsonl"
  echo "== $suite: medians of $repeats rounds appended to bench/results/$suite.jsonl"
done
node bench/report.mjs
