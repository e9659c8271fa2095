#!/usr/bin/env node
// Live queries in Node (issue 28): how soon `db.watch()`'s listener hears of a commit, and what a
// watcher costs writes that do not concern it. Through the synchronous API (`openSync`) and the
// Promise API (engine in the caller's thread, the default, and in its own worker thread).
//
//   node bench/node/watch-latency.mjs [FILTER...]
//
// Cases (suite "watch", engine "shaledb-node"):
// - `watch/latency/<api>`: one put every ~0.5 ms into the watched prefix; the time from just
//   before the put call (the commit happens inside it) to the listener's call, in µs
//   (p50/p99/p999/max; WATCH_BENCH_N samples, default 5,000).
// - `watch/unrelated-puts/<api>/<watchers>`: puts/s of awaited single puts outside the watched
//   prefix, with no watcher, one and ten: what watchers cost writes they never hear of.
// Prints one JSON line per figure; appends to $SHALEDB_BENCH_RESULTS/watch.jsonl when set.
import { performance } from "node:perf_hooks";

import { removeDir, scratchDir, suiteEmitter } from "./harness.mjs";

const shaledb = await import("shaledb");
const N = Number(process.env.WATCH_BENCH_N ?? 5_000);
const filters = process.argv.slice(2);
const selected = (name) => filters.length === 0 || filters.some((f) => name.includes(f));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const emit = suiteEmitter("watch", "shaledb-node");

const APIS = {
  sync: (dir) => shaledb.openSync(dir),
  caller: (dir) => shaledb.open(dir, { engineThread: "caller" }),
  worker: (dir) => shaledb.open(dir, { engineThread: "own" }),
};

/** Latency percentile `p` (0..1) of sorted `xs`. */
const percentile = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];

async function withDb(api, body) {
  const dir = scratchDir("watch");
  const db = await APIS[api](dir);
  try {
    return await body(db);
  } finally {
    await db.close();
    removeDir(dir);
  }
}

async function latency(api) {
  const name = `watch/latency/${api}`;
  if (!selected(name)) return;
  const samples = await withDb(api, async (db) => {
    const out = [];
    let sentAt = 0;
    let heard;
    const unsubscribe = db.watch({ prefix: "w:" }, () => {
      out.push((performance.now() - sentAt) * 1000);
      heard?.();
    });
    await sleep(20);
    const value = "v".repeat(100);
    for (let i = 0; i < N; i++) {
      const delivered = new Promise((resolve) => (heard = resolve));
      sentAt = performance.now();
      await db.put(`w:${i}`, value);
      await delivered;
      // Paced: a commit every ~0.5 ms at most, so each is heard alone.
      if (i % 2 === 1) await sleep(1);
    }
    unsubscribe();
    return out;
  });
  samples.sort((a, b) => a - b);
  for (const [label, p] of [["p50", 0.5], ["p99", 0.99], ["p999", 0.999]]) {
    emit(`${name}/${label}`, "us", percentile(samples, p));
  }
  emit(`${name}/max`, "us", samples.at(-1));
}

async function unrelatedPuts(api, watchers) {
  const name = `watch/unrelated-puts/${api}/${watchers}`;
  if (!selected(name)) return;
  const rate = await withDb(api, async (db) => {
    let heard = 0;
    const stops = Array.from({ length: watchers }, () => db.watch({ prefix: "watched:" }, () => heard++));
    const value = "v".repeat(100);
    const n = N * 4;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await db.put(`other:${i}`, value);
    const seconds = (performance.now() - t0) / 1000;
    for (const stop of stops) stop();
    if (heard !== 0) throw new Error(`a watcher heard ${heard} unrelated writes`);
    return n / seconds;
  });
  emit(name, "ops/s", rate);
}

for (const api of Object.keys(APIS)) {
  await latency(api);
  await unrelatedPuts(api, 0);
  await unrelatedPuts(api, 1);
  await unrelatedPuts(api, 10);
}
