#!/usr/bin/env node
// The queue suite ("queue"): ShaleDB's queue server (examples/queue-server), siberite and darner
// driven by siberite's own load tool (siberite-bench) over loopback, the same workloads as
// siberite's published scripts (src/bench/bench/*.sh), scaled by environment variables; and
// reserve+ack round trips with bench/queue's `reserve-ack` client. Appends JSON lines to
// bench/results/queue.jsonl. bench/run-queue.sh builds everything, then runs this.
//
//   node bench/queue/run.mjs [--engines=shaledb,siberite,darner] [flood|packing|rss|reserve-ack|inproc ...]
//
// Environment (defaults finish in ~10-15 minutes on 2 cores; siberite's published run in ()):
//   QUEUE_BENCH_FLOOD_OPS    sets (and as many gets) per connection count, 100000 (1,000,000)
//   QUEUE_BENCH_PACK_OPS     sets (and as many gets) measured at each backlog step, 20000 (100,000)
//   QUEUE_BENCH_PACK_1K_MAX  largest 1 KiB packing step, 1048576 (1.4M items in all; 8,388,608: 14M)
//   QUEUE_BENCH_PACK_64_MAX  largest 64 B packing step, 262144 (134,217,728: 265M items)
//   QUEUE_BENCH_RSS_MAX      largest RSS step, 524048 (524,048)
//   QUEUE_BENCH_RA_ITEMS     items read per reserve+ack case, 50000
//   QUEUE_BENCH_DIR          where the servers keep their data (default bench/queue/.build/data)
//   QUEUE_INPROC_N           items per in-process case, 200000
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { fsType, host } from "../common/machine.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const build = join(here, ".build");
const env = process.env;
const num = (name, fallback) => (env[name] ? Number(env[name]) : fallback);

const args = process.argv.slice(2);
const enginesArg = args.find((a) => a.startsWith("--engines="));
const engineNames = (enginesArg ? enginesArg.slice(10) : env.QUEUE_BENCH_ENGINES ?? "shaledb,siberite,darner")
  .split(",")
  .filter(Boolean);
const filters = args.filter((a) => !a.startsWith("--"));
const wanted = (group) => !filters.length || filters.some((f) => group.includes(f) || f.includes(group));

const FLOOD_OPS = num("QUEUE_BENCH_FLOOD_OPS", 100_000);
const FLOOD_CONNS = [1, 10, 100, 1000];
const PACK_OPS = num("QUEUE_BENCH_PACK_OPS", 20_000);
const PACK_STEPS = [0, 1024, 16384, 65536, 262144, 1048576, 4194304, 8388608, 16777216, 33554432, 67108864, 134217728];
const pack1k = PACK_STEPS.filter((s) => s <= num("QUEUE_BENCH_PACK_1K_MAX", 1_048_576));
const pack64 = PACK_STEPS.filter((s) => s <= num("QUEUE_BENCH_PACK_64_MAX", 262_144));
const RSS_STEPS = [0, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262024, 524048].filter(
  (s) => s <= num("QUEUE_BENCH_RSS_MAX", 524_048),
);
const RA_ITEMS = num("QUEUE_BENCH_RA_ITEMS", 50_000);
const RA_CONNS = [1, 10];

const dataRoot = resolve(env.QUEUE_BENCH_DIR ?? join(build, "data"));
const run = env.SHALEDB_BENCH_RUN ?? new Date().toISOString().replace(/\.\d+Z$/, "Z");
const results = resolve(env.SHALEDB_BENCH_RESULTS ?? join(repo, "bench/results"));
const machine = host();
const loadTool = join(build, "siberite", "siberite-bench");
const reserveAck = join(here, "target", "release", "reserve-ack");

/** The servers measured: how each starts on `port` over `dir`. */
const ENGINES = {
  shaledb: (port, dir) => [join(repo, "target/release/shaledb-queue-server"), ["--listen", `127.0.0.1:${port}`, "--data", dir]],
  siberite: (port, dir) => [join(build, "siberite/siberite"), ["-listen", `127.0.0.1:${port}`, "-data", dir]],
  // darner always binds every interface (no address option): it runs only inside this bounded
  // benchmark and is stopped by its pid.
  darner: (port, dir) => [join(build, "darner/darner"), ["-p", String(port), "-d", dir]],
};
const PORTS = { shaledb: 22141, siberite: 22142, darner: 22143 };

mkdirSync(results, { recursive: true });
console.log(`run ${run}; engines ${engineNames.join(", ")}; data under ${dataRoot} (${fsType(dataRoot) || "?"})`);

function emit(c, engine, metric, value) {
  const line = JSON.stringify({ suite: "queue", case: c, engine, metric, value: Math.round(value * 1000) / 1000, run, host: machine });
  console.log(line);
  appendFileSync(join(results, "queue.jsonl"), line + "\n");
}

/** Written-back dirty pages and a dropped page cache (as root on Linux), as the other suites do between engines. */
function dropPageCache() {
  spawnSync("sync");
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "1");
  } catch {
    // not root, or not Linux
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function connects(port) {
  return new Promise((res) => {
    const s = createConnection({ host: "127.0.0.1", port }, () => {
      s.destroy();
      res(true);
    });
    s.on("error", () => res(false));
  });
}

/** Starts `engine` with a fresh data directory; resolves once it accepts connections. */
async function start(engine) {
  const port = PORTS[engine];
  const dir = join(dataRoot, engine);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (await connects(port)) throw new Error(`port ${port} is already in use`);
  const [bin, argv] = ENGINES[engine](port, dir);
  const proc = spawn(bin, argv, { stdio: ["ignore", "ignore", "inherit"] });
  let exited = false;
  const exit = new Promise((r) => proc.once("exit", () => ((exited = true), r())));
  for (let i = 0; i < 200 && !(await connects(port)); i++) {
    if (exited) throw new Error(`${engine} exited at start`);
    await sleep(50);
  }
  return {
    port,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exit;
      clearTimeout(t);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One run of siberite-bench; returns its requests per second. */
function load(port, { sets = 0, gets = 0, conns = 1, queues = 1, size = 64, queue = "db_bench" }) {
  const out = execFileSync(
    loadTool,
    ["-host", "127.0.0.1", "-port", String(port), "-queue", queue, "-concurrency", String(conns), "-queues", String(queues),
      "-sets", String(sets), "-gets", String(gets), "-item_size", String(size)],
    { encoding: "utf8", timeout: 30 * 60_000, maxBuffer: 64 << 20 },
  );
  const m = /Requests per second: ([\d.]+)/.exec(out);
  if (!m) throw new Error(`no figure from siberite-bench: ${out}`);
  return Number(m[1]);
}

/** `n` sets (or gets) in all, on 4 connections when there are many (not measured). */
function fill(port, n, size, what = "sets", queue = "db_bench") {
  if (n <= 0) return;
  const conns = n >= 10_000 ? 4 : 1;
  const each = Math.floor(n / conns);
  load(port, { [what]: each, conns, size, queue });
  if (n - each * conns > 0) load(port, { [what]: n - each * conns, size, queue });
}

/** Sends one command line and returns the reply (up to END, or the first line). */
function command(port, line) {
  return new Promise((res, rej) => {
    const s = createConnection({ host: "127.0.0.1", port }, () => s.write(line + "\r\n"));
    let data = "";
    s.on("data", (d) => {
      data += d;
      if (/(^|\r\n)END\r\n$/.test(data) || (!data.startsWith("STAT") && data.endsWith("\r\n"))) {
        s.destroy();
        res(data);
      }
    });
    s.on("error", rej);
    setTimeout(() => {
      s.destroy();
      res(data);
    }, 10_000);
  });
}

async function items(port, queue = "db_bench") {
  const m = new RegExp(`STAT queue_${queue}_items (\\d+)`).exec(await command(port, "stats"));
  return m ? Number(m[1]) : NaN;
}

function rssKb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

async function flood(engine) {
  const s = await start(engine);
  try {
    for (const conns of FLOOD_CONNS) {
      const each = Math.max(1, Math.round(FLOOD_OPS / conns));
      emit(`flood/${conns}conns`, engine, "ops/s", load(s.port, { sets: each, gets: each, conns, queues: 10 }));
    }
  } finally {
    await s.stop();
  }
}

async function reserveAckCases(engine) {
  const s = await start(engine);
  try {
    for (const conns of RA_CONNS) {
      fill(s.port, RA_ITEMS, 64, "sets", "ra_bench");
      const out = execFileSync(reserveAck, ["--port", String(s.port), "--queue", "ra_bench", "--conns", String(conns)], {
        encoding: "utf8",
        timeout: 10 * 60_000,
      });
      const m = /Round trips per second: ([\d.]+)/.exec(out);
      const got = /Items: (\d+)/.exec(out);
      if (!m || Number(got?.[1]) !== RA_ITEMS) throw new Error(`reserve-ack on ${engine}: ${out}`);
      emit(`reserve-ack/${conns}conns/64B`, engine, "ops/s", Number(m[1]));
    }
  } finally {
    await s.stop();
  }
}

async function packing(engine, steps, size, label) {
  const s = await start(engine);
  try {
    let backlog = 0;
    for (const step of steps) {
      fill(s.port, step, size);
      backlog += step;
      console.log(`${engine} packing ${label}: backlog ${backlog} (server says ${await items(s.port)})`);
      emit(`packing/${label}/${backlog}`, engine, "ops/s", load(s.port, { sets: PACK_OPS, gets: PACK_OPS, size }));
    }
    for (const step of [...steps].reverse().filter((x) => x > 0)) {
      fill(s.port, step, size, "gets");
      backlog -= step;
      console.log(`${engine} packing ${label}: draining, backlog ${backlog} (server says ${await items(s.port)})`);
      emit(`packing/${label}/${backlog}/draining`, engine, "ops/s", load(s.port, { sets: PACK_OPS, gets: PACK_OPS, size }));
    }
  } finally {
    await s.stop();
  }
}

async function rss(engine) {
  const s = await start(engine);
  try {
    for (const n of RSS_STEPS) {
      fill(s.port, n, 1024);
      fill(s.port, n, 1024, "gets");
      emit(`rss/1KiB/${n}`, engine, "kB", rssKb(s.pid));
    }
  } finally {
    await s.stop();
  }
}

const groups = [
  ["flood", flood],
  ["reserve-ack", reserveAckCases],
  ["packing/1KiB", (e) => packing(e, pack1k, 1024, "1KiB")],
  ["packing/64B", (e) => packing(e, pack64, 64, "64B")],
  ["rss", rss],
];
// The queue API in-process (bench/queue/src/bin/queue_inproc.rs): ShaleDB only, no server.
const inproc = join(here, "target", "release", "queue-inproc");
for (const [name, fn] of groups) {
  if (!wanted(name)) continue;
  for (const engine of engineNames) {
    if (!ENGINES[engine]) throw new Error(`unknown engine ${engine}`);
    dropPageCache();
    const t0 = Date.now();
    await fn(engine);
    console.log(`-- ${name} on ${engine}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
}
if (wanted("inproc") && engineNames.includes("shaledb")) {
  dropPageCache();
  const t0 = Date.now();
  execFileSync(inproc, [], { stdio: "inherit", env: { ...env, SHALEDB_BENCH_RUN: run, SHALEDB_BENCH_RESULTS: results } });
  console.log(`-- inproc on shaledb: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
