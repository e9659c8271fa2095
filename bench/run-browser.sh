#!/usr/bin/env bash
# Runs the browser suite ("browser") in one run: ShaleDB's browser entry beside raw IndexedDB
# (default and relaxed durability), idb-keyval and SQLite Wasm on opfs-sahpool, in headless
# Debian Chromium driven by playwright-core, then in headless Debian Firefox ESR driven by
# puppeteer-core over WebDriver BiDi (bench/browser), appending JSON lines to
# bench/results/browser.jsonl (each figure's host names the browser), then renders
# bench/results/REPORT.md.
#
#   bash bench/run-browser.sh                                   # everything, in both browsers
#   bash bench/run-browser.sh --browsers=firefox                # one browser only
#   bash bench/run-browser.sh get/random scan                   # cases whose name contains a filter
#   bash bench/run-browser.sh --engines=shaledb,sqlite-wasm     # some engines only
#   bash bench/run-browser.sh --sizes=100B
#   BROWSER_BENCH_N=20000 bash bench/run-browser.sh             # smaller databases
#
# Other settings (environment): see bench/browser/README.md. The peers, Vite and playwright-core
# install from npm into bench/browser/node_modules only (npm ci there), never into the root
# workspace. Installs Debian's chromium and firefox-esr when missing (or set SHALEDB_CHROMIUM,
# SHALEDB_FIREFOX).
set -euo pipefail
cd "$(dirname "$0")/.."
export SHALEDB_BENCH_RUN="${SHALEDB_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
export SHALEDB_BENCH_RESULTS="${SHALEDB_BENCH_RESULTS:-$PWD/bench/results}"

args=()
browsers=(chromium firefox)
for a in "$@"; do
  case "$a" in
    --browsers=*) IFS=, read -r -a browsers <<<"${a#--browsers=}" ;;
    --engines=* | --sizes=*) args+=("$a") ;;
    --*) echo "unknown option $a" >&2; exit 2 ;;
    *) args+=("$a") ;;
  esac
done

# The toolchain, the root npm install and Debian's chromium (or SHALEDB_CHROMIUM), when missing;
# then ShaleDB's npm package: the wasm module and the TypeScript build (bench/browser links to it).
bash scripts/setup.sh --chromium --firefox
bash scripts/build-wasm.sh
npm run build -w shaledb

# The peers, Vite and playwright-core, into bench/browser/node_modules.
if [ ! -f bench/browser/node_modules/.package-lock.json ] ||
  [ bench/browser/package-lock.json -nt bench/browser/node_modules/.package-lock.json ]; then
  (cd bench/browser && npm ci --no-audit --no-fund)
fi

# The bench page, as a production bundle (bench/browser/dist).
(cd bench/browser && ./node_modules/.bin/vite build)

status=0
for browser in "${browsers[@]}"; do
  node bench/browser/main.mjs "--browser=$browser" "${args[@]}" || status=$?
done
node bench/report.mjs
exit "$status"
