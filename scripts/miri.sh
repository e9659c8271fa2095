#!/usr/bin/env bash
# Runs the core's unsafe code under Miri (undefined behaviour, aliasing and data-race checks):
# the memtable's arena and inline skip list (crates/core/src/memtable/) with their tests,
# including a reader thread racing the writer. Run it after touching any `unsafe` block there.
# Installs the nightly toolchain's Miri if missing (a few minutes the first time, so the full
# test command does not run it). About a minute once installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal --component miri,rust-src
fi
# Isolation off: the test harness reads the clock for its timing line.
MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}" cargo +nightly miri test -p shaledb --lib memtable::
