/**
 * Entry point `shaledb/inline` for Node: the `shaledb` Node entry with the WebAssembly module
 * inside this JavaScript (base64, generated at build time: `scripts/inline-wasm.mjs` writes
 * `dist/wasm-inline.js`), for bundles that cannot carry files beside them (a single-file
 * esbuild, webpack or rollup bundle, a serverless function). It is ~1.2 MiB of JavaScript more
 * than `shaledb`, which reads `shaledb.wasm` from beside the package.
 *
 * The Promise API's engine runs in a worker whose file a bundle does not carry either: open
 * with `engineThread: "caller"` there, or use `openSync`.
 *
 * @module
 */
import { init as initNode, open as openNode, openSync as openSyncNode, version as versionNode } from "./node.js";
import { provideModule } from "./node/wasm-module.js";
import type { WasmSource } from "./node/load-wasm.js";
import type { KeyEncoding, OpenOptions, ValueEncoding } from "./types.js";
import { wasmBytes } from "./wasm-inline.js";

export { ShaleError, type ShaleErrorCode, type WasmSource } from "./node.js";
export type * from "./types.js";

let provided = false;

/** Gives the loader the inlined module (decoded and compiled once, on first use). */
function useInlineModule(): void {
  if (!provided) {
    provideModule(new WebAssembly.Module(wasmBytes() as BufferSource));
    provided = true;
  }
}

/** The version of the ShaleDB core compiled into the WebAssembly module. */
export function version(): string {
  useInlineModule();
  return versionNode();
}

/**
 * Loads the inlined WebAssembly module (or `source`, as `init` of `shaledb` does, if given
 * before any use). Not needed: `open` and `openSync` load it on first use.
 */
export function init(source?: WasmSource): Promise<void> {
  if (source === undefined) {
    useInlineModule();
  }
  return initNode(source);
}

/** `openSync` of `shaledb` (Node), on the inlined module. */
export const openSync = ((location: string, options?: OpenOptions<KeyEncoding, ValueEncoding>) => {
  useInlineModule();
  return openSyncNode(location, options);
}) as typeof openSyncNode;

/** `open` of `shaledb` (Node), on the inlined module. */
export const open = ((location: string, options?: OpenOptions<KeyEncoding, ValueEncoding>) => {
  useInlineModule();
  return openNode(location, options);
}) as typeof openNode;
