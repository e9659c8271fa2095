// A stream with a change missing (here published around it on purpose) stops the follower with
// CHANGE_GAP: it exits with an error and applies nothing past the hole; a gap is never skipped.
import assert from "node:assert/strict";
import { test } from "node:test";
import { jetstream } from "@nats-io/jetstream";
import { ensureStream, streamNames } from "../src/stream.mjs";
import { openDatabase, writeBatches } from "../src/workload.mjs";
import { natsTestbed, spawnScript } from "./harness.mjs";

test("a change missing from the stream stops the follower with CHANGE_GAP", async () => {
  const { nats, tmp, nc } = await natsTestbed({ client: true });
  const leader = await openDatabase(`${tmp.dir}/leader`);
  await writeBatches(leader, { to: 20, size: 10 });
  const changes = [];
  for await (const c of leader.changes({ since: 1 })) changes.push(c);
  await leader.close();
  await ensureStream(nc);
  const js = jetstream(nc);
  // Changes 0..9 and 11..19 of the feed: the 11th is missing.
  for (const [i, c] of changes.entries()) {
    if (i !== 10) await js.publish(streamNames().subject, c.bytes, { msgID: String(c.seq) });
  }

  const follower = spawnScript("follower-main.mjs", { data: `${tmp.dir}/f1`, nats: nats.url, durable: "f1" });
  const { code } = await follower.exited;
  assert.equal(code, 1);
  const error = follower.last("error");
  assert.equal(error?.code, "CHANGE_GAP", JSON.stringify(error));
  assert.equal(error.details?.expected, changes[10].seq, "the error names the missing change");
  // Reopened, it holds exactly the changes before the hole.
  const db = await openDatabase(`${tmp.dir}/f1`, { follower: true });
  assert.equal(await db.sequence(), changes[9].lastSeq);
  await db.close();
});
