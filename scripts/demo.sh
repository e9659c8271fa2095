#!/usr/bin/env bash
# `npm run demo`: installs what is missing, then runs the Rust demo program (examples/rust).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

bash scripts/setup.sh
section "cargo run --release -p shaledb-examples --bin demo"
cargo run --release -p shaledb-examples --bin demo -- "$@"
