#!/usr/bin/env bash
# Builds the WebAssembly module and its JavaScript glue into packages/js/wasm/:
#   cargo (wasm32, release) -> wasm-bindgen --target web -> wasm-opt (npm's binaryen),
# and the same without the bindings' `full` feature (queues, topics, the change feed, verify):
# the key-value module shaledb_kv_bg.wasm, driven by the same glue (its imports and exports are a
# subset of the whole module's: packages/js/test/lean-module.test.ts checks it).
# Skips all of it when the output is newer than every input and was made by the same tools.
# Expects scripts/setup.sh to have run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

out=packages/js/wasm
wasm="$out/shaledb_wasm_bg.wasm"
kv_wasm="$out/shaledb_kv_bg.wasm"
stamp="$out/.build-stamp"
wasm_opt=node_modules/.bin/wasm-opt
opt_flags=(-O3 --strip-debug --strip-producers)

[ -x "$wasm_opt" ] || die "$wasm_opt missing: run scripts/setup.sh first"
tools="wasm-bindgen $(wasm-bindgen --version | awk '{print $2}'); wasm-opt $("$wasm_opt" --version | awk '{print $3}') ${opt_flags[*]}"

inputs=(Cargo.toml Cargo.lock rust-toolchain.toml crates/core crates/wasm scripts/build-wasm.sh)
if [ -f "$wasm" ] && [ -f "$kv_wasm" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$tools" ] &&
  [ -z "$(find "${inputs[@]}" -newer "$stamp" -not -path '*/target/*' -print -quit)" ]; then
  echo "packages/js/wasm is up to date ($(wc -c <"$wasm") bytes, $(gzip -9c "$wasm" | wc -c) gzipped;" \
    "key-value module $(wc -c <"$kv_wasm") bytes, $(gzip -9c "$kv_wasm" | wc -c) gzipped)"
  exit 0
fi

cargo build -p shaledb-wasm --target wasm32-unknown-unknown --profile wasm
rm -rf "$out"
wasm-bindgen --target web --out-dir "$out" \
  "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/wasm/shaledb_wasm.wasm"
# After a panic the instance is dead, and the glue keeps it in a module-level `wasm` that
# initSync/init return as is. This export lets the TypeScript layer drop it, so the next open
# instantiates a fresh module (packages/js/src/engine/instance.ts).
glue="$out/shaledb_wasm.js"
grep -q '^let wasmModule, wasmInstance, wasm;$' "$glue" ||
  die "wasm-bindgen glue changed: $glue no longer declares 'let wasmModule, wasmInstance, wasm;'"
for cache in cachedDataViewMemory0 cachedFloat64ArrayMemory0 cachedUint8ArrayMemory0; do
  grep -q "^let $cache = null;\$" "$glue" ||
    die "wasm-bindgen glue changed: $glue no longer declares 'let $cache = null;'"
done
# The glue's fallback URL (the .wasm beside the glue) is never used: ShaleDB always passes the
# module (Node) or its URL (browsers). Left in, bundlers would try to resolve it from wherever the
# glue was bundled into (the worker, dist/browser/worker.js) and warn that it is missing.
fallback="        module_or_path = new URL('shaledb_wasm_bg.wasm', import.meta.url);"
grep -qxF "$fallback" "$glue" ||
  die "wasm-bindgen glue changed: $glue no longer has the fallback URL line this script removes"
grep -vxF "$fallback" "$glue" >"$glue.tmp"
sed -i "s|^    if (module_or_path === undefined) {\$|&\n        throw new Error('shaledb: pass the WebAssembly module or its URL');|" "$glue.tmp"
mv "$glue.tmp" "$glue"
cat >>"$glue" <<'JS'

/** ShaleDB: forgets the current instance; the next initSync/init instantiates a fresh one. */
export function forgetInstance() {
    wasm = undefined;
    wasmModule = undefined;
    wasmInstance = undefined;
    // Views of the old memory would keep it alive (ShaleDB lets an idle instance go to free it).
    cachedDataViewMemory0 = null;
    cachedFloat64ArrayMemory0 = null;
    cachedUint8ArrayMemory0 = null;
}
JS
cat >>"$out/shaledb_wasm.d.ts" <<'TS'

/** ShaleDB: forgets the current instance; the next initSync/init instantiates a fresh one. */
export function forgetInstance(): void;
TS
raw=$(wc -c <"$wasm")
# wasm-opt reads the enabled features (bulk memory, reference types, ...) from the module.
"$wasm_opt" "${opt_flags[@]}" "$wasm" -o "$wasm.opt"
mv "$wasm.opt" "$wasm"
echo "shaledb_wasm_bg.wasm: $raw bytes from wasm-bindgen, $(wc -c <"$wasm") after wasm-opt, $(gzip -9c "$wasm" | wc -c) gzipped"

cargo build -p shaledb-wasm --target wasm32-unknown-unknown --profile wasm --no-default-features
kv_glue="$(mktemp -d)"
wasm-bindgen --target web --out-dir "$kv_glue" \
  "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/wasm/shaledb_wasm.wasm"
"$wasm_opt" "${opt_flags[@]}" "$kv_glue/shaledb_wasm_bg.wasm" -o "$kv_wasm"
rm -rf "$kv_glue"
echo "shaledb_kv_bg.wasm (the key-value module): $(wc -c <"$kv_wasm") bytes after wasm-opt, $(gzip -9c "$kv_wasm" | wc -c) gzipped"
echo "$tools" >"$stamp"
