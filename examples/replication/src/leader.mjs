// The leader process: opens (or creates) the database at --data, forwards its change feed to
// JetStream (forwarder.mjs), writes --batches batches of --size operations (workload.mjs) at
// --rate batches/s (0: as fast as it can), numbered from --from (workload.mjs derives each
// batch's keys and values from its number), and every --checkpoint-ms publishes a checkpoint
// (bootstrap.mjs; 0: never); the forwarder acks its cursor every --ack-ms. On SIGTERM it stops
// writing, waits (up to 10 s) until JetStream confirmed every change, acks its cursor and prints
// the database's checksum.
//
//   node src/leader.mjs --data /tmp/leader --nats nats://127.0.0.1:4222 --batches 1000
//
// Event lines: ready, progress (every 200 ms), written, checkpoint, retry, stopped.
import { connect } from "@nats-io/transport-node";
import { publishCheckpoint } from "./bootstrap.mjs";
import { checksum } from "./checksum.mjs";
import { emit, options, stopSignal } from "./cli.mjs";
import { startForwarder } from "./forwarder.mjs";
import { ensureStream } from "./stream.mjs";
import { openDatabase, writeBatches } from "./workload.mjs";

const o = options({ data: "leader-data", nats: "nats://127.0.0.1:4222", batches: 1000, from: 0, size: 100, rate: 0, "checkpoint-ms": 0, "value-bytes": 100, "ack-ms": 1000 });
const signal = stopSignal();
const db = await openDatabase(o.data);
const nc = await connect({ servers: o.nats, maxReconnectAttempts: -1 });
await ensureStream(nc);

const forwarding = new AbortController();
let duplicates = 0;
const forwarder = startForwarder(db, nc, {
  signal: forwarding.signal,
  ackEveryMs: o["ack-ms"],
  onConfirmed: (c) => c.duplicate && duplicates++,
  onRetry: (e) => emit("retry", { error: e.message }),
});
forwarder.done.catch((e) => {
  emit("error", { error: String(e?.stack ?? e) });
  process.exit(1);
});
const from = o.from;
emit("ready", { sequence: await db.sequence(), cursor: (await db.changeCursor("nats")) ?? null, from });

const progress = setInterval(async () => {
  if (!db.closed) emit("progress", { sequence: await db.sequence(), confirmed: forwarder.position().lastSeq, duplicates });
}, 200);

let checkpoints;
if (o["checkpoint-ms"] > 0) {
  checkpoints = setInterval(() => {
    publishCheckpoint(db, nc, forwarder.position).then(
      (m) => emit("checkpoint", { seq: m.seq, streamSeq: m.streamSeq, files: m.files.length, bytes: m.bytes }),
      (e) => emit("checkpoint-failed", { error: String(e?.message ?? e) }),
    );
  }, o["checkpoint-ms"]);
}

await writeBatches(db, { from, to: from + o.batches, size: o.size, valueBytes: o["value-bytes"], ratePerSec: o.rate, signal });
emit("written", { sequence: await db.sequence(), batches: o.batches });
if (!signal.aborted) await new Promise((r) => signal.addEventListener("abort", r, { once: true }));

clearInterval(checkpoints);
const target = await db.sequence();
const deadline = Date.now() + 10_000;
while (forwarder.position().lastSeq < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
forwarding.abort();
await forwarder.done;
clearInterval(progress);
const sum = await checksum(db);
emit("stopped", { sequence: target, confirmed: forwarder.position().lastSeq, cursor: await db.changeCursor("nats"), duplicates, ...sum });
await db.close();
await nc.close();

