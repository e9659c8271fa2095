#!/usr/bin/env bash
# Runs packages/js/test-runtimes/probe.mjs (the package's main paths: both APIs, queues, topics,
# the change feed, a second process refused, a SIGKILL while writing) under every runtime of
# scripts/runtimes.list, as installed by scripts/setup.sh --runtimes. Expects packages/js built.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ -f packages/js/dist/node.js ] || die "packages/js is not built: run scripts/build-wasm.sh and npm run build -w shaledb"
while read -r package version; do
  case "$package" in "" | "#"*) continue ;; esac
  bin="$HOME/.cache/shaledb/runtimes/$package-$version/node_modules/.bin/$package"
  [ -x "$bin" ] || die "$package $version is not installed: run scripts/setup.sh --runtimes"
  args=()
  [ "$package" = deno ] && args=(run --allow-all)
  "$bin" "${args[@]}" packages/js/test-runtimes/probe.mjs
done <scripts/runtimes.list
