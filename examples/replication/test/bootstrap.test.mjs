// A new follower bootstraps from the newest checkpoint in JetStream's object store (its files,
// its sequence number and the stream position to tail from), then tails the stream and
// converges to the leader.
import assert from "node:assert/strict";
import { test } from "node:test";
import { caughtUp, natsTestbed, spawnScript, stop } from "./harness.mjs";

test("a new follower bootstraps from the object store, then tails the stream and converges", async () => {
  const { nats, tmp } = await natsTestbed();
  const leader = spawnScript("leader.mjs", { data: `${tmp.dir}/leader`, nats: nats.url, batches: 800, rate: 400, "checkpoint-ms": 500 });
  const checkpoint = await leader.waitFor("checkpoint", (e) => e.seq >= 20_000);
  const follower = spawnScript("follower-main.mjs", { data: `${tmp.dir}/new`, nats: nats.url, durable: "new", bootstrap: "yes" });
  const boot = await follower.waitFor("bootstrapped");
  assert.ok(boot.seq >= checkpoint.seq, `bootstrapped at ${boot.seq}`);
  assert.ok(boot.files > 0 && boot.bytes > 0);
  const ready = await follower.waitFor("ready");
  assert.equal(ready.sequence, boot.seq, "the downloaded checkpoint opens at its sequence");
  assert.equal(ready.startStreamSeq, boot.streamSeq + 1, "tails the stream from the checkpoint's position");
  assert.ok(ready.startStreamSeq > 1, "not from the stream's start");
  assert.equal(ready.cursors, 0, "the leader's cursor is not copied with the checkpoint");
  await leader.waitFor("written", () => true, 90_000);
  const l = await stop(leader);
  await caughtUp(follower, l.sequence);
  const s = await stop(follower);
  assert.equal(s.sequence, l.sequence);
  assert.equal(s.sha256, l.sha256);
  assert.equal(s.entries, l.entries);
});
