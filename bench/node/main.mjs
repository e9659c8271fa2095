#!/usr/bin/env node
// The Node.js benchmark suite "node": the same workloads (workloads.mjs) through ShaleDB,
// classic-level, lmdb and better-sqlite3 in one run, one child process per engine and value
// size, appending JSON lines to bench/results/node.jsonl. See README.md.
//
//   node main.mjs [--engines=a,b] [--sizes=100B,1KiB] [FILTER...]
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { ENGINES } from "./engines/index.mjs";
import { SIZES, runId, scratchBase } from "./harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (flag, env, fallback) => {
  const a = args.find((x) => x.startsWith(`--${flag}=`));
  const v = a ? a.slice(flag.length + 3) : process.env[env];
  return v ? v.split(",").map((s) => s.trim()).filter(Boolean) : fallback;
};
const engines = opt("engines", "NODE_BENCH_ENGINES", Object.keys(ENGINES));
const sizes = opt("sizes", "NODE_BENCH_SIZES", Object.keys(SIZES));
const filters = args.filter((a) => !a.startsWith("--"));

// One run id for every engine of the run (and for the native program, via run-node.sh).
process.env.SHALEDB_BENCH_RUN = runId();
console.log(`run ${process.env.SHALEDB_BENCH_RUN}; databases under ${scratchBase()}`);

/** The same memory state for every engine: dirty pages written back, page cache dropped
 *  (Linux, as root; elsewhere nothing), as crates/bench-support does. */
function dropPageCache() {
  spawnSync("sync");
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "1");
  } catch {
    // not root, or not Linux
  }
}

let failed = 0;
for (const size of sizes) {
  for (const engine of engines) {
    dropPageCache();
    const r = spawnSync(process.execPath, ["--expose-gc", join(here, "run-engine.mjs"), engine, size, ...filters], {
      stdio: "inherit",
      env: process.env,
    });
    if (r.status !== 0) {
      console.log(`${engine} ${size}: exited with ${r.status ?? r.signal}`);
      failed++;
    }
  }
}
process.exit(failed ? 1 : 0);
