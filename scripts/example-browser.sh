#!/usr/bin/env bash
# `npm run example:browser`: installs what is missing (scripts/setup.sh), builds the WebAssembly
# module and the `shaledb` package, then starts the Vite dev server of examples/browser (an
# offline notes app) and prints its URL; Ctrl+C stops it. Arguments go to Vite:
# `npm run example:browser -- --port 8080` listens on port 8080 instead of 5173.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

setup_and_build
section "vite examples/browser${*:+ $*} (the notes app; Ctrl+C stops it)"
exec npm run --silent dev -w examples/browser -- "$@"
