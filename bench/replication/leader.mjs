// The benchmark's leader process. `--mode max`: writes batches of --size operations as fast as
// it can for --seconds with no forwarder, and reports its rate (the leader's maximum unsynced
// rate). `--mode run`: forwards its change feed (examples/replication/src/forwarder.mjs, each
// message with header Commit-Time: the wall clock in ms, from the batch's meta, taken just
// before `db.batch`, and Feed-Time: when the forwarder got it from the feed) while it writes at --rate batches/s (0: as fast as it can) for --seconds,
// then waits until JetStream confirmed every change; reports what it wrote and forwarded.
// `--mode backlog`: writes as fast as it can for --seconds with no forwarder, then forwards the
// whole backlog and reports how fast JetStream confirmed it (the forwarder's own capacity).
import { connect } from "@nats-io/transport-node";
import { emit, options } from "../../examples/replication/src/cli.mjs";
import { startForwarder } from "../../examples/replication/src/forwarder.mjs";
import { ensureStream } from "../../examples/replication/src/stream.mjs";
import { openDatabase, writeBatches } from "../../examples/replication/src/workload.mjs";
import { recordPauses } from "./pauses.mjs";

const o = options({ data: "", nats: "", mode: "run", rate: 0, seconds: 5, size: 100, "engine-thread": "own" });
const db = await openDatabase(o.data, { engineThread: o["engine-thread"] });
const seconds = (t0) => (performance.now() - t0) / 1000;

if (o.mode === "max") {
  const t0 = performance.now();
  const batches = await writeBatches(db, { size: o.size, forMs: o.seconds * 1000 });
  emit("max", { batchesPerSec: batches / seconds(t0), batches });
} else if (o.mode === "backlog") {
  const t0 = performance.now();
  const batches = await writeBatches(db, { size: o.size, forMs: o.seconds * 1000 });
  const writeSeconds = seconds(t0);
  const nc = await connect({ servers: o.nats });
  await ensureStream(nc);
  let bytes = 0;
  const forwarding = new AbortController();
  const t1 = performance.now();
  const forwarder = startForwarder(db, nc, { signal: forwarding.signal, onConfirmed: (c) => (bytes += c.bytes) });
  const sequence = await db.sequence();
  while (forwarder.position().lastSeq < sequence) await new Promise((r) => setTimeout(r, 2));
  const forwardSeconds = seconds(t1);
  forwarding.abort();
  await forwarder.done;
  emit("backlog", { writeBatchesPerSec: batches / writeSeconds, forwardBatchesPerSec: batches / forwardSeconds, forwardMBPerSec: bytes / 1e6 / forwardSeconds });
  await nc.close();
} else {
  const nc = await connect({ servers: o.nats });
  await ensureStream(nc);
  const dec = new TextDecoder();
  let forwarded = 0;
  let bytes = 0;
  let lastConfirmedAt = 0;
  const forwarding = new AbortController();
  const forwarder = startForwarder(db, nc, {
    signal: forwarding.signal,
    annotate: (change, h) => {
      if (change.meta) h.set("Commit-Time", String(JSON.parse(dec.decode(change.meta)).at));
      h.set("Feed-Time", String(performance.timeOrigin + performance.now()));
    },
    onConfirmed: (c) => {
      forwarded++;
      bytes += c.bytes;
      lastConfirmedAt = performance.now();
    },
  });
  emit("ready");
  const pauses = recordPauses();
  const t0 = performance.now();
  const batches = await writeBatches(db, { size: o.size, ratePerSec: o.rate, forMs: o.seconds * 1000 });
  const writeSeconds = seconds(t0);
  const sequence = await db.sequence();
  const forwardedWhenWritten = forwarded; // the backlog when the writes stopped, below
  const deadline = performance.now() + 60_000;
  while (forwarder.position().lastSeq < sequence && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  forwarding.abort();
  await forwarder.done;
  emit("done", {
    sequence,
    batches,
    writeBatchesPerSec: batches / writeSeconds,
    forwarded,
    backlogAtEnd: batches - forwardedWhenWritten,
    forwardBatchesPerSec: forwarded / ((lastConfirmedAt - t0) / 1000),
    forwardMBPerSec: bytes / 1e6 / ((lastConfirmedAt - t0) / 1000),
    bytesPerBatch: bytes / forwarded,
    pauses: pauses.summary(),
  });
  await nc.close();
}
await db.close();
