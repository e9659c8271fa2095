#!/usr/bin/env bash
# Installs what the test and demo commands need; quick and silent about it when all is present.
#   - the wasm32-unknown-unknown Rust target,
#   - wasm-bindgen-cli of exactly the version crates/wasm/Cargo.toml pins,
#   - the npm devDependencies (npm ci), when node_modules is missing or older than the lock file,
#   - with --chromium (the test command): Debian's chromium package, for the browser tests
#     (headless, driven by playwright-core), unless SHALEDB_CHROMIUM names another binary,
#   - with --nats (the test command): nats-server, for the replication example's tests, built with
#     `go install` (v2.15.2, from the Go module proxy) into $HOME/.cache/shaledb/bin unless that
#     version is there already or SHALEDB_NATS_SERVER names another binary.
#   - with --firefox (the test command): Debian's firefox-esr package, for the browser tests in
#     Firefox (headless, driven by puppeteer-core over WebDriver BiDi), unless SHALEDB_FIREFOX
#     names another binary.
#   - with --runtimes (the test command): the JavaScript runtimes of scripts/runtimes.list (Bun,
#     Deno, Node 22 and 24), each from its npm package into
#     $HOME/.cache/shaledb/runtimes/<package>-<version>, unless that one is there already.
# Flags combine: setup.sh --chromium --firefox --nats --runtimes.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

chromium=0
nats=0
firefox=0
runtimes=0
for arg in "$@"; do
  case "$arg" in
    --chromium) chromium=1 ;;
    --nats) nats=1 ;;
    --firefox) firefox=1 ;;
    --runtimes) runtimes=1 ;;
    *) die "unknown argument: $arg (known: --chromium, --firefox, --nats, --runtimes)" ;;
  esac
done

command -v cargo >/dev/null || die "cargo not found: install Rust (https://rustup.rs), then rerun"
command -v node >/dev/null || die "node not found: install Node.js 20.19 or newer, then rerun"
command -v npm >/dev/null || die "npm not found: install Node.js 20.19 or newer, then rerun"

node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    console.error(`error: Node.js ${process.versions.node} is too old; 20.19 or newer is needed`);
    process.exit(1);
  }'

# 1. The wasm32 target. rust-toolchain.toml lists it, and rustup installs it with the toolchain;
#    this covers a rustup too old to do that.
if command -v rustup >/dev/null; then
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    section "setup: rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
fi

# 2. wasm-bindgen-cli, exactly the version the crate pins (the one source of truth). Not
#    --locked: one of its locked dependencies is missing from the registry.
want="$(sed -nE 's/^wasm-bindgen[[:space:]]*=[[:space:]]*(\{[^}]*version[[:space:]]*=[[:space:]]*)?"=?([0-9][0-9.]*)".*/\2/p' crates/wasm/Cargo.toml | head -n1)"
[ -n "$want" ] || die "cannot read the wasm-bindgen version from crates/wasm/Cargo.toml"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have" != "$want" ]; then
  section "setup: cargo install wasm-bindgen-cli --version $want (found: ${have:-none}; takes a few minutes)"
  cargo install wasm-bindgen-cli --version "$want" --force
fi

# 3. npm devDependencies. npm ci rewrites node_modules/.package-lock.json, so its age tells
#    whether the install is older than package-lock.json.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  section "setup: npm ci"
  npm ci --no-audit --no-fund
fi

# 4. Chromium for the browser tests (playwright cannot download browsers here; Debian's works).
if [ "$chromium" = 1 ] && [ ! -x "${SHALEDB_CHROMIUM:-/usr/bin/chromium}" ]; then
  command -v apt-get >/dev/null ||
    die "no /usr/bin/chromium and no apt-get: install Chromium, or set SHALEDB_CHROMIUM to its binary"
  apt_install "for the browser tests" chromium
fi

# 5. nats-server for the replication example's tests (examples/replication), built from source
#    through the Go module proxy (no prebuilt download), once: reinstalled only when the binary at
#    the default path is missing or reports another version. examples/replication/src/nats-server.mjs
#    looks in the same places.
if [ "$nats" = 1 ]; then
  nats_version=2.15.2
  if [ -n "${SHALEDB_NATS_SERVER:-}" ]; then
    [ -x "$SHALEDB_NATS_SERVER" ] || die "SHALEDB_NATS_SERVER names $SHALEDB_NATS_SERVER, which is not an executable"
  else
    nats_bin="$HOME/.cache/shaledb/bin"
    have="$("$nats_bin/nats-server" --version 2>/dev/null | sed -nE 's/.*v([0-9.]+).*/\1/p' || true)"
    if [ "$have" != "$nats_version" ]; then
      command -v go >/dev/null ||
        die "go not found: install Go 1.24 or newer (for nats-server), or set SHALEDB_NATS_SERVER to a nats-server binary"
      section "setup: go install github.com/nats-io/nats-server/v2@v$nats_version into $nats_bin (found: ${have:-none}; about a minute)"
      mkdir -p "$nats_bin"
      GOBIN="$nats_bin" GOFLAGS=-buildvcs=false go install "github.com/nats-io/nats-server/v2@v$nats_version"
    fi
  fi
fi

# 6. Firefox for the browser tests in a second engine (puppeteer cannot download it here either).
if [ "$firefox" = 1 ] && [ ! -x "${SHALEDB_FIREFOX:-/usr/bin/firefox-esr}" ]; then
  command -v apt-get >/dev/null ||
    die "no /usr/bin/firefox-esr and no apt-get: install Firefox, or set SHALEDB_FIREFOX to its binary"
  apt_install "for the browser tests in Firefox" firefox-esr
fi

# 7. The JavaScript runtimes the package is tested under (scripts/test-runtimes.sh), from the npm
#    registry: each npm package carries its runtime's binary (as an optional dependency of the
#    platform's). Installed once per version: one that answers --version is kept.
if [ "$runtimes" = 1 ]; then
  while read -r package version; do
    case "$package" in "" | "#"*) continue ;; esac
    dir="$HOME/.cache/shaledb/runtimes/$package-$version"
    if ! "$dir/node_modules/.bin/$package" --version >/dev/null 2>&1; then
      section "setup: npm install $package@$version into $dir"
      mkdir -p "$dir"
      npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock "$package@$version"
      "$dir/node_modules/.bin/$package" --version >/dev/null ||
        die "npm install $package@$version gave no working $package binary"
    fi
  done <scripts/runtimes.list
fi
