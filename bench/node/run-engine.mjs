// One engine, one value size, in a process of its own (main.mjs starts one per pair, so no
// engine inherits another's heap, JIT state or open files):
//   node --expose-gc run-engine.mjs <engine> <size> [FILTER...]
import { config } from "./harness.mjs";
import { createAdapter } from "./engines/index.mjs";
import { runSize } from "./workloads.mjs";

const [engine, size, ...filters] = process.argv.slice(2);
if (!engine || !size) {
  console.error("usage: node --expose-gc run-engine.mjs <engine> <size> [FILTER...]");
  process.exit(2);
}
let adapter;
try {
  adapter = await createAdapter(engine);
} catch (err) {
  console.log(`${engine}: not available (${err?.message ?? err})`);
  process.exit(0);
}
await runSize(adapter, config(size, filters));
