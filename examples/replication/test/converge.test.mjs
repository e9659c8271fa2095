// A leader and two follower processes, one NATS server: after 100,000 writes (1,000 batches of
// 100 operations, puts, deletes and range deletions over three keyspaces) the followers hold
// exactly the leader's contents.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { caughtUp, natsTestbed, spawnScript, stop } from "./harness.mjs";

test("leader and two followers converge after 100,000 writes", async () => {
  const { nats, tmp } = await natsTestbed();
  const leader = spawnScript("leader.mjs", { data: `${tmp.dir}/leader`, nats: nats.url, batches: 1000, size: 100 });
  await leader.waitFor("ready");
  const followers = ["f1", "f2"].map((durable) =>
    spawnScript("follower-main.mjs", { data: `${tmp.dir}/${durable}`, nats: nats.url, durable }),
  );
  await leader.waitFor("written", () => true, 90_000);
  const l = await stop(leader);
  assert.ok(l.sequence >= 100_000, `leader sequence ${l.sequence}`);
  assert.equal(l.confirmed, l.sequence, "the forwarder confirmed every change");
  assert.equal(l.cursor, l.sequence, "the cursor was acked up to the last change");
  for (const f of followers) await caughtUp(f, l.sequence);
  for (const f of followers) {
    const s = await stop(f);
    assert.equal(s.sequence, l.sequence);
    assert.equal(s.entries, l.entries);
    assert.equal(s.sha256, l.sha256);
    assert.equal(s.skipped, 0, "no change delivered twice");
  }
});
