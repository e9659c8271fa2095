#!/usr/bin/env node
// The replication suite (issue 15): ShaleDB's change feed forwarded to a real NATS JetStream
// server on loopback and applied by follower processes (examples/replication). Per case a fresh
// nats-server and fresh databases (leader and followers are separate Node processes):
//   1. the leader alone writes batches of 100 operations (100-byte values) as fast as it can:
//      its maximum unsynced rate, `leader/batches/max`;
//   2. the leader writes at 50% and at 90% of that rate while it forwards, with 1 and with 3
//      followers: forwarding throughput (`forward/batches|mb/<load>pct/<n>f`, batches/s and
//      MB/s of change encodings confirmed by JetStream; `write/batches/...`: the rate the
//      leader achieved) and the lag from the leader's commit to
//      each follower's apply (`lag/p50|p99/<load>pct/<n>f`, ms, over all followers' samples);
//   3. the leader writes as fast as it can while it forwards, 1 follower: `forward/batches/max/1f`
//      against the leader's own rate in that run (`write/batches/max/1f`);
//   4. the forwarder alone: the leader writes flat out for the same time without forwarding,
//      then forwards that backlog with no follower: `forward/batches|mb/backlog` (how fast
//      JetStream confirmed it) against the leader's rate in that run (`write/batches/backlog`).
//
//   node bench/replication/run.mjs            # ~1-2 minutes
//   REPLICATION_BENCH_SECONDS=4 node bench/replication/run.mjs   # seconds of writing per case (6)
//   REPLICATION_BENCH_ENGINE_THREAD=caller node ...               # the Promise API's engineThread
//   REPLICATION_BENCH_LOADS=10,50 REPLICATION_BENCH_FOLLOWERS=1 node ...   # other cases
//
// Prints one JSON line per figure (suite "replication") and appends them to
// $SHALEDB_BENCH_RESULTS/replication.jsonl (bench/run-replication.sh sets it to bench/results).
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { host } from "../common/machine.mjs";
import { startNatsServer } from "../../examples/replication/src/nats-server.mjs";
import { spawnScript, stop } from "../../examples/replication/src/processes.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.REPLICATION_BENCH_SECONDS ?? 6);
// The Promise API's engine thread of the leader and the followers ("own" or "caller").
const engineThread = process.env.REPLICATION_BENCH_ENGINE_THREAD ?? "own";
const run = process.env.SHALEDB_BENCH_RUN ?? new Date().toISOString().replace(/\.\d+Z$/, "Z");
const machine = host();

function figure(caseName, metric, value) {
  const line = JSON.stringify({ suite: "replication", case: caseName, engine: engineThread === "own" ? "shaledb" : `shaledb-${engineThread}`, metric, value: Math.round(value * 1000) / 1000, run, host: machine });
  console.log(line);
  const dir = process.env.SHALEDB_BENCH_RESULTS;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    appendFileSync(join(dir, "replication.jsonl"), line + "\n");
  }
}

const load = () => {
  try {
    return `load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`;
  } catch {
    return "load average unknown";
  }
};

/** One case: a fresh server and databases; the leader's `done` and the followers' `stopped`. */
async function runCase({ rate, followers }) {
  const dir = mkdtempSync(join(tmpdir(), "shaledb-bench-replication-"));
  const nats = await startNatsServer();
  const procs = [];
  try {
    const fs = Array.from({ length: followers }, (_, i) =>
      spawnScript(join(here, "follower.mjs"), { data: join(dir, `f${i}`), nats: nats.url, durable: `f${i}`, "engine-thread": engineThread }),
    );
    procs.push(...fs);
    for (const f of fs) await f.waitFor("ready");
    const leader = spawnScript(join(here, "leader.mjs"), { data: join(dir, "leader"), nats: nats.url, rate, seconds, "engine-thread": engineThread });
    procs.push(leader);
    const done = await leader.waitFor("done", () => true, (seconds + 90) * 1000);
    await leader.exited;
    for (const f of fs) await f.waitFor("progress", (e) => e.sequence >= done.sequence, 60_000);
    const stopped = [];
    for (const f of fs) stopped.push(await stop(f));
    return { done, stopped };
  } finally {
    for (const p of procs) p.kill("SIGKILL");
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.error(`== leader alone, as fast as it can (${seconds} s; ${load()})`);
const dir = mkdtempSync(join(tmpdir(), "shaledb-bench-replication-"));
const alone = spawnScript(join(here, "leader.mjs"), { data: join(dir, "leader"), mode: "max", seconds, "engine-thread": engineThread });
const max = await alone.waitFor("max", () => true, (seconds + 60) * 1000);
await alone.exited;
rmSync(dir, { recursive: true, force: true });
figure("leader/batches/max", "batches/s", max.batchesPerSec);

// REPLICATION_BENCH_LOADS / _FOLLOWERS pick other cases (e.g. "10,50" and "1" while iterating).
const list = (v, d) => (v ? v.split(",").map(Number) : d);
for (const followers of list(process.env.REPLICATION_BENCH_FOLLOWERS, [1, 3])) {
  for (const pct of list(process.env.REPLICATION_BENCH_LOADS, [50, 90])) {
    const rate = (max.batchesPerSec * pct) / 100;
    console.error(`== ${pct}% load (${rate.toFixed(0)} batches/s), ${followers} follower(s) (${load()})`);
    const { done, stopped } = await runCase({ rate, followers });
    const name = `${pct}pct/${followers}f`;
    // What the leader achieved (the pacing cannot catch up when the machine is saturated).
    figure(`write/batches/${name}`, "batches/s", done.writeBatchesPerSec);
    figure(`forward/batches/${name}`, "batches/s", done.forwardBatchesPerSec);
    figure(`forward/mb/${name}`, "MB/s", done.forwardMBPerSec);
    // Percentiles over every follower's samples: the worst follower's p99 is reported too.
    figure(`lag/p50/${name}`, "ms", Math.max(...stopped.map((s) => s.p50)));
    figure(`lag/p99/${name}`, "ms", Math.max(...stopped.map((s) => s.p99)));
    console.error(`   leader wrote ${done.writeBatchesPerSec.toFixed(0)} batches/s; backlog when writes stopped ${done.backlogAtEnd}; per follower p50/p99/max ms: ${stopped.map((s) => `${s.p50?.toFixed(2)}/${s.p99?.toFixed(2)}/${s.max?.toFixed(1)} (${s.samples})`).join(", ")}`);
    const fmt = (p) => `${p.cores} cores, event loop delay p99/max ${p.loopP99}/${p.loopMax} ms, ${p.gcCount} GCs ${p.gcMs} ms (longest ${p.gcMax})`;
    console.error(`   stalls: leader ${fmt(done.pauses)}; follower 1 ${fmt(stopped[0].pauses)}`);
    const b = stopped[0].breakdown;
    const part = (x) => `${x.p50?.toFixed(2)}/${x.p99?.toFixed(2)}`;
    console.error(`   follower 1's lag in parts, p50/p99 ms: commit to the forwarder's feed ${part(b.feed)}, to JetStream's store ${part(b.store)}, to the follower ${part(b.delivery)}, apply ${part(b.apply)}; ${(stopped[0].pipelineFull * 100).toFixed(1)}% of changes waited for a free apply slot`);
  }
}

console.error(`== leader as fast as it can while it forwards, 1 follower (${load()})`);
const { done } = await runCase({ rate: 0, followers: 1 });
figure("write/batches/max/1f", "batches/s", done.writeBatchesPerSec);
figure("forward/batches/max/1f", "batches/s", done.forwardBatchesPerSec);
figure("forward/mb/max/1f", "MB/s", done.forwardMBPerSec);
console.error(`   backlog when writes stopped: ${done.backlogAtEnd} batches`);

console.error(`== the forwarder alone: a backlog written flat out, then forwarded, no follower (${load()})`);
{
  const dir = mkdtempSync(join(tmpdir(), "shaledb-bench-replication-"));
  const nats = await startNatsServer();
  try {
    const leader = spawnScript(join(here, "leader.mjs"), { data: join(dir, "leader"), nats: nats.url, mode: "backlog", seconds, "engine-thread": engineThread });
    const backlog = await leader.waitFor("backlog", () => true, (seconds + 120) * 1000);
    await leader.exited;
    figure("write/batches/backlog", "batches/s", backlog.writeBatchesPerSec);
    figure("forward/batches/backlog", "batches/s", backlog.forwardBatchesPerSec);
    figure("forward/mb/backlog", "MB/s", backlog.forwardMBPerSec);
    console.error(`   wrote ${backlog.writeBatchesPerSec.toFixed(0)} batches/s; forwarded the backlog at ${backlog.forwardBatchesPerSec.toFixed(0)} batches/s (${backlog.forwardMBPerSec.toFixed(1)} MB/s)`);
  } finally {
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
