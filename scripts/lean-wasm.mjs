// Makes the key-value module: the full WebAssembly module (already optimized) without the
// exports scripts/lean-module-exports.json lists (queues, topics, the change feed, verify, the
// RecordIO round trip), then optimized again so that everything only those exports reached goes
// too. The same wasm-bindgen glue drives both modules: the lean one imports a subset of what the
// glue provides, and exports the same functions minus the listed ones.
//   node scripts/lean-wasm.mjs <full.wasm> <out.wasm>
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

import binaryen from "binaryen";

const [full, out] = process.argv.slice(2);
if (full === undefined || out === undefined) {
  throw new Error("usage: node scripts/lean-wasm.mjs <full.wasm> <out.wasm>");
}
const parts = JSON.parse(readFileSync(new URL("lean-module-exports.json", import.meta.url), "utf8"));
const leftOut = Object.entries(parts).flatMap(([part, names]) => (part === "comment" ? [] : names));

const module = binaryen.readBinary(readFileSync(full));
const present = new Set();
for (let i = 0; i < module.getNumExports(); i++) {
  present.add(binaryen.getExportInfo(module.getExportByIndex(i)).name);
}
for (const name of leftOut) {
  if (!present.has(name)) {
    throw new Error(`lean-module-exports.json lists ${name}, which the module does not export`);
  }
  module.removeExport(name);
}
// As scripts/build-wasm.sh's wasm-opt -O3 (its --strip-debug/--strip-producers: no debug info).
binaryen.setOptimizeLevel(3);
binaryen.setShrinkLevel(0);
binaryen.setDebugInfo(false);
module.optimize();
if (!module.validate()) {
  throw new Error("the key-value module does not validate");
}
const bytes = module.emitBinary();
module.dispose();
writeFileSync(out, bytes);
console.log(
  `${out.replace(/.*\//, "")}: ${bytes.length} bytes, ${gzipSync(bytes, { level: 9 }).length} gzipped (${leftOut.length} exports left out)`,
);
