// What the replication tests share: a real nats-server per test, the example's processes
// (src/leader.mjs, src/follower-main.mjs, spawned by src/processes.mjs), fresh data
// directories, and a reader of the whole change stream.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { startNatsServer } from "../src/nats-server.mjs";
import { streamNames } from "../src/stream.mjs";

export { startNatsServer };
export { caughtUp, spawnScript, stop } from "../src/processes.mjs";

/** A fresh directory; `remove()` deletes it. */
export function scratch() {
  const dir = mkdtempSync(join(tmpdir(), "shaledb-replication-test-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * What most tests start with: a nats-server of their own, a fresh directory and, with `client`,
 * a NATS connection of the test's own; all closed or removed after the test.
 */
export async function natsTestbed({ client = false } = {}) {
  const nats = await startNatsServer();
  const tmp = scratch();
  const nc = client ? await connect({ servers: nats.url }) : undefined;
  after(async () => {
    await nc?.close();
    await nats.stop();
    tmp.remove();
  });
  return { nats, tmp, nc };
}

/**
 * Every message of the change stream: `{ count, msgIds }` (the message ids, that is the changes'
 * first sequence numbers, in stream order), read with an ordered consumer.
 */
export async function readStream(nc) {
  const { stream } = streamNames();
  const info = await (await jetstreamManager(nc)).streams.info(stream);
  const count = info.state.messages;
  const msgIds = [];
  if (count === 0) return { count, msgIds };
  const consumer = await jetstream(nc).consumers.get(stream);
  const messages = await consumer.consume();
  for await (const m of messages) {
    msgIds.push(Number(m.headers?.get("Nats-Msg-Id")));
    if (m.info.pending === 0) break;
  }
  messages.stop();
  return { count, msgIds };
}
