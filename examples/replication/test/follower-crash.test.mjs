// A follower SIGKILLed while it applies the stream restarts on its directory and durable
// consumer and converges: no gap (a CHANGE_GAP would end it with an error event), no duplicate
// (redelivered changes it had applied are skipped; its sequence and checksum equal the leader's).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { caughtUp, natsTestbed, spawnScript, stop } from "./harness.mjs";

test("a follower SIGKILLed mid-stream restarts and converges with no gap and no duplicate", async (t) => {
  const { nats, tmp } = await natsTestbed();
  const follower = { data: `${tmp.dir}/f1`, nats: nats.url, durable: "f1" };
  const leader = spawnScript("leader.mjs", { data: `${tmp.dir}/leader`, nats: nats.url, batches: 800, rate: 400 });
  // The follower starts behind (a backlog of ~300 batches) and is killed while it catches up,
  // with messages received, applied and not yet acked.
  await leader.waitFor("progress", (e) => e.sequence >= 30_000);
  const first = spawnScript("follower-main.mjs", follower);
  await caughtUp(first, 10_000);
  first.kill("SIGKILL");
  const killed = await first.exited;
  assert.equal(killed.signal, "SIGKILL");
  const killedAt = first.last("progress").sequence;
  const second = spawnScript("follower-main.mjs", follower);
  const ready = await second.waitFor("ready");
  assert.ok(ready.sequence >= killedAt, `reopened at ${ready.sequence}, had reported ${killedAt}`);
  await leader.waitFor("written", () => true, 90_000);
  const l = await stop(leader);
  await caughtUp(second, l.sequence);
  const s = await stop(second);
  t.diagnostic(`killed after it reported ${killedAt}, reopened at ${ready.sequence}; after the restart ${s.applied} changes applied, ${s.skipped} redelivered ones skipped`);
  assert.equal(s.sequence, l.sequence);
  assert.equal(s.sha256, l.sha256);
  assert.equal(s.entries, l.entries);
});
