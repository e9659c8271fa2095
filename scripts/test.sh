#!/usr/bin/env bash
# `npm test`: the whole test command. Installs what is missing (scripts/setup.sh), then runs, in
# order, and stops at the first failure:
#   Rust: fmt check, clippy (-D warnings), the API docs, tests, the queue server driven by a
#   memcache client (node --test), the core's unit tests and codec tests without its optional
#   codecs (gzip, LZW), clippy of the core and bindings for wasm32;
#   WebAssembly: build (scripts/build-wasm.sh);
#   JS: build (tsc), strict type check of sources and tests, the packed package in an empty
#   project (scripts/pack-smoke.sh), the package's main paths under Bun, Deno, Node 22 and 24
#   (scripts/test-runtimes.sh; installed by setup.sh --runtimes), the replication example against a real nats-server
#   (installed by setup.sh --nats), abstract-level's test suite on ShaleLevel (tape), vitest in
#   Node (two files at a time), then the browser tests: vitest driving headless Debian Chromium
#   (installed by setup.sh --chromium) through playwright-core, and those whose outcome depends
#   on the browser in headless Debian Firefox ESR (setup.sh --firefox; puppeteer-core over
#   WebDriver BiDi, SHALEDB_BROWSER=firefox; the list: packages/js/vitest.browser.config.ts).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

start=$(now)
step_start=$start
step() {
  local t
  t=$(now)
  if [ "$step_start" != "$start" ] || [ "$t" != "$start" ]; then
    printf '    (%ss)\n' "$((t - step_start))"
  fi
  step_start=$t
  section "$1"
}

step "setup (installs only what is missing)"
bash scripts/setup.sh --chromium --firefox --nats --runtimes

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo doc -p shaledb --no-deps (broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc -p shaledb --no-deps

step "the Rust modules and files have no dependency cycle (scripts/module-cycles.mjs: core, bindings, CLI)"
node scripts/module-cycles.mjs crates/core/src
node scripts/module-cycles.mjs crates/wasm/src
node scripts/module-cycles.mjs crates/cli/src

step "the TypeScript files import each other without cycles (scripts/ts-cycles.mjs)"
node scripts/ts-cycles.mjs packages/js/src

step "cargo test --workspace"
cargo test --workspace

step "the queue server driven by a real memcache client over loopback (examples/queue-server, node --test)"
cargo build -p shaledb-queue-server
(cd examples/queue-server && node --test --test-timeout=60000 test/)

step "cargo test -p shaledb --no-default-features (the core without its optional codecs, as in the WebAssembly build)"
cargo test -p shaledb --no-default-features --features testing --lib --test recordio_optional_codecs

step "cargo clippy -p shaledb-wasm --target wasm32-unknown-unknown -- -D warnings (the core and its bindings as WebAssembly)"
cargo clippy -p shaledb-wasm --target wasm32-unknown-unknown -- -D warnings

step "build the WebAssembly module (scripts/build-wasm.sh)"
bash scripts/build-wasm.sh

step "build packages/js (tsc)"
npm run --silent --workspace packages/js build

step "the CLI on databases Node wrote and headless Chromium exported, and the other way round (crates/cli/tests/js)"
cargo build -p shaledb-cli
node crates/cli/tests/js/node-and-browser-archive.mjs target/debug/shaledb packages/js
node crates/cli/tests/js/browser-export.mjs target/debug/shaledb packages/js

step "type check packages/js, sources and tests (tsc --strict --noEmit)"
npm run --silent --workspace packages/js typecheck

step "the packed package installs into an empty project and runs the README example (scripts/pack-smoke.sh)"
bash scripts/pack-smoke.sh --no-build

step "the package under Bun, Deno, Node 22 and Node 24 (scripts/test-runtimes.sh, runtimes from scripts/runtimes.list)"
bash scripts/test-runtimes.sh

step "replication through a real NATS JetStream server: leader, followers, crashes, bootstrap (examples/replication, node --test)"
(cd examples/replication && node --test --test-timeout=120000 test/*.test.mjs)

# Runs vitest with config $1 (in packages/js) and prints its pass/fail counts.
run_vitest() {
  local report status
  report="$(mktemp -d)/vitest.json"
  set +e
  (cd packages/js && npx --no-install vitest run -c "$1" --reporter=default --reporter=json --outputFile.json="$report")
  status=$?
  set -e
  if [ -f "$report" ]; then
    node -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed` +
        (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));' "$report"
  fi
  return "$status"
}

step "abstract-level's own test suite (tape) on ShaleLevel, shaledb/level (packages/js/test-level)"
level_tap="$(mktemp)"
set +e
(cd packages/js && node test-level/abstract-level-suite.mjs) >"$level_tap" 2>&1
level_status=$?
set -e
grep -E '^not ok' -A12 "$level_tap" | head -80 || true
node -e '
  const t = require("fs").readFileSync(process.argv[1], "utf8");
  const n = (name) => Number((t.match(new RegExp(`^# ${name} +(\\d+)$`, "m")) ?? [0, 0])[1]);
  console.log(`abstract-level suite: ${n("pass")} passed, ${n("fail")} failed`);' "$level_tap"
rm -f "$level_tap"
[ "$level_status" -eq 0 ]

step "vitest run (Node)"
run_vitest vitest.config.ts

step "vitest run -c vitest.browser.config.ts (headless Chromium: OPFS worker, tabs, export, the example app)"
run_vitest vitest.browser.config.ts

step "vitest run -c vitest.browser.config.ts in Firefox (SHALEDB_BROWSER=firefox: headless firefox-esr over WebDriver BiDi; the files whose outcome depends on the browser)"
export SHALEDB_BROWSER=firefox
run_vitest vitest.browser.config.ts

t=$(now)
printf '    (%ss)\n' "$((t - step_start))"
section "all tests passed in $((t - start))s"
