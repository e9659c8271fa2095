/**
 * The WebAssembly module's bytes, inlined: `dist/wasm-inline.js`, written at build time by
 * `scripts/inline-wasm.mjs` (with a copy of this declaration) from `wasm/shaledb_wasm_bg.wasm`.
 */
export declare function wasmBytes(): Uint8Array;
