// Shared pieces of the Node.js benchmark suite "node" (DESIGN.md, "Benchmarks"): settings from
// the environment, workload data, JSON-line output, scratch directories.
//
// The key, value and order generators are mirrored exactly by the native program
// (bench/native/src/bin/node_workloads.rs), so both measure the same operations on the same bytes.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import {
  KEY_SIZE,
  Rng,
  SCAN_LEN,
  SEED,
  SIZES,
  makeKeys as makeKeysIn,
  makeValues as makeValuesIn,
  permutation,
} from "../common/generators.mjs";
import { fsType, host } from "../common/machine.mjs";

export { KEY_SIZE, Rng, SCAN_LEN, SEED, SIZES, host, permutation };

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, "../..");

/** Entries per size when neither NODE_BENCH_N nor NODE_BENCH_N_<SIZE> is set. */
const DEFAULT_N = { "100B": 200_000, "1KiB": 100_000 };

/**
 * @typedef {object} Config
 * @property {string} size          value size name ("100B" or "1KiB")
 * @property {number} valueSize     value size in bytes
 * @property {number} n             entries loaded by every put case
 * @property {number} gets          timed random gets
 * @property {number} scans         timed scans of SCAN_LEN entries
 * @property {number} syncOps       timed synced puts
 * @property {number} cacheBytes    block cache / page cache budget, where the engine has one
 * @property {number} memtableBytes memtable / write buffer, where the engine has one
 * @property {number} settleMs      idle time after reopening, before the read cases
 * @property {string[]} filters     case filters (substring match); empty runs every case
 */

function envInt(name, fallback) {
  const v = process.env[name];
  if (v === undefined || v === "") return fallback;
  const n = Number(v.replace(/_/g, ""));
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${v} is not a number`);
  return Math.floor(n);
}

/**
 * Settings of one size, from the environment (see README.md). Shared with the native program,
 * which reads the same variables.
 * @param {string} size
 * @param {string[]} [filters]
 * @returns {Config}
 */
export function config(size, filters = []) {
  const valueSize = SIZES[size];
  if (!valueSize) throw new Error(`unknown size ${size} (known: ${Object.keys(SIZES).join(", ")})`);
  const n = Math.max(
    SCAN_LEN,
    envInt(`NODE_BENCH_N_${size.toUpperCase()}`, envInt("NODE_BENCH_N", DEFAULT_N[size])),
  );
  return {
    size,
    valueSize,
    n,
    gets: Math.max(1, envInt("NODE_BENCH_GETS", Math.min(n, 200_000))),
    scans: Math.max(1, envInt("NODE_BENCH_SCANS", 1000)),
    syncOps: Math.max(1, envInt("NODE_BENCH_SYNC_OPS", 2000)),
    cacheBytes: envInt("NODE_BENCH_CACHE_MB", 64) << 20,
    memtableBytes: envInt("NODE_BENCH_MEMTABLE_MB", 4) << 20,
    settleMs: envInt("NODE_BENCH_SETTLE_MS", 1000),
    filters,
  };
}

/** Whether case `name` is selected by the filters. */
export function enabled(cfg, name) {
  return cfg.filters.length === 0 || cfg.filters.some((f) => name.includes(f));
}

// --- Workload data --------------------------------------------------------------------------

/** Node's keys and values are Buffers (some engines' binary APIs want them). */
export const makeKeys = (n) => makeKeysIn(n, (size) => Buffer.alloc(size));
export const makeValues = (len, seed = SEED.values) => makeValuesIn(len, seed, (size) => Buffer.alloc(size));

// --- Output ---------------------------------------------------------------------------------

/** The run id: SHALEDB_BENCH_RUN, else the current UTC time to the second. */
export function runId() {
  return process.env.SHALEDB_BENCH_RUN || new Date().toISOString().replace(/\.\d+Z$/, "Z");
}


const resultsDir = process.env.SHALEDB_BENCH_RESULTS || join(repoRoot, "bench/results");

/** Prints one figure and appends it to bench/results/node.jsonl. */
export function emit(caseName, engine, metric, value) {
  const line = JSON.stringify({
    suite: "node",
    case: caseName,
    engine,
    metric,
    value: Math.round(value * 1000) / 1000,
    run: runId(),
    host: host(),
  });
  console.log(line);
  mkdirSync(resultsDir, { recursive: true });
  appendFileSync(join(resultsDir, "node.jsonl"), line + "\n");
}

/**
 * The figure printer of a suite of its own (`queue`, `topic`, `watch`): `emit(case, metric,
 * value)` prints one JSON line and appends it to $SHALEDB_BENCH_RESULTS/<suite>.jsonl when that
 * is set. Latencies ("us") keep one decimal, rates are whole numbers.
 */
export function suiteEmitter(suite, engine) {
  return (caseName, metric, figure) => {
    const line = JSON.stringify({
      suite,
      case: caseName,
      engine,
      metric,
      value: metric === "us" ? Math.round(figure * 10) / 10 : Math.round(figure),
      run: runId(),
      host: host(),
    });
    console.log(line);
    const dir = process.env.SHALEDB_BENCH_RESULTS;
    if (dir) {
      mkdirSync(dir, { recursive: true });
      appendFileSync(join(dir, `${suite}.jsonl`), line + "\n");
    }
  };
}

// --- Scratch directories --------------------------------------------------------------------


/**
 * Where the databases live: $SHALEDB_BENCH_DIR, else the system temp directory unless it is a
 * tmpfs (memory, not disk), else bench/node/.scratch in the repository.
 */
export function scratchBase() {
  if (process.env.SHALEDB_BENCH_DIR) return resolve(process.env.SHALEDB_BENCH_DIR);
  const tmp = resolve(tmpdir());
  const t = fsType(tmp);
  if (t && t !== "tmpfs" && t !== "ramfs") return tmp;
  return join(here, ".scratch");
}

/** A fresh empty directory for one database. */
export function scratchDir(engine) {
  const base = scratchBase();
  mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base, `shaledb-bench-node-${engine}-`));
}

/** Removes a scratch directory. */
export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
