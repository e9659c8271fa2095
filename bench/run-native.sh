#!/usr/bin/env bash
# Runs the native RecordIO and SSTable benchmarks and go-sstables (../shared/peers/gosst) in one
# run, appending JSON lines to bench/results/<suite>.jsonl, then renders bench/results/REPORT.md.
#
#   bash bench/run-native.sh            # everything
#   bash bench/run-native.sh recordio   # one suite
#
# Needs Go for the peer (skipped with a note when `go` or ../shared/peers/gosst is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
suites=("${@:-recordio sstable}")
read -r -a suites <<<"${suites[*]}"
export SHALEDB_BENCH_RUN="${SHALEDB_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
host="$(nproc)x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//; s/"/'"'"'/g')"
peer="../shared/peers/gosst"
if command -v go >/dev/null && [ -d "$peer" ]; then
  (cd "$peer" && go build -o /tmp/gosst .)
  have_peer=1
else
  echo "note: go or $peer missing; running ShaleDB only" >&2
  have_peer=0
fi
for suite in "${suites[@]}"; do
  echo "== $suite: shaledb"
  cargo bench -q -p shaledb --bench "$suite"
  if [ "$have_peer" = 1 ]; then
    echo "== $suite: go-sstables"
    only=$([ "$suite" = sstable ] && echo table || echo "$suite")
    # The same memory state for every engine (see drop_page_cache in crates/bench-support).
    sync; (echo 1 > /proc/sys/vm/drop_caches) 2>/dev/null || true
    /tmp/gosst -only "$only" | node -e '
      const [run, host] = process.argv.slice(1);
      const out = [];
      require("readline").createInterface({ input: process.stdin })
        .on("line", (l) => { if (l.trim()) { const o = JSON.parse(l); o.run = run; o.host = host; out.push(JSON.stringify(o)); console.log(out[out.length - 1]); } })
        .on("close", () => require("fs").appendFileSync(`bench/results/${process.argv[3]}.jsonl`, out.map((l) => l + "\n").join("")));
    ' "$SHALEDB_BENCH_RUN" "$host" "$suite"
  fi
done
node bench/report.mjs
