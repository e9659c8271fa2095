// The NATS server SIGKILLed mid-stream and started again on the same store: the forwarder's
// publishes fail until it is back, then it starts again after the last change the stream holds
// (each publish expects its predecessor last in the stream, so none is stored out of order);
// the follower's consumer resumes; the stream holds every change once, in order, and the
// follower converges.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { caughtUp, natsTestbed, readStream, spawnScript, stop } from "./harness.mjs";

test("the NATS server SIGKILLed mid-stream and restarted: forwarding and the follower resume, in order, none lost", async (t) => {
  const { nats, tmp } = await natsTestbed();
  const leader = spawnScript("leader.mjs", { data: `${tmp.dir}/leader`, nats: nats.url, batches: 800, rate: 400 });
  await leader.waitFor("ready");
  const follower = spawnScript("follower-main.mjs", { data: `${tmp.dir}/f1`, nats: nats.url, durable: "f1" });
  await caughtUp(follower, 20_000);
  await nats.kill("SIGKILL");
  await new Promise((r) => setTimeout(r, 300));
  await nats.restart();
  await leader.waitFor("written", () => true, 90_000);
  const l = await stop(leader);
  assert.equal(l.confirmed, l.sequence);
  await caughtUp(follower, l.sequence);
  const s = await stop(follower);
  t.diagnostic(`${leader.events.filter((e) => e.event === "retry").length} publish retries while the server was down`);
  assert.equal(s.sequence, l.sequence);
  assert.equal(s.sha256, l.sha256);

  const nc = await connect({ servers: nats.url });
  try {
    const { count, msgIds } = await readStream(nc);
    assert.equal(msgIds.length, count);
    for (let i = 1; i < msgIds.length; i++) assert.ok(msgIds[i] > msgIds[i - 1], `stream message ${i + 1}: change ${msgIds[i]} after ${msgIds[i - 1]}`);
  } finally {
    await nc.close();
  }
});
