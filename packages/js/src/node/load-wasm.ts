/**
 * Loading the WebAssembly module in Node: synchronously, from the package's own `.wasm` file,
 * on first use (and afresh after a panic).
 *
 * @module
 */
import { readFileSync } from "node:fs";

import { initSync } from "../../wasm/shaledb_wasm.js";
import { ensureLoadedSync, markReady, needsLoad, setSyncLoader } from "../engine/instance.js";
import { setMemory } from "../engine/scratch.js";

let wasmBytes: Buffer | undefined;

/** Instantiates the module from the package's own `.wasm` (fresh after a panic). */
function loadSync(): void {
  wasmBytes ??= readFileSync(new URL("../../wasm/shaledb_wasm_bg.wasm", import.meta.url));
  const instance = initSync({ module: wasmBytes });
  setMemory(instance.memory);
  markReady();
}

/** Lets the engine load the module by itself on first use (call once per entry point). */
export function useNodeLoader(): void {
  setSyncLoader(loadSync);
}

/**
 * Loads the WebAssembly module. In Node this finishes synchronously (the returned promise is
 * already settled); `open` and `openSync` call it themselves.
 */
export function init(): Promise<void> {
  try {
    if (needsLoad()) {
      ensureLoadedSync();
    }
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
