// The benchmark's follower process: applies the stream (examples/replication/src/follower.mjs)
// and records, for each change applied, the lag from the leader's commit (the message's
// Commit-Time header) to the return of `applyChanges`, in ms, both read from the wall clock of
// the same machine (performance.timeOrigin + performance.now()). Changes committed in the first
// --warmup-ms of the run are not counted. On SIGTERM it prints the percentiles.
import { connect } from "@nats-io/transport-node";
import { emit, options, stopSignal } from "../../examples/replication/src/cli.mjs";
import { startFollower } from "../../examples/replication/src/follower.mjs";
import { ensureStream } from "../../examples/replication/src/stream.mjs";
import { openDatabase } from "../../examples/replication/src/workload.mjs";

const o = options({ data: "", nats: "", durable: "f", "warmup-ms": 1000, "engine-thread": "own" });
const signal = stopSignal();
const nc = await connect({ servers: o.nats });
await ensureStream(nc);
const db = await openDatabase(o.data, { follower: true, engineThread: o["engine-thread"] });
const lags = [];
let countFrom = Infinity;
let sequence = 0;
const follower = await startFollower(db, nc, {
  durable: o.durable,
  signal,
  onApplied: ({ lastSeq, message }) => {
    sequence = lastSeq;
    const at = Number(message.headers?.get("Commit-Time"));
    if (!at) return;
    if (countFrom === Infinity) countFrom = at + o["warmup-ms"];
    if (at >= countFrom) lags.push(performance.timeOrigin + performance.now() - at);
  },
});
emit("ready");
const progress = setInterval(() => emit("progress", { sequence }), 100);
await follower.done;
clearInterval(progress);
lags.sort((a, b) => a - b);
const pct = (p) => (lags.length ? lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))] : null);
emit("stopped", { sequence, samples: lags.length, p50: pct(50), p99: pct(99), p999: pct(99.9), max: lags.at(-1) ?? null });
await db.close();
await nc.close();
