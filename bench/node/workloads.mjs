// The workloads of the suite "node", written once over the adapter interface
// (engines/index.mjs) so every engine runs exactly the same operations on the same bytes. The
// native program bench/native/src/bin/node_workloads.rs mirrors them on shaledb::Db.
//
// Per value size (100B, 1KiB), with N entries, 16-byte keys (harness.mjs):
//   put/seq/<size>        N single puts in key order into a fresh database.            ops/s
//   put/random/<size>     N single puts, every key once, in random order, fresh db.    ops/s
//   get/random/<size>     on the put/random database, closed, reopened and left idle
//                         NODE_BENCH_SETTLE_MS: GETS gets of random existing keys.      ops/s, us/op
//   get/random-<way>/<size>  the same through another API of the engine (classic-level's
//                         Promise `get`).                                               ops/s, us/op
//   scan/1000/<size>      on the same database: SCANS times, read 1,000 entries (key and
//                         value) from a random existing key on.                         scans/s as ops/s
//   put/batch100/<size>   N puts in random key order, in atomic batches of 100, fresh db. ops/s (puts)
//   put/batch1000/<size>  the same in batches of 1,000.                                ops/s (puts)
//   put/sync/<size>       SYNC_OPS single durable puts of random keys into a fresh
//                         database opened for sync.                                    ops/s
//   eventloop/p99-while-writing/<size>  engines with a Promise API and compact() only: the
//                         event loop's delay while WRITERS concurrent writers put N entries in
//                         random order into a fresh database (each yielding to the event loop
//                         after every put, as writes that arrive from I/O do), flushes and
//                         compactions run, and one compact() of the whole key range starts half
//                         way: perf_hooks.monitorEventLoopDelay at 1 ms resolution.   ms (p99), ms/max,
//                                                                                      ops/s (the load's puts)
// Every figure is timed from the first operation to the return of the last one (opening and
// closing are not timed); writes are not synced except in put/sync.
import { monitorEventLoopDelay } from "node:perf_hooks";

import {
  SCAN_LEN,
  SEED,
  Rng,
  emit,
  enabled,
  makeKeys,
  makeValues,
  permutation,
  removeDir,
  scratchDir,
  sleep,
} from "./harness.mjs";

const now = () => performance.now();
const gc = () => globalThis.gc?.();

/**
 * Runs every enabled case of one size on one engine. A failing case (an engine error, or an API
 * not there yet) prints one line and ends that case only.
 * @param {import("./engines/index.mjs").Adapter} a
 * @param {import("./harness.mjs").Config} cfg
 */
export async function runSize(a, cfg) {
  const { n, size } = cfg;
  const keys = makeKeys(n);
  const values = makeValues(cfg.valueSize, SEED.values);
  const random = permutation(n, SEED.order);
  const sequential = new Uint32Array(n);
  for (let i = 0; i < n; i++) sequential[i] = i;
  const name = (op) => `${op}/${size}`;
  const openOpts = { sync: false, cacheBytes: cfg.cacheBytes, memtableBytes: cfg.memtableBytes };
  console.log(
    `== ${a.name} ${size} (N=${n}, GETS=${cfg.gets}, SCANS=${cfg.scans}x${SCAN_LEN}, SYNC=${cfg.syncOps}, ` +
      `cache ${cfg.cacheBytes >> 20} MiB, memtable ${cfg.memtableBytes >> 20} MiB)`,
  );

  /** A fresh database for `body`, removed afterwards whatever happens. */
  const withDb = async (caseName, options, body) => {
    const dir = scratchDir(a.name);
    let open = false;
    try {
      await a.open(dir, options);
      open = true;
      await body(dir);
      open = false;
      await a.close();
    } catch (err) {
      console.log(`${a.name}: ${caseName}: not available (${err?.message ?? err})`);
      if (open) await a.close().catch(() => {});
    } finally {
      removeDir(dir);
    }
  };

  const timedPuts = async (caseName, order) => {
    gc();
    const t = now();
    await putSingles(a, keys, values, order, n);
    const ms = now() - t;
    emit(caseName, a.name, "ops/s", (n * 1000) / ms);
  };

  if (enabled(cfg, name("put/seq"))) {
    await withDb(name("put/seq"), openOpts, () => timedPuts(name("put/seq"), sequential));
  }

  const reads = ["get/random", "scan/1000"].some((op) => enabled(cfg, name(op))) ||
    Object.keys(a.extraGets ?? {}).some((way) => enabled(cfg, name(`get/random-${way}`)));
  if (enabled(cfg, name("put/random")) || reads) {
    await withDb(name("put/random"), openOpts, async (dir) => {
      if (enabled(cfg, name("put/random"))) {
        await timedPuts(name("put/random"), random);
      } else {
        await putBatches(a, keys, values, random, n, 1000);
      }
      if (!reads) return;
      // The same state for every engine before reading: closed, reopened, then idle for a while
      // (LevelDB compacts on its own thread meanwhile; ShaleDB's auto-maintenance runs when the
      // event loop is idle).
      await a.close();
      await a.open(dir, openOpts);
      await sleep(cfg.settleMs);
      if (enabled(cfg, name("get/random"))) {
        await timedGets(a, keys, cfg, name("get/random"), a.get, a.async.get);
      }
      for (const [way, fn] of Object.entries(a.extraGets ?? {})) {
        if (enabled(cfg, name(`get/random-${way}`))) {
          await timedGets(a, keys, cfg, name(`get/random-${way}`), fn, true);
        }
      }
      if (enabled(cfg, name("scan/1000"))) await timedScans(a, keys, cfg, name("scan/1000"));
    });
  }

  for (const b of [100, 1000]) {
    const c = name(`put/batch${b}`);
    if (!enabled(cfg, c)) continue;
    await withDb(c, openOpts, async () => {
      gc();
      const t = now();
      await putBatches(a, keys, values, random, n, b);
      const ms = now() - t;
      emit(c, a.name, "ops/s", (n * 1000) / ms);
    });
  }

  const loop = name("eventloop/p99-while-writing");
  if (enabled(cfg, loop) && a.async.put && typeof a.compact === "function") {
    await withDb(loop, openOpts, () => eventLoopWhileWriting(a, keys, values, random, n, loop));
  }

  if (enabled(cfg, name("put/sync"))) {
    const c = name("put/sync");
    const m = Math.min(cfg.syncOps, n);
    await withDb(c, { ...openOpts, sync: true }, async () => {
      const W = values.length;
      gc();
      const t = now();
      if (a.async.sync) {
        for (let j = 0; j < m; j++) await a.syncedPut(keys[random[j]], values[j % W]);
      } else {
        for (let j = 0; j < m; j++) a.syncedPut(keys[random[j]], values[j % W]);
      }
      const ms = now() - t;
      emit(c, a.name, "ops/s", (m * 1000) / ms);
    });
  }
}

/** Puts keys[order[j]] = values[j mod W] for j in 0..n, one call per put. */
async function putSingles(a, keys, values, order, n) {
  const W = values.length;
  if (a.async.put) {
    for (let j = 0; j < n; j++) await a.putSingle(keys[order[j]], values[j % W]);
  } else {
    for (let j = 0; j < n; j++) a.putSingle(keys[order[j]], values[j % W]);
  }
}

/** The same puts in atomic batches of `size` (the entries array is reused between batches). */
async function putBatches(a, keys, values, order, n, size) {
  const W = values.length;
  /** @type {[Buffer, Buffer][]} */
  const full = Array.from({ length: size }, () => [keys[0], values[0]]);
  for (let j = 0; j < n; j += size) {
    const m = Math.min(size, n - j);
    const entries = m === size ? full : full.slice(0, m);
    for (let i = 0; i < m; i++) {
      entries[i][0] = keys[order[j + i]];
      entries[i][1] = values[(j + i) % W];
    }
    if (a.async.batch) await a.putBatch(entries);
    else a.putBatch(entries);
  }
}

/** GETS gets of random existing keys through `get`; every one must find its value. */
async function timedGets(a, keys, cfg, caseName, get, isAsync) {
  const g = cfg.gets;
  const rng = new Rng(SEED.gets);
  const which = new Uint32Array(g);
  for (let i = 0; i < g; i++) which[i] = rng.below(cfg.n);
  let bytes = 0;
  gc();
  const t = now();
  if (isAsync) {
    for (let i = 0; i < g; i++) {
      const v = await get(keys[which[i]]);
      if (v !== undefined) bytes += v.length;
    }
  } else {
    for (let i = 0; i < g; i++) {
      const v = get(keys[which[i]]);
      if (v !== undefined) bytes += v.length;
    }
  }
  const ms = now() - t;
  if (bytes !== g * cfg.valueSize) {
    throw new Error(`${caseName}: read ${bytes} value bytes, expected ${g * cfg.valueSize}`);
  }
  emit(caseName, a.name, "ops/s", (g * 1000) / ms);
  emit(caseName, a.name, "us/op", (ms * 1000) / g);
}

/** SCANS scans of SCAN_LEN entries from random existing keys; each must read all of them. */
async function timedScans(a, keys, cfg, caseName) {
  const s = cfg.scans;
  const len = Math.min(SCAN_LEN, cfg.n);
  const rng = new Rng(SEED.scans);
  const starts = new Uint32Array(s);
  for (let i = 0; i < s; i++) starts[i] = rng.below(cfg.n - len + 1);
  let entries = 0;
  gc();
  const t = now();
  if (a.async.scan) {
    for (let i = 0; i < s; i++) entries += await a.scan(keys[starts[i]], len);
  } else {
    for (let i = 0; i < s; i++) entries += a.scan(keys[starts[i]], len);
  }
  const ms = now() - t;
  if (entries !== s * len) throw new Error(`${caseName}: read ${entries} entries, expected ${s * len}`);
  emit(caseName, a.name, "ops/s", (s * 1000) / ms);
}

/** Writers of the event-loop case, each awaiting its puts one at a time. */
const WRITERS = 4;

/**
 * The event loop's delay while WRITERS writers put keys[order[j]] for j in 0..n (each yielding
 * to the event loop after every put) and one compact() of everything runs from the middle of the
 * load on. Emits the delay's 99th percentile and maximum (ms) and the load's puts per second.
 */
async function eventLoopWhileWriting(a, keys, values, order, n, caseName) {
  const W = values.length;
  const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));
  let next = 0;
  let compaction;
  const writer = async () => {
    for (let j = next++; j < n; j = next++) {
      await a.putSingle(keys[order[j]], values[j % W]);
      if (j === n >> 1) compaction = a.compact();
      await yieldToLoop();
    }
  };
  gc();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const t = now();
  await Promise.all(Array.from({ length: WRITERS }, writer));
  await compaction;
  const ms = now() - t;
  histogram.disable();
  emit(caseName, a.name, "ms", histogram.percentile(99) / 1e6);
  emit(caseName, a.name, "ms/max", histogram.max / 1e6);
  emit(caseName, a.name, "ops/s", (n * 1000) / ms);
}
