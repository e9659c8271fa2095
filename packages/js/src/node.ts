/**
 * Entry point for Node.js (the `node` export condition): loads the WebAssembly module
 * synchronously from the package's own files.
 *
 * @module
 */
import { readFileSync } from "node:fs";

import { initSync } from "../wasm/shaledb_wasm.js";
import { isReady, markReady } from "./state.js";

export * from "./core.js";

/**
 * Loads and instantiates the WebAssembly module. In Node this finishes synchronously (the
 * returned promise is already settled); calling it again does nothing.
 */
export function init(): Promise<void> {
  try {
    loadSync();
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function loadSync(): void {
  if (isReady()) {
    return;
  }
  const bytes = readFileSync(new URL("../wasm/shaledb_wasm_bg.wasm", import.meta.url));
  initSync({ module: bytes });
  markReady();
}
