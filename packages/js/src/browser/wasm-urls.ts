/**
 * Where a browser worker fetches the WebAssembly module from: beside the package, in `wasm/`.
 * Each URL is written out as `new URL("literal", import.meta.url)`, the form bundlers (Vite,
 * webpack, Rollup) find and copy the file for. (From `dist/browser/`, where this module and the
 * bundled worker are, the package's root is two levels up.)
 *
 * @module
 */
/** The WebAssembly modules a browser open can load (`BrowserOpenOptions.module`). */
export type EngineModule = "full" | "kv";

/** The URL of `module`: the whole engine (`"full"`) or the key-value engine alone (`"kv"`). */
export function moduleUrl(module: EngineModule): URL {
  return module === "kv"
    ? new URL("../../wasm/shaledb_kv_bg.wasm", import.meta.url)
    : new URL("../../wasm/shaledb_wasm_bg.wasm", import.meta.url);
}
