/**
 * Loading the WebAssembly module asynchronously, from a URL (browsers: pages and workers).
 *
 * @module
 */
import initWasm from "../../wasm/shaledb_wasm.js";
import { isReady, markReady } from "./instance.js";
import { setMemory } from "./scratch.js";

let loading: Promise<void> | undefined;

/**
 * Fetches, compiles and instantiates the module at `url` unless an instance is ready; calls
 * made while one load is under way share it. A failed load can be retried.
 */
export function loadWasm(url: string | URL): Promise<void> {
  if (isReady()) {
    return Promise.resolve();
  }
  loading ??= initWasm({ module_or_path: url }).then(
    (instance) => {
      setMemory(instance.memory);
      markReady(instance);
      loading = undefined;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
