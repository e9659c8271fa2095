// A follower process: applies the change stream to the database at --data (follower.mjs), as
// durable consumer --durable. With --bootstrap and no database at --data yet, it first
// downloads the newest checkpoint from the object store (bootstrap.mjs) and tails the stream
// from the checkpoint's position. On SIGTERM it stops and prints the database's checksum.
//
//   node src/follower-main.mjs --data /tmp/f1 --nats nats://127.0.0.1:4222 --durable f1
//
// Event lines: bootstrapped, ready, progress (every 200 ms), stopped; error (then exit code 1),
// for example on a CHANGE_GAP.
import { existsSync, readdirSync } from "node:fs";
import { connect } from "@nats-io/transport-node";
import { downloadCheckpoint } from "./bootstrap.mjs";
import { checksum } from "./checksum.mjs";
import { emit, options, stopSignal } from "./cli.mjs";
import { startFollower } from "./follower.mjs";
import { ensureStream } from "./stream.mjs";
import { openDatabase } from "./workload.mjs";

const o = options({ data: "follower-data", nats: "nats://127.0.0.1:4222", durable: "follower", bootstrap: "no" });
const signal = stopSignal();
const nc = await connect({ servers: o.nats, maxReconnectAttempts: -1 });
await ensureStream(nc);

let startStreamSeq;
const empty = !existsSync(o.data) || readdirSync(o.data).length === 0;
if (o.bootstrap === "yes" && empty) {
  const manifest = await downloadCheckpoint(nc, o.data);
  if (manifest) {
    startStreamSeq = manifest.streamSeq + 1;
    emit("bootstrapped", { seq: manifest.seq, streamSeq: manifest.streamSeq, files: manifest.files.length, bytes: manifest.bytes });
  }
}
const db = await openDatabase(o.data, { follower: true });
// A checkpoint leaves the leader's change cursors behind: none holds the follower's logs.
const cursors = (await db.changeCursor("nats")) === undefined ? 0 : 1;
let applied = 0;
let skipped = 0;
const follower = await startFollower(db, nc, {
  durable: o.durable,
  startStreamSeq,
  signal,
  onApplied: (r) => (r.applied ? applied++ : skipped++),
});
// Its outcome is taken at once: a failure (a gap) may come while this process still awaits
// other things, and must not be an unhandled rejection that ends it without its error line.
const outcome = follower.done.then(
  () => null,
  (e) => e,
);
emit("ready", { sequence: await db.sequence(), startStreamSeq: follower.startedAt, cursors });
const progress = setInterval(async () => {
  if (!db.closed) emit("progress", { sequence: await db.sequence(), applied, skipped });
}, 200);
const failure = await outcome;
if (failure) {
  const e = failure;
  emit("error", { error: String(e?.stack ?? e), code: e?.code ?? null, details: e?.details ?? null });
  process.exit(1);
}
clearInterval(progress);
const sum = await checksum(db);
emit("stopped", { sequence: await db.sequence(), applied, skipped, ...sum });
await db.close();
await nc.close();
