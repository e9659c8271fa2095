// The benchmark's follower process: applies the stream (examples/replication/src/follower.mjs)
// and records, for each change applied, the lag from the leader's commit (the message's
// Commit-Time header) to the return of `applyChanges`, in ms, both read from the wall clock of
// the same machine (performance.timeOrigin + performance.now()). Changes committed in the first
// --warmup-ms of the run are not counted. On SIGTERM it prints the percentiles, the lag in parts
// (below), the share of changes that waited for a free apply slot, and the process's stalls
// (./pauses.mjs).
import { connect } from "@nats-io/transport-node";
import { emit, options, stopSignal } from "../../examples/replication/src/cli.mjs";
import { startFollower } from "../../examples/replication/src/follower.mjs";
import { ensureStream } from "../../examples/replication/src/stream.mjs";
import { openDatabase } from "../../examples/replication/src/workload.mjs";
import { recordPauses } from "./pauses.mjs";

const o = options({ data: "", nats: "", durable: "f", "warmup-ms": 1000, "engine-thread": "own" });
const signal = stopSignal();
const nc = await connect({ servers: o.nats });
await ensureStream(nc);
const db = await openDatabase(o.data, { follower: true, engineThread: o["engine-thread"] });
const lags = [];
// The parts of each lag: commit to the forwarder's feed; feed to JetStream's store (the
// message's stream timestamp); store to this process's loop (NATS delivery, and the wait for a
// free apply slot); the apply.
const parts = { feed: [], store: [], delivery: [], apply: [] };
let received = 0;
// Changes taken from the consumer while the follower's pipeline of applies was full: their
// delivery includes waiting for the follower's engine.
let pipelineFull = 0;
let receivedWhileFull = false;
let countFrom = Infinity;
let sequence = 0;
const follower = await startFollower(db, nc, {
  durable: o.durable,
  signal,
  onMessage: (_m, { applying, maxApplies }) => {
    received = performance.timeOrigin + performance.now();
    receivedWhileFull = applying >= maxApplies - 1;
  },
  onApplied: ({ lastSeq, message }) => {
    sequence = lastSeq;
    const at = Number(message.headers?.get("Commit-Time"));
    if (!at) return;
    if (countFrom === Infinity) countFrom = at + o["warmup-ms"];
    if (at < countFrom) return;
    const now = performance.timeOrigin + performance.now();
    const fed = Number(message.headers?.get("Feed-Time"));
    lags.push(now - at);
    parts.feed.push(fed - at);
    const stored = Number(message.info.timestampNanos) / 1e6;
    parts.store.push(stored - fed);
    parts.delivery.push(received - stored);
    parts.apply.push(now - received);
    if (receivedWhileFull) pipelineFull++;
  },
});
emit("ready");
const pauses = recordPauses();
const progress = setInterval(() => emit("progress", { sequence }), 100);
await follower.done;
clearInterval(progress);
const percentile = (xs, p) => {
  if (!xs.length) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const pct = (p) => percentile(lags, p);
const breakdown = Object.fromEntries(Object.entries(parts).map(([k, xs]) => [k, { p50: percentile(xs, 50), p99: percentile(xs, 99) }]));
emit("stopped", { sequence, samples: lags.length, p50: pct(50), p99: pct(99), p999: pct(99.9), max: lags.length ? Math.max(...lags) : null, breakdown, pipelineFull: lags.length ? pipelineFull / lags.length : 0, pauses: pauses.summary() });
await db.close();
await nc.close();
