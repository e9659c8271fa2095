// Bundles the browser worker (src/browser/worker.ts and everything it imports, the wasm-bindgen
// glue included) into the single module dist/browser/worker.js, replacing what tsc wrote there.
// One file instead of ~25 modules: the worker starts without a waterfall of module requests,
// also in a bundler's dev server or from a CDN. The WebAssembly module stays a separate file,
// fetched from `new URL("../../wasm/shaledb_wasm_bg.wasm", import.meta.url)`.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

import { build } from "rolldown";

const root = fileURLToPath(new URL("..", import.meta.url));

await build({
  cwd: root,
  input: "src/browser/worker.ts",
  platform: "browser",
  logLevel: "warn",
  output: {
    file: "dist/browser/worker.js",
    format: "esm",
    sourcemap: true,
    minify: true,
  },
});

// The worker is half of what a page downloads for ShaleDB (with the wasm module, whose size
// scripts/build-wasm.sh prints): say how big it is.
const bundle = readFileSync(new URL("../dist/browser/worker.js", import.meta.url));
console.log(
  `dist/browser/worker.js: ${bundle.length} bytes, ${gzipSync(bundle, { level: 9 }).length} gzipped`,
);
