// The leader SIGKILLed while it forwards restarts, resumes from its durable cursor and loses
// nothing: the changes published before the crash and not yet acked are not stored again (the
// forwarder continues after the stream's last message; a re-send would be dropped by the
// duplicate window), so the stream holds every change once, in order; a follower converges to
// the leader's checksum.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { caughtUp, natsTestbed, readStream, spawnScript, stop } from "./harness.mjs";

test("the leader SIGKILLed mid-forwarding resumes from its cursor with none lost and none stored twice", async (t) => {
  const { nats, tmp, nc } = await natsTestbed({ client: true });
  const leaderArgs = { data: `${tmp.dir}/leader`, nats: nats.url };
  // Acks every 300 ms: when it is killed, its cursor is (almost surely) behind its sequence.
  const first = spawnScript("leader.mjs", { ...leaderArgs, batches: 800, rate: 400, "ack-ms": 300 });
  await first.waitFor("progress", (e) => e.confirmed >= 20_000);
  first.kill("SIGKILL");
  assert.equal((await first.exited).signal, "SIGKILL");

  const second = spawnScript("leader.mjs", { ...leaderArgs, from: 100_000, batches: 100 });
  const ready = await second.waitFor("ready");
  assert.ok(ready.cursor <= ready.sequence, `cursor ${ready.cursor}, sequence ${ready.sequence}`);
  await second.waitFor("written");
  const l = await stop(second);
  t.diagnostic(`restarted at sequence ${ready.sequence} with the cursor at ${ready.cursor}; ${l.duplicates} re-sent changes dropped as duplicates`);
  assert.equal(l.confirmed, l.sequence);
  assert.equal(l.cursor, l.sequence);

  const { count, msgIds } = await readStream(nc);
  assert.equal(msgIds.length, count);
  for (let i = 1; i < msgIds.length; i++) assert.ok(msgIds[i] > msgIds[i - 1], `stream message ${i + 1}: change ${msgIds[i]} after ${msgIds[i - 1]}`);
  assert.equal(msgIds[0], 1);

  const follower = spawnScript("follower-main.mjs", { data: `${tmp.dir}/f1`, nats: nats.url, durable: "f1" });
  await caughtUp(follower, l.sequence);
  const s = await stop(follower);
  assert.equal(s.sequence, l.sequence);
  assert.equal(s.sha256, l.sha256);
  assert.equal(s.skipped, 0, "the stream held no change twice");
});
