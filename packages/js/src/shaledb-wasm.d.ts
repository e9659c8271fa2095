/**
 * `shaledb/shaledb.wasm`: the WebAssembly module. What an import of it gives is up to the
 * bundler's loader for `.wasm` files (esbuild's `binary` loader: the bytes; its `file` loader,
 * webpack's `asset/resource`: a path or URL); every one of these is a {@link WasmSource} that
 * `init()` takes. Copied to `dist/shaledb-wasm.d.ts` at build time (`scripts/inline-wasm.mjs`).
 */
import type { WasmSource } from "./node.js";

declare const shaledbWasm: WasmSource;
export default shaledbWasm;
