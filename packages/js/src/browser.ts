/**
 * Entry point for browsers and other non-Node runtimes (the `browser` and `default` export
 * conditions): fetches the WebAssembly module next to this file, via `import.meta.url`.
 *
 * @module
 */
import initWasm from "../wasm/shaledb_wasm.js";
import { isReady, markReady } from "./engine.js";
import { setMemory } from "./scratch.js";

export * from "./core.js";

let loading: Promise<void> | undefined;

/**
 * Loads and instantiates the WebAssembly module; must complete before any other call. Calling it
 * again returns the same promise.
 *
 * @param wasmUrl Where to fetch `shaledb.wasm` from, if not beside this file (for bundlers or
 *   CDNs that move assets). The package exports the file as `shaledb/shaledb.wasm`.
 */
export function init(wasmUrl?: string | URL): Promise<void> {
  if (isReady()) {
    return Promise.resolve();
  }
  loading ??= initWasm({
    module_or_path: wasmUrl ?? new URL("../wasm/shaledb_wasm_bg.wasm", import.meta.url),
  }).then(
    (instance) => {
      setMemory(instance.memory);
      markReady();
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
