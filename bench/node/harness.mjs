// Shared pieces of the Node.js benchmark suite "node" (DESIGN.md, "Benchmarks"): settings from
// the environment, workload data, JSON-line output, scratch directories.
//
// The key, value and order generators are mirrored exactly by the native program
// (crates/core/benches/node_workloads.rs), so both measure the same operations on the same bytes.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, "../..");

/** Key size in bytes. */
export const KEY_SIZE = 16;
/** Entries a scan reads. */
export const SCAN_LEN = 1000;

/** Value sizes by name, as in the case names. */
export const SIZES = { "100B": 100, "1KiB": 1024 };
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

/**
 * xorshift32 (Marsaglia 13/17/5): small, fast in JS without BigInt, and trivially mirrored in
 * Rust. Deterministic per seed.
 */
export class Rng {
  /** @param {number} seed */
  constructor(seed) {
    this.x = (Math.imul(seed + 1, 0x9e3779b9) ^ 0x5bd1e995) >>> 0 || 1;
  }

  /** The next number in 0..2^32. */
  next() {
    let x = this.x;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.x = x >>> 0;
    return this.x;
  }

  /** A number in 0..n. */
  below(n) {
    return this.next() % n;
  }
}

/** 0..n in a random order (Fisher-Yates), deterministic per seed. */
export function permutation(n, seed) {
  const p = new Uint32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  const rng = new Rng(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    const t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

/**
 * The 16-byte keys of entries 0..n: eight zero bytes, then the entry number as a big-endian
 * u64, so key order is number order. One buffer, one view per key (made before timing).
 * @returns {Buffer[]}
 */
export function makeKeys(n) {
  const all = Buffer.alloc(n * KEY_SIZE);
  const keys = new Array(n);
  for (let i = 0; i < n; i++) {
    const off = i * KEY_SIZE;
    all.writeUInt32BE(Math.floor(i / 2 ** 32), off + 8);
    all.writeUInt32BE(i >>> 0, off + 12);
    keys[i] = all.subarray(off, off + KEY_SIZE);
  }
  return keys;
}

/**
 * Values as db_bench makes them: a pool of about 1 MiB where every 100-byte stretch is 50
 * random bytes written twice (so values compress to about half), cut into consecutive windows
 * of `len` bytes. The j-th put of a case writes window j mod (number of windows).
 * @returns {Buffer[]}
 */
export function makeValues(len, seed = 7) {
  const rng = new Rng(seed);
  const stretches = Math.ceil((1 << 20) / 100);
  const pool = Buffer.alloc(stretches * 100);
  for (let s = 0; s < stretches; s++) {
    for (let b = 0; b < 50; b++) {
      const byte = rng.next() >>> 24;
      pool[s * 100 + b] = byte;
      pool[s * 100 + 50 + b] = byte;
    }
  }
  const windows = [];
  for (let pos = 0; pos + len <= pool.length; pos += len) windows.push(pool.subarray(pos, pos + len));
  return windows;
}

/** Seeds of the generators (the same in the native program). */
export const SEED = { order: 1, gets: 2, scans: 3, values: 7 };

// --- Output ---------------------------------------------------------------------------------

/** The run id: SHALEDB_BENCH_RUN, else the current UTC time to the second. */
export function runId() {
  return process.env.SHALEDB_BENCH_RUN || new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

/** "<cores>x <CPU model>", as the Rust harness writes it. */
export function host() {
  let model = "";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8").split("\n").find((l) => l.startsWith("model name"));
    model = line ? line.split(":")[1].trim() : "";
  } catch {
    model = cpus()[0]?.model ?? process.arch;
  }
  return `${cpus().length}x ${model || process.arch}`.replace(/"/g, "'");
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

// --- Scratch directories --------------------------------------------------------------------

/** The mount's file system type for `path` (longest mount point that contains it), or "". */
function fsType(path) {
  try {
    let best = "";
    let type = "";
    for (const line of readFileSync("/proc/mounts", "utf8").split("\n")) {
      const [, mnt, fstype] = line.split(" ");
      if (mnt && (path === mnt || path.startsWith(mnt.endsWith("/") ? mnt : mnt + "/")) && mnt.length > best.length) {
        best = mnt;
        type = fstype;
      }
    }
    return type;
  } catch {
    return "";
  }
}

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
