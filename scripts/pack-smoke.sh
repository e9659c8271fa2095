#!/usr/bin/env bash
# Checks the package as users get it: `npm pack` packages/js, install the tarball into an empty
# project in a temporary directory, and run there the README's first Node.js example verbatim
# (the first ```js block of the "Node.js API" section) twice, the second run reopening the
# database; then, on Linux, the example without its close() twice (the stale lock of the first
# run is taken over). Then the synchronous API and the error type from the installed package,
# and a TypeScript file importing it, type-checked as a user's editor would. Then bundles of a small
# app made with esbuild for Node (ES module and CommonJS; the wasm beside the bundle, or inlined;
# version() alone, tree-shaken), and with webpack, each run from an empty directory. Then, on Linux
# x64, `npx shaledb` (the package's launcher of the command-line tool) with the platform package
# @shaledb/cli-linux-x64 made from the CLI's debug binary (packages/js/scripts/cli-package.mjs)
# installed beside it, compared with the binary run directly.
#
#   bash scripts/pack-smoke.sh [--no-build]
#
# Builds the WebAssembly module and the package first (both skip or go fast when up to date)
# and the CLI (cargo build -p shaledb-cli) unless --no-build is given (the test command has just
# built them). Needs no network: the package's one dependency, optional, is the CLI's platform
# package, installed from its tarball (elsewhere than on Linux x64 npm finds it nowhere and skips
# it). Prints every command it runs.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

build=1
[ "${1:-}" = "--no-build" ] && build=0

# Prints a command, then runs it.
run() {
  printf '+ %s\n' "$*"
  "$@"
}

if [ "$build" = 1 ]; then
  run bash scripts/build-wasm.sh
  run npm run --silent build -w shaledb
  run cargo build --quiet -p shaledb-cli
fi
[ -f packages/js/dist/node.js ] && [ -f packages/js/wasm/shaledb_wasm_bg.wasm ] ||
  die "packages/js is not built: run scripts/build-wasm.sh and npm run build -w shaledb"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/shaledb-pack-smoke.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

section "pack-smoke: npm pack packages/js"
tarball="$(cd packages/js && npm pack --silent --pack-destination "$tmp" | tail -n1)"
[ -f "$tmp/$tarball" ] || die "npm pack did not write $tmp/$tarball"
listing="$(tar -tzf "$tmp/$tarball")"
echo "$tarball: $(wc -c <"$tmp/$tarball") bytes, $(wc -l <<<"$listing") files"
for f in package/package.json package/dist/node.js package/dist/node.d.ts package/dist/browser.js \
  package/dist/bin/shaledb.js package/wasm/shaledb_wasm.js package/wasm/shaledb_wasm_bg.wasm \
  package/wasm/shaledb_kv_bg.wasm; do
  grep -qx "$f" <<<"$listing" || die "the tarball lacks $f"
done

# What npm shows and needs: the metadata, and every target of the `exports` map in the tarball.
tar -xzf "$tmp/$tarball" -C "$tmp" package/package.json
node - "$tmp/package/package.json" "$listing" <<'JS'
const [manifestPath, listing] = process.argv.slice(2);
const pkg = JSON.parse(require("node:fs").readFileSync(manifestPath, "utf8"));
const files = new Set(listing.split("\n"));
for (const field of ["name", "version", "description", "license", "keywords", "engines", "files", "exports", "types"]) {
  if (pkg[field] === undefined) throw new Error(`package.json lacks "${field}"`);
}
if (pkg.scripts?.prepack === undefined) throw new Error("package.json has no prepack script");
const targets = [];
const walk = (value) =>
  typeof value === "string" ? targets.push(value) : Object.values(value).forEach(walk);
walk(pkg.exports);
targets.push(pkg.types, ...Object.values(pkg.bin ?? {}));
for (const target of targets) {
  if (!files.has(`package/${target.replace(/^\.\//, "")}`)) throw new Error(`the tarball lacks ${target}`);
}
console.log(`package.json: metadata complete; the ${targets.length} targets of exports/types/bin are in the tarball`);
JS
rm -rf "$tmp/package"

# The CLI's platform package, from the debug binary the test command builds (stripped: 7 MiB).
cli_platform=""
[ "$(uname -sm)" = "Linux x86_64" ] && cli_platform=linux-x64
cli_tarball=""
if [ -n "$cli_platform" ]; then
  section "pack-smoke: the CLI's platform package @shaledb/cli-$cli_platform (packages/js/scripts/cli-package.mjs)"
  cli_binary="${CARGO_TARGET_DIR:-$REPO/target}/debug/shaledb"
  [ -x "$cli_binary" ] || die "$cli_binary is not built: run cargo build -p shaledb-cli"
  run node packages/js/scripts/cli-package.mjs "$cli_binary" "$tmp/cli-$cli_platform"
  # Bad input: a file that is not the platform's executable, a platform shaledb does not list,
  # the template as the output directory (emptied first): each refused with exit code 2.
  for bad in "packages/js/package.json $tmp/bad" "$cli_binary $tmp/bad --platform darwin-arm64" \
    "$cli_binary packages/cli-$cli_platform"; do
    status=0
    # shellcheck disable=SC2086 # $bad is the arguments, split on purpose
    node packages/js/scripts/cli-package.mjs $bad 2>"$tmp/stderr" || status=$?
    [ "$status" = 2 ] || die "cli-package.mjs $bad: exit code $status, expected 2"
    echo "cli-package.mjs refuses $bad: $(cat "$tmp/stderr")"
  done
  [ -f "packages/cli-$cli_platform/package.json" ] || die "cli-package.mjs removed its template"
  cli_tarball="$(cd "$tmp/cli-$cli_platform" && npm pack --silent --pack-destination "$tmp" | tail -n1)"
  echo "$cli_tarball: $(wc -c <"$tmp/$cli_tarball") bytes"
  cli_tarball="$tmp/$cli_tarball"
fi

section "pack-smoke: the crate packs for crates.io (cargo package -p shaledb --offline)"
crate_start=$(now)
# Builds the packaged crate by itself (in target/package), as `cargo publish` would before
# uploading; --offline: the registry's index is cached by the workspace's build.
printf '+ cargo package -p shaledb --offline --allow-dirty --quiet\n'
# (Its warnings that the integration tests are not in the package are left out: by design.)
cargo package -p shaledb --offline --allow-dirty --quiet >"$tmp/cargo-package.log" 2>&1 ||
  { cat "$tmp/cargo-package.log"; die "cargo package -p shaledb failed"; }
grep -v "^warning: ignoring test" "$tmp/cargo-package.log" || true
crate_listing="$(cargo package -p shaledb --offline --allow-dirty --list 2>/dev/null)"
for f in Cargo.toml README.md src/lib.rs; do
  grep -qx "$f" <<<"$crate_listing" || die "the crate lacks $f"
done
crate="target/package/shaledb-$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1).crate"
[ -f "$crate" ] || die "cargo package wrote no $crate"
echo "$crate: $(wc -c <"$crate") bytes, $(wc -l <<<"$crate_listing") files ($(($(now) - crate_start))s)"

# The example, exactly as the README shows it.
example="$(awk '
  /^## Node.js API/ { in_section = 1; next }
  in_section && /^## / { exit }
  in_section && /^```js$/ { in_block = 1; next }
  in_block && /^```$/ { exit }
  in_block { print }
' README.md)"
grep -q 'from "shaledb"' <<<"$example" || die "no \`\`\`js example found in the README's Node.js API section"

section "pack-smoke: install $tarball into an empty project ($tmp/app)"
mkdir "$tmp/app"
cd "$tmp/app"
printf '+ npm init -y\n'
npm init -y >/dev/null
# With the CLI's platform package (its optional dependency, not published yet) where there is one.
run npm install --silent --no-audit --no-fund "$tmp/$tarball" ${cli_tarball:+"$cli_tarball"}
printf '%s\n' "$example" >example.mjs
printf -- '--- example.mjs (from README.md)\n%s\n---\n' "$example"

section "pack-smoke: run the README example"
for attempt in first second; do
  printf '+ node example.mjs   (%s run)\n' "$attempt"
  out="$(node example.mjs)"
  echo "$out"
  [ "$out" = "v" ] || die "expected the example to print \"v\", got: $out"
done
[ -f my-db/CURRENT ] || die "the example left no database in $tmp/app/my-db"
if [ "$(uname -s)" = Linux ]; then
  # Without its close(): the process exits holding the lock, and the next run takes the stale
  # lock over (Linux only: elsewhere a process's liveness cannot be checked).
  grep -v 'db.close()' <<<"$example" >example-no-close.mjs
  for attempt in first second; do
    printf '+ node example-no-close.mjs   (the example without close(), %s run)\n' "$attempt"
    out="$(node example-no-close.mjs)"
    echo "$out"
    [ "$out" = "v" ] || die "expected \"v\", got: $out"
  done
fi

section "pack-smoke: the synchronous API and the error type, from the installed package"
cat >sync.mjs <<'JS'
import { openSync, ShaleError } from "shaledb";
const db = openSync("./my-db");
if (db.get("k") !== "v") throw new Error(`get: ${db.get("k")}`);
try {
  openSync("./my-db");
  throw new Error("a second open succeeded");
} catch (e) {
  if (!(e instanceof ShaleError) || e.code !== "LOCKED") throw e;
}
db.close();
console.log("openSync: get k = v; a second open fails with LOCKED");
JS
run node sync.mjs

section "pack-smoke: Node bundles made with esbuild run from a directory of their own"
# The README's "Bundling for Node" recipes (packages/js/test-bundle/): the bundle beside a copy
# of shaledb.wasm given to init(), and the `shaledb/inline` entry (one file), each as ES module
# and CommonJS (and two with Rolldown); then a bundle importing version() alone, tree-shaken. Each runs in an empty
# directory of its own, with no node_modules on the way up.
esbuild="$REPO/node_modules/.bin/esbuild"
[ -x "$esbuild" ] || die "$esbuild missing (run scripts/setup.sh)"
bundle_start=$(now)
cp "$REPO"/packages/js/test-bundle/* .
# bundle NAME ENTRY FORMAT [esbuild options...]: bundles ENTRY into $tmp/NAME/app.{mjs,cjs}.
bundle() {
  local name="$1" entry="$2" format="$3" ext=mjs
  shift 3
  [ "$format" = cjs ] && ext=cjs
  mkdir -p "$tmp/$name"
  run "$esbuild" "$entry" --bundle --platform=node --target=node20 --format="$format" --log-level=warning \
    --log-override:empty-import-meta=silent --outfile="$tmp/$name/app.$ext" "$@"
}
# run_bundle NAME: runs $tmp/NAME/app.* there, expecting "ok <version>".
run_bundle() {
  local out app
  app="$(cd "$tmp/$1" && ls app.*)"
  printf '+ (cd %s && node %s ./data)\n' "$tmp/$1" "$app"
  out="$(cd "$tmp/$1" && node "$app" ./data)"
  echo "$out ($(wc -c <"$tmp/$1/$app") bytes)"
  [[ "$out" == "ok "* ]] || die "the bundle $1 printed: $out"
}
for format in esm cjs; do
  ext=mjs
  [ "$format" = cjs ] && ext=cjs
  bundle "bundle-path-$format" "app-path.$ext" "$format"
  run cp node_modules/shaledb/wasm/shaledb_wasm_bg.wasm "$tmp/bundle-path-$format/shaledb.wasm"
  run_bundle "bundle-path-$format"
  bundle "bundle-inline-$format" app-inline.mjs "$format"
  run_bundle "bundle-inline-$format"
done
# The module's bytes inside the bundle through esbuild's binary loader, given to init().
bundle bundle-binary-loader app-binary.mjs esm --loader:.wasm=binary
run_bundle bundle-binary-loader
# The same with Rolldown (Rollup's API; a devDependency already): one file, and the wasm beside.
rolldown="$REPO/node_modules/.bin/rolldown"
mkdir -p "$tmp/rolldown-inline-esm" "$tmp/rolldown-path-cjs"
run "$rolldown" app-inline.mjs --platform node --format esm --logLevel warn --file "$tmp/rolldown-inline-esm/app.mjs"
run_bundle rolldown-inline-esm
run "$rolldown" app-path.cjs --platform node --format cjs --logLevel warn --file "$tmp/rolldown-path-cjs/app.cjs"
run cp node_modules/shaledb/wasm/shaledb_wasm_bg.wasm "$tmp/rolldown-path-cjs/shaledb.wasm"
run_bundle rolldown-path-cjs
# The same with webpack 5 (packages/js/test-bundle/webpack.config.cjs, through webpack's Node API):
# the package's own entry as an ES module, run with the .wasm webpack emitted beside it, and
# shaledb/inline as CommonJS, run alone (what webpack emitted beside it removed).
webpack="$REPO/node_modules/webpack"
[ -d "$webpack" ] || die "$webpack missing (run scripts/setup.sh)"
printf '+ webpack(require("./webpack.config.cjs")("%s"))   (webpack-esm, webpack-inline-cjs)\n' "$tmp"
node -e '
  const webpack = require(process.argv[1]);
  webpack(require("./webpack.config.cjs")(process.argv[2]), (error, stats) => {
    if (error) throw error;
    const report = stats.toString({ preset: "errors-warnings", colors: false });
    if (stats.hasErrors() || stats.hasWarnings()) console.error(report);
    if (stats.hasErrors()) process.exitCode = 1;
  });' "$webpack" "$tmp"
ls "$tmp/webpack-esm/"*.wasm >/dev/null || die "webpack emitted no .wasm beside the bundle webpack-esm"
run_bundle webpack-esm
rm -f "$tmp/webpack-inline-cjs/"*.wasm "$tmp/webpack-inline-cjs/"*.js
run_bundle webpack-inline-cjs
bundle bundle-version-only version-only.mjs esm --minify --tree-shaking=true
run_bundle bundle-version-only
! grep -q "engine-worker" "$tmp/bundle-version-only/app.mjs" ||
  die "the version()-only bundle carries the Promise API's worker transport: tree shaking failed"
echo "bundles built and run in $(($(now) - bundle_start))s"

if [ -n "$cli_platform" ]; then
  section "pack-smoke: npx shaledb runs the command-line tool from @shaledb/cli-$cli_platform"
  # As a user would, from a shell in the project: the same output as the binary run directly on
  # a database the project's Node code wrote; exit codes and signals passed through; without the
  # platform package, a message saying how to get the tool.
  cli_start=$(now)
  cat >cli-db.mjs <<'JS'
import { openSync } from "shaledb";
const db = openSync("./cli-db");
db.put("user:1", "ada");
db.put("user:2", "bob");
db.put("order:1", "tea");
db.close();
JS
  run node cli-db.mjs
  # same_output DESCRIPTION ARGS...: `npx shaledb ARGS` prints what the binary prints, exit 0
  # (kept in $via_npx).
  same_output() {
    local what="$1" direct
    shift
    printf '+ npx shaledb %s\n' "$*"
    via_npx="$(npx --no-install shaledb "$@")" || die "npx shaledb $*: exit code $?"
    direct="$("$cli_binary" "$@")"
    [ "$via_npx" = "$direct" ] || die "npx shaledb $* printed:
$via_npx
but the binary prints:
$direct"
    echo "$what: $(wc -l <<<"$via_npx") lines, the same as $cli_binary $*"
  }
  same_output "npx shaledb --help prints the tool's usage" --help
  same_output "npx shaledb info describes the database Node wrote" info cli-db
  same_output "npx shaledb get prints a value Node wrote" get cli-db user:2
  [ "$via_npx" = bob ] || die "npx shaledb get cli-db user:2 printed $via_npx, not bob"
  same_output "npx shaledb scan prints the keys Node wrote" scan cli-db --prefix user:
  [ "$(wc -l <<<"$via_npx")" = 2 ] && grep -q '"value":"ada"' <<<"$via_npx" ||
    die "npx shaledb scan cli-db --prefix user: printed: $via_npx"

  # expect_exit CODE ARGS...: `npx shaledb ARGS` exits with CODE (its standard error kept in $tmp/stderr).
  expect_exit() {
    local expected="$1" status=0
    shift
    printf '+ npx shaledb %s   (expecting exit code %s)\n' "$*" "$expected"
    npx --no-install shaledb "$@" >/dev/null 2>"$tmp/stderr" || status=$?
    [ "$status" = "$expected" ] || { cat "$tmp/stderr"; die "npx shaledb $*: exit code $status, expected $expected"; }
  }
  expect_exit 1 get cli-db user:9
  echo "npx shaledb passes the exit code through: get of a missing key exits 1"
  expect_exit 2 info no-such-db
  grep -q "NOT_FOUND" "$tmp/stderr" || die "npx shaledb info no-such-db did not print NOT_FOUND: $(cat "$tmp/stderr")"
  echo "npx shaledb passes the exit code through: a missing database exits 2 with error [NOT_FOUND]"

  # A signal: the launcher (node_modules/.bin/shaledb, what npx runs) sent SIGTERM while the tool
  # waits on standard input passes it on, and dies of it too (exit status 128 + 15).
  printf '+ node_modules/.bin/shaledb load sig-db - <(a pipe left open), then kill -TERM the launcher\n'
  mkfifo "$tmp/stdin"
  node_modules/.bin/shaledb load sig-db - <"$tmp/stdin" &
  launcher=$!
  exec 3>"$tmp/stdin"
  # The binary is running once the launcher has a child (Linux's /proc: no procps needed).
  launched() { grep -qs "^PPid:[[:space:]]*$launcher\$" /proc/[0-9]*/status; }
  for _ in $(seq 100); do
    launched && break
    sleep 0.1
  done
  launched || die "the launcher started no binary"
  kill -TERM "$launcher"
  status=0
  wait "$launcher" || status=$?
  exec 3>&-
  [ "$status" = 143 ] || die "the launcher killed by SIGTERM exited with $status, expected 143"
  echo "npx shaledb passes a signal through: SIGTERM to the launcher ends the tool, exit status 143"

  mv "node_modules/@shaledb/cli-$cli_platform" "$tmp/cli-moved"
  expect_exit 2 info cli-db
  mv "$tmp/cli-moved" "node_modules/@shaledb/cli-$cli_platform"
  grep -q "cargo install --path crates/cli" "$tmp/stderr" && grep -q "@shaledb/cli-$cli_platform" "$tmp/stderr" ||
    die "npx shaledb without its platform package printed: $(cat "$tmp/stderr")"
  echo "npx shaledb without its platform package says how to get the tool and exits 2:"
  sed 's/^/    /' "$tmp/stderr"
  SHALEDB_CLI_TEST_PLATFORM=darwin-arm64 expect_exit 2 info cli-db
  grep -q "Prebuilt binaries exist for: $cli_platform" "$tmp/stderr" ||
    die "npx shaledb on another platform printed: $(cat "$tmp/stderr")"
  echo "npx shaledb on a platform without a binary (darwin-arm64, simulated) lists the platforms that have one and exits 2"
  echo "npx shaledb checked in $(($(now) - cli_start))s"
fi

section "pack-smoke: TypeScript projects type-check against the package (packages/js/test-types)"
# A Node project under moduleResolution node16, nodenext and bundler, and a browser project
# under bundler with the "browser" condition: tsc --strict, the typed-value checks and the
# @ts-expect-error lines of packages/js/test-types.
tsc="$REPO/node_modules/.bin/tsc"
[ -x "$tsc" ] || die "$tsc missing (run scripts/setup.sh)"
cp -r "$REPO/packages/js/test-types" types
for config in node16 nodenext bundler browser; do
  run "$tsc" -p "types/tsconfig.$config.json" --typeRoots "$REPO/node_modules/@types"
done
echo "test-types type-check under node16, nodenext, bundler (Node) and bundler (browser)"

section "pack-smoke: passed"
