// The workloads of the suite "browser", written once over the adapter interface
// (engines/index.js), so every engine runs the same operations on the same bytes. They run in
// the bench page (and, for sqlite-wasm-direct, inside SQLite's worker). Every operation is
// awaited before the next starts.
//
// Per value size (100B, 1KiB), 16-byte keys (harness.js):
//   put/single/<size>     N_SINGLE single puts, every key once, in random order, fresh db.  ops/s
//   put/batch100/<size>   N puts in random key order, atomic batches of 100, fresh db.      ops/s (puts)
//   put/batch1000/<size>  the same in batches of 1,000; this database is then closed,
//                         reopened and left idle SETTLE_MS for the read cases.              ops/s (puts)
//   get/random/<size>     GETS gets of random existing keys (each must return its value).   ops/s, us/op
//   scan/1000/<size>      SCANS reads of 1,000 entries (key and value) from a random
//                         existing key on.                                                  ops/s (scans), entries/s
//   put/sync/100B         SYNC_OPS single durable puts of random keys, fresh db opened for
//                         sync (ShaleDB { sync: true }, IndexedDB "strict", SQLite FULL).  ops/s
// and once per engine (prepareOpen + measureOpens, in two page loads):
//   open/100k/100B        open() of a closed database holding OPEN_N entries of 100 B, until
//                         it resolves (worker start and wasm compile included). ms (median
//                         of the opens after the first), ms/cold (the first open in a freshly
//                         loaded page), ms/first-get (median time of one get right after open)
// Timing runs from the first operation to the settlement of the last; opening, closing and
// preparing keys are not timed (except in open/).
import { SCAN_LEN, SEED, Rng, makeKeys, makeValues, permutation, sleep } from "./harness.js";

const now = () => performance.now();

/**
 * @typedef {object} Config
 * @property {string} size          value size name ("100B" or "1KiB")
 * @property {number} valueSize     value size in bytes
 * @property {number} nSingle       entries of put/single
 * @property {number} n             entries of the batch cases and of the read database
 * @property {number} gets          timed random gets
 * @property {number} scans         timed scans of SCAN_LEN entries
 * @property {number} syncOps       timed synced puts (put/sync, 100B only)
 * @property {number} cacheBytes    block cache / page cache budget
 * @property {number} memtableBytes memtable size (ShaleDB)
 * @property {number} settleMs      idle time after reopening, before the read cases
 * @property {string[]} filters     case filters (substring match); empty runs every case
 * @property {string} prefix        prefix of database names
 */

const enabled = (cfg, name) => cfg.filters.length === 0 || cfg.filters.some((f) => name.includes(f));

/** Keys and values standing alone: each its own ArrayBuffer (a view into a large buffer would be
 *  structured-cloned whole by IndexedDB and postMessage). */
function data(n, valueSize) {
  const keys = makeKeys(n).map((k) => k.slice());
  const values = makeValues(valueSize, SEED.values).map((v) => v.slice());
  return { keys, values };
}

/**
 * Runs every enabled case of one size on one engine. A failing case (an engine error, an API the
 * engine lacks) logs one line and ends that case only.
 * @param {import("./engines/index.js").Adapter} a
 * @param {Config} cfg
 * @param {(figure: { case: string, engine: string, metric: string, value: number }) => void} emit
 * @param {(line: string) => void} log
 */
export async function runWorkload(a, cfg, emit, log) {
  const { n, size } = cfg;
  const nSingle = Math.min(cfg.nSingle, n);
  const { keys, values } = data(n, cfg.valueSize);
  const random = permutation(n, SEED.order);
  const name = (op) => `${op}/${size}`;
  const openOpts = { sync: false, cacheBytes: cfg.cacheBytes, memtableBytes: cfg.memtableBytes };
  const put = (c, engine, metric, value) => emit({ case: c, engine, metric, value });
  log(
    `== ${a.name} ${size} (N_SINGLE=${nSingle}, N=${n}, GETS=${cfg.gets}, SCANS=${cfg.scans}x${SCAN_LEN}, ` +
      `SYNC=${cfg.syncOps}, cache ${cfg.cacheBytes >> 20} MiB, memtable ${cfg.memtableBytes >> 20} MiB)`,
  );

  /** A fresh database for `body`, removed afterwards whatever happens. */
  const withDb = async (caseName, options, body) => {
    const db = `${cfg.prefix}-${caseName.replace(/[^A-Za-z0-9]+/g, "-")}`;
    let open = false;
    try {
      await a.destroy(db);
      await a.open(db, options);
      open = true;
      await body(db);
      open = false;
      await a.close();
    } catch (err) {
      log(`${a.name}: ${caseName}: not available (${err?.message ?? err})`);
      if (open) await a.close().catch(() => {});
    } finally {
      await a.destroy(db).catch((err) => log(`${a.name}: removing ${db}: ${err?.message ?? err}`));
    }
  };

  if (enabled(cfg, name("put/single"))) {
    const order = permutation(nSingle, SEED.order);
    await withDb(name("put/single"), openOpts, async () => {
      const ms = await putSingles(a, keys, values, order, nSingle);
      put(name("put/single"), a.name, "ops/s", (nSingle * 1000) / ms);
    });
  }

  if (enabled(cfg, name("put/batch100"))) {
    await withDb(name("put/batch100"), openOpts, async () => {
      const t = now();
      await putBatches(a, keys, values, random, n, 100);
      put(name("put/batch100"), a.name, "ops/s", (n * 1000) / (now() - t));
    });
  }

  const reads = ["get/random", "scan/1000"].some((op) => enabled(cfg, name(op)));
  if (enabled(cfg, name("put/batch1000")) || reads) {
    await withDb(name("put/batch1000"), openOpts, async (db) => {
      const t = now();
      await putBatches(a, keys, values, random, n, 1000);
      const ms = now() - t;
      if (enabled(cfg, name("put/batch1000"))) put(name("put/batch1000"), a.name, "ops/s", (n * 1000) / ms);
      if (!reads) return;
      // The same state for every engine before reading: closed, reopened, then idle for a while
      // (ShaleDB's and IndexedDB's background work gets its chance).
      await a.close();
      await a.open(db, openOpts);
      await sleep(cfg.settleMs);
      if (enabled(cfg, name("get/random"))) await timedGets(a, keys, cfg, name("get/random"), put);
      if (enabled(cfg, name("scan/1000"))) {
        if (a.scan) await timedScans(a, keys, cfg, name("scan/1000"), put);
        else log(`${a.name}: ${name("scan/1000")}: not available (no range reads)`);
      }
    });
  }

  if (cfg.size === "100B" && enabled(cfg, name("put/sync"))) {
    if (!a.syncWrites) {
      log(`${a.name}: ${name("put/sync")}: not measured (no durable-write mode of its own)`);
    } else {
      const m = Math.min(cfg.syncOps, n);
      await withDb(name("put/sync"), { ...openOpts, sync: true }, async () => {
        const W = values.length;
        const t = now();
        for (let j = 0; j < m; j++) await a.put(keys[random[j]], values[j % W]);
        put(name("put/sync"), a.name, "ops/s", (m * 1000) / (now() - t));
      });
    }
  }
}

/** Puts keys[order[j]] = values[j mod W] for j in 0..n, each awaited; returns the ms taken. */
async function putSingles(a, keys, values, order, n) {
  const W = values.length;
  const t = now();
  for (let j = 0; j < n; j++) await a.put(keys[order[j]], values[j % W]);
  return now() - t;
}

/** The same puts in atomic batches of `size` (a fresh entries array per batch: an engine may
 *  keep it until its Promise settles). */
async function putBatches(a, keys, values, order, n, size) {
  const W = values.length;
  for (let j = 0; j < n; j += size) {
    const m = Math.min(size, n - j);
    const entries = new Array(m);
    for (let i = 0; i < m; i++) entries[i] = [keys[order[j + i]], values[(j + i) % W]];
    await a.putBatch(entries);
  }
}

/** GETS gets of random existing keys; every one must find its value. */
async function timedGets(a, keys, cfg, caseName, put) {
  const g = cfg.gets;
  const rng = new Rng(SEED.gets);
  const which = new Uint32Array(g);
  for (let i = 0; i < g; i++) which[i] = rng.below(cfg.n);
  let bytes = 0;
  const t = now();
  for (let i = 0; i < g; i++) {
    const v = await a.get(keys[which[i]]);
    if (v !== undefined) bytes += v.length;
  }
  const ms = now() - t;
  if (bytes !== g * cfg.valueSize) {
    throw new Error(`${caseName}: read ${bytes} value bytes, expected ${g * cfg.valueSize}`);
  }
  put(caseName, a.name, "ops/s", (g * 1000) / ms);
  put(caseName, a.name, "us/op", (ms * 1000) / g);
}

/** SCANS scans of SCAN_LEN entries from random existing keys; each must read all of them. */
async function timedScans(a, keys, cfg, caseName, put) {
  const s = cfg.scans;
  const len = Math.min(SCAN_LEN, cfg.n);
  const rng = new Rng(SEED.scans);
  const starts = new Uint32Array(s);
  for (let i = 0; i < s; i++) starts[i] = rng.below(cfg.n - len + 1);
  let entries = 0;
  const t = now();
  for (let i = 0; i < s; i++) entries += await a.scan(keys[starts[i]], len);
  const ms = now() - t;
  if (entries !== s * len) throw new Error(`${caseName}: read ${entries} entries, expected ${s * len}`);
  put(caseName, a.name, "ops/s", (s * 1000) / ms);
  put(caseName, a.name, "entries/s", (entries * 1000) / ms);
}

// --- open/100k/100B -------------------------------------------------------------------------

/** The database of the open case: OPEN_N entries of 100 B, loaded in batches of 1,000, closed. */
export async function prepareOpen(a, cfg, log) {
  const { keys, values } = data(cfg.openN, 100);
  const db = `${cfg.prefix}-open`;
  await a.destroy(db);
  await a.open(db, { sync: false, cacheBytes: cfg.cacheBytes, memtableBytes: cfg.memtableBytes });
  const t = now();
  await putBatches(a, keys, values, permutation(cfg.openN, SEED.order), cfg.openN, 1000);
  log(`${a.name}: open/: loaded ${cfg.openN} entries in ${(now() - t).toFixed(0)} ms`);
  await a.close();
}

/**
 * OPENS opens of that database (each followed by one timed get and a close), the first one in
 * this freshly loaded page; then the database is removed.
 */
export async function measureOpens(a, cfg, emit, log) {
  const { keys } = data(cfg.openN, 100);
  const db = `${cfg.prefix}-open`;
  const c = `open/${Math.round(cfg.openN / 1000)}k/100B`;
  const opts = { sync: false, cacheBytes: cfg.cacheBytes, memtableBytes: cfg.memtableBytes };
  const opens = [];
  const gets = [];
  const rng = new Rng(SEED.gets);
  try {
    for (let i = 0; i < cfg.opens; i++) {
      const t = now();
      await a.open(db, opts);
      opens.push(now() - t);
      const t2 = now();
      const v = await a.get(keys[rng.below(cfg.openN)]);
      gets.push(now() - t2);
      await a.close();
      if (v?.length !== 100) throw new Error(`${c}: the database is missing its entries`);
      await sleep(50);
    }
  } finally {
    await a.destroy(db).catch((err) => log(`${a.name}: removing ${db}: ${err?.message ?? err}`));
  }
  log(`${a.name}: ${c}: opens ${opens.map((x) => x.toFixed(1)).join(", ")} ms; first gets ${gets.map((x) => x.toFixed(1)).join(", ")} ms`);
  const warm = opens.length > 1 ? opens.slice(1) : opens;
  emit({ case: c, engine: a.name, metric: "ms", value: median(warm) });
  emit({ case: c, engine: a.name, metric: "ms/cold", value: opens[0] });
  emit({ case: c, engine: a.name, metric: "ms/first-get", value: median(gets) });
}

function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
