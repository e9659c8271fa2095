// Messages lost on the way to a running follower (its connection cut while they were in
// flight) stay delivered for JetStream, which redelivers them only after their ack wait, behind
// newer ones: the follower must take the change that does not follow for a delivery out of
// order, recreate its consumer after the last message it applied, and converge, not stop with
// CHANGE_GAP. The connection goes through a proxy of the test's own that swallows the server's
// bytes once a message is in flight, then cuts both sides; the client reconnects through it.
import assert from "node:assert/strict";
import { connect as connectTcp, createServer } from "node:net";
import { test } from "node:test";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { startFollower } from "../src/follower.mjs";
import { ensureStream, streamNames } from "../src/stream.mjs";
import { openDatabase, writeBatches } from "../src/workload.mjs";
import { natsTestbed } from "./harness.mjs";

/** A TCP proxy to `port`; `cut()` swallows what the server sends until a message is among it, then closes both sides. */
async function cuttableProxy(port) {
  const pairs = new Set();
  let swallowing = false;
  let swallowed = { resolve: () => {} };
  const server = createServer((client) => {
    const upstream = connectTcp(port, "127.0.0.1");
    const pair = { client, upstream };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (d) => upstream.write(d));
    upstream.on("data", (d) => {
      if (!swallowing) return void client.write(d);
      if (!d.includes("MSG ")) return;
      swallowing = false; // a message (or more) lost on the way: cut now
      close();
      swallowed.resolve();
    });
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `nats://127.0.0.1:${server.address().port}`,
    cut: () =>
      new Promise((resolve) => {
        swallowed = { resolve };
        swallowing = true;
      }),
    close: () => {
      for (const { client, upstream } of pairs) client.destroy(), upstream.destroy();
      server.close();
    },
  };
}

test("messages lost on the way to a running follower come again out of order: it recreates its consumer and converges", async () => {
  const { nats, tmp, nc } = await natsTestbed({ client: true });
  const leader = await openDatabase(`${tmp.dir}/leader`);
  await writeBatches(leader, { to: 400, size: 10 });
  await ensureStream(nc);
  const js = jetstream(nc);
  for await (const c of leader.changes({ since: 1 })) await js.publish(streamNames().subject, c.bytes, { msgID: String(c.seq) });
  const expected = await leader.sequence();
  await leader.close();

  const proxy = await cuttableProxy(Number(new URL(nats.url).port));
  const fc = await connect({ servers: proxy.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
  const db = await openDatabase(`${tmp.dir}/f1`, { follower: true });
  const controller = new AbortController();
  let applied = 0;
  let cut;
  const reachedEnd = new Promise((resolve) => {
    const follower = startFollower(db, fc, {
      durable: "f1",
      signal: controller.signal,
      batch: 16,
      maxApplies: 4,
      onApplied: (r) => {
        if (++applied === 50) cut = proxy.cut();
        if (r.lastSeq === expected) resolve();
      },
    });
    follower.then((f) => f.done.then(() => resolve(), (e) => resolve(e)));
  });
  try {
    const failure = await reachedEnd;
    assert.equal(failure, undefined, `the follower stopped: ${failure?.stack}`);
    await cut;
    assert.equal(await db.sequence(), expected);
  } finally {
    controller.abort();
    proxy.close();
    await fc.close().catch(() => {});
    await db.close();
  }
});
