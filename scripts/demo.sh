#!/usr/bin/env bash
# `npm run demo`: installs what is missing (scripts/setup.sh), builds the WebAssembly module and
# the `shaledb` package, then runs the Node.js event store (examples/node/event-store.mjs).
# Arguments go to the example: `npm run demo -- /tmp/my-events` uses that directory instead of
# demo-data/node-events. The Rust demo: `cargo run --release -p shaledb-examples --bin demo`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

setup_and_build
section "node examples/node/event-store.mjs${*:+ $*}"
node examples/node/event-store.mjs "$@"
