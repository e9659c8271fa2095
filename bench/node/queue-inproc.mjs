#!/usr/bin/env node
// In-process queue throughput of ShaleDB's npm package in Node (issue 13's `inproc/...` cases):
// push, take, and the reliable-read cycle push + reserve + ack, in batches of 100 and one at a
// time, through the synchronous API (`openSync`) and the Promise API (`open`: engine in its
// worker thread, and in the caller's thread). Values of 100 bytes, on the file system.
//
//   node bench/node/queue-inproc.mjs [FILTER...]
//
// Prints one JSON line per figure (suite "queue", metric "items/s": items through the whole
// cycle per second) and appends it to $SHALEDB_BENCH_RESULTS/queue.jsonl when that variable is
// set (nothing is appended to bench/results otherwise: bench/queue owns that file's runs).
// QUEUE_BENCH_N sets the items per case (default 200,000; single-item cases a tenth).

import { removeDir, scratchDir, suiteEmitter } from "./harness.mjs";

const shaledb = await import("shaledb");
const N = Number(process.env.QUEUE_BENCH_N ?? 200_000);
const BATCH = 100;
const filters = process.argv.slice(2);
const value = new Uint8Array(100).fill(7);
const values = Array.from({ length: BATCH }, () => value);

const emitFigure = suiteEmitter("queue", "shaledb");
const emit = (caseName, itemsPerSecond) => emitFigure(caseName, "items/s", itemsPerSecond);

const selected = (name) => filters.length === 0 || filters.some((f) => name.includes(f));

/**
 * Times `body(q, n)` on a fresh database opened by `openDb` (after `prepare(q, items)`, untimed,
 * and a warm-up of 1,000 items); emits n / seconds.
 */
async function run(name, n, openDb, body, prepare = () => undefined) {
  if (!selected(name)) return;
  const dir = scratchDir("queue");
  const db = await openDb(dir);
  try {
    const q = await db.queue("bench", { valueEncoding: "binary" });
    await prepare(q, n + 1000);
    await body(q, 1000); // warm-up
    const t0 = process.hrtime.bigint();
    await body(q, n);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    emit(name, n / seconds);
  } finally {
    await db.close();
    removeDir(dir);
  }
}

const syncApi = (dir) => shaledb.openSync(dir, { valueEncoding: "binary" });
const promiseApi = (engineThread) => (dir) => shaledb.open(dir, { valueEncoding: "binary", engineThread });

// The synchronous API.
await run("inproc/node-sync/push/batch100", N, syncApi, (q, n) => {
  for (let i = 0; i < n; i += BATCH) q.pushMany(values);
});
await run(
  "inproc/node-sync/take/batch100",
  N,
  syncApi,
  (q, n) => {
    for (let taken = 0; taken < n; ) taken += q.takeMany(BATCH).length;
  },
  (q, n) => {
    for (let i = 0; i < n; i += BATCH) q.pushMany(values);
  },
);
await run("inproc/node-sync/push-reserve-ack/batch100", N, syncApi, (q, n) => {
  for (let i = 0; i < n; i += BATCH) {
    q.pushMany(values);
    q.ackMany(q.reserveMany(BATCH));
  }
});
await run("inproc/node-sync/push-reserve-ack/single", N / 10, syncApi, (q, n) => {
  for (let i = 0; i < n; i++) {
    q.push(value);
    q.ack(q.reserve());
  }
});

// The Promise API, every call awaited in turn (one round trip per batch).
for (const [thread, label] of [
  ["own", "node-promise"],
  ["caller", "node-promise-caller"],
]) {
  await run(`inproc/${label}/push-reserve-ack/batch100`, N, promiseApi(thread), async (q, n) => {
    for (let i = 0; i < n; i += BATCH) {
      await q.pushMany(values);
      await q.ackMany(await q.reserveMany(BATCH));
    }
  });
  await run(`inproc/${label}/push-reserve-ack/single`, N / 10, promiseApi(thread), async (q, n) => {
    for (let i = 0; i < n; i++) {
      await q.push(value);
      await q.ack(await q.reserve());
    }
  });
}
