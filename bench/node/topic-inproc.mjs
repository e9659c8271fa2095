#!/usr/bin/env node
// In-process topic logs of ShaleDB's npm package in Node (issue 14's `inproc/node...` cases):
// appends one at a time and in batches of 100, a subscription reading a backlog through, and
// end-to-end latency (append to a subscriber's loop) with the publisher throttled to 50% of its
// measured maximum, through the synchronous API (`openSync`) and the Promise API (`open`:
// engine in its worker thread, and in the caller's thread). Values of 100 bytes, on the file
// system.
//
//   node bench/node/topic-inproc.mjs [FILTER...]
//
// Prints one JSON line per figure (suite "topic"; metrics "records/s", and "us" for latency
// percentiles) and appends it to $SHALEDB_BENCH_RESULTS/topic.jsonl when that variable is set.
// TOPIC_BENCH_N sets the records per case (default 200,000; single-record cases a tenth).
import { performance } from "node:perf_hooks";

import { removeDir, scratchDir, suiteEmitter } from "./harness.mjs";

const shaledb = await import("shaledb");
const N = Number(process.env.TOPIC_BENCH_N ?? 200_000);
const BATCH = 100;
const filters = process.argv.slice(2);
const value = new Uint8Array(100).fill(7);
const values = Array.from({ length: BATCH }, () => value);

const emit = suiteEmitter("topic", "shaledb-node");

const selected = (name) => filters.length === 0 || filters.some((f) => name.includes(f));

/** Runs `body(db, topic)` on a fresh database opened by `openDb`. */
async function withTopic(openDb, body) {
  const dir = scratchDir("topic");
  const db = await openDb(dir);
  try {
    const t = await db.topic("bench", { valueEncoding: "binary" });
    return await body(db, t);
  } finally {
    await db.close();
    removeDir(dir);
  }
}

/**
 * Times `body(t, n)` (after `prepare(t, n + 1000)`, untimed, and a warm-up of 1,000); emits
 * records/s.
 */
async function run(name, n, openDb, body, prepare = () => undefined) {
  if (!selected(name)) return;
  await withTopic(openDb, async (_db, t) => {
    await prepare(t, n + 1000);
    await body(t, 1000); // warm-up
    const t0 = process.hrtime.bigint();
    await body(t, n);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    emit(name, "records/s", n / seconds);
  });
}

const syncApi = (dir) => shaledb.openSync(dir, { valueEncoding: "binary" });
const promiseApi = (engineThread) => (dir) => shaledb.open(dir, { valueEncoding: "binary", engineThread });

const fill = async (t, n) => {
  for (let i = 0; i < n; i += BATCH) await t.appendMany(values);
};

// The synchronous API.
await run("inproc/node-sync/append/single", N / 10, syncApi, (t, n) => {
  for (let i = 0; i < n; i++) t.append(value);
});
await run("inproc/node-sync/append/batch100", N, syncApi, (t, n) => {
  for (let i = 0; i < n; i += BATCH) t.appendMany(values);
});
{
  // Read-through: the subscription from where the backlog starts, to its end.
  let from = 0;
  await run(
    "inproc/node-sync/subscribe/read-through",
    N,
    syncApi,
    (t, n) => {
      let seen = 0;
      for (const r of t.subscribe({ from, chunk: 1000 })) {
        if (++seen === n) break;
      }
      from += n;
    },
    fill,
  );
}

/** Latency percentile `p` (0..1) of sorted `xs`. */
const percentile = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];

/**
 * End to end: a subscriber loop and a publisher appending one record at a time (its value
 * carries the send time), throttled to `rate` records/s (paced on setImmediate: timers cannot
 * wait less than 1 ms); returns the sorted latencies in µs.
 */
async function endToEnd(t, n, rate) {
  const latencies = [];
  const start = (await t.stats()).next;
  const it = t.subscribe({ from: start, chunk: 1000 });
  const reading = (async () => {
    for await (const r of it) {
      const sent = new DataView(r.value.buffer, r.value.byteOffset, 8).getFloat64(0, true);
      latencies.push((performance.now() - sent) * 1000);
      if (latencies.length === n) break;
    }
  })();
  const payload = new Uint8Array(100);
  const view = new DataView(payload.buffer);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const due = t0 + (i * 1000) / rate;
    while (performance.now() < due) await new Promise((resolve) => setImmediate(resolve));
    view.setFloat64(0, performance.now(), true);
    await t.append(payload);
  }
  await reading;
  return latencies.sort((a, b) => a - b);
}

// The Promise API, every call awaited in turn.
for (const [thread, label] of [
  ["own", "node-promise"],
  ["caller", "node-promise-caller"],
]) {
  await run(`inproc/${label}/append/single`, N / 10, promiseApi(thread), async (t, n) => {
    for (let i = 0; i < n; i++) await t.append(value);
  });
  await run(`inproc/${label}/append/batch100`, N, promiseApi(thread), fill);
  let from = 0;
  await run(
    `inproc/${label}/subscribe/read-through`,
    N,
    promiseApi(thread),
    async (t, n) => {
      let seen = 0;
      for await (const r of t.subscribe({ from, chunk: 1000 })) {
        if (++seen === n) break;
      }
      from += n;
    },
    fill,
  );
  const name = `inproc/${label}/EndToEndLatency/50%load`;
  if (selected(name)) {
    await withTopic(promiseApi(thread), async (_db, t) => {
      // The publisher's maximum: single appends, flat out, with the subscriber reading.
      const m = N / 20;
      await endToEnd(t, 1000, Infinity); // warm-up
      const t0 = performance.now();
      await endToEnd(t, m, Infinity);
      const max = (m * 1000) / (performance.now() - t0);
      const rate = max / 2;
      const latencies = await endToEnd(t, Math.round(Math.min(m, rate * 5)), rate);
      emit(name, "records/s", rate);
      emit(`${name}/p50`, "us", percentile(latencies, 0.5));
      emit(`${name}/p99`, "us", percentile(latencies, 0.99));
      emit(`${name}/p999`, "us", percentile(latencies, 0.999));
    });
  }
}
