/**
 * `shaledb/testing` in Node (the `node` export condition): the helpers of `testing.ts`, with the
 * WebAssembly module loaded on first use as the main entry does.
 *
 * @module
 */
import { useNodeLoader } from "./node/load-wasm.js";

export * from "./testing.js";

useNodeLoader();
