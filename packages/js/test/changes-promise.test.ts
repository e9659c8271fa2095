// The change feed through the Promise API (open), with the engine in a worker thread and in the
// caller's thread: the synchronous API's behaviours, and `follow: true` feeds that wait for
// commits without polling (woken by another caller's write, batch, transaction or queue push),
// ended by break, an AbortSignal and close.
import { describe, expect, it } from "vitest";

import { open, type Change, type Database } from "shaledb";

import { expectRejects, freshPath } from "./helpers.js";

const text = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder().decode(bytes));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The first `n` changes of `feed`, then breaks out of it. */
async function take(feed: AsyncIterable<Change>, n: number): Promise<Change[]> {
  const out: Change[] = [];
  if (n === 0) return out;
  for await (const change of feed) {
    out.push(change);
    if (out.length >= n) break;
  }
  return out;
}

/** The keys `change` puts. */
const putKeys = (change: Change) => change.ops.flatMap((op) => (op.type === "put" ? [text(op.key)] : []));

describe.each(["own", "caller"] as const)("change feed (Promise API, engine thread: %s)", (engineThread) => {
  async function withDb(
    body: (db: Database<string, string>, path: string) => Promise<void>,
    options: { follower?: boolean; changes?: { retainMs?: number } } = {},
  ): Promise<void> {
    const path = freshPath("changes");
    const db = await open(path, { engineThread, ...options });
    try {
      await body(db, path);
    } finally {
      await db.close();
    }
  }

  it("yields every batch in order with keyspace names and meta, then ends", () =>
    withDb(async (db) => {
      const ks = await db.keyspace("users");
      await db.put("a", "1");
      await ks.put("u", "ann");
      await db.batch(
        [
          { type: "put", key: "b", value: "2" },
          { type: "delete", key: "a" },
        ],
        { meta: "m-1" },
      );
      const all: Change[] = [];
      for await (const change of db.changes()) all.push(change);
      expect(all.map((c) => c.ops.map((op) => `${op.type} ${op.keyspace} ${text("key" in op ? op.key : op.start)}`))).toEqual([
        ["put default a"],
        ["put users u"],
        ["put default b", "delete default a"],
      ]);
      expect(all.map((c) => text(c.meta))).toEqual([null, null, "m-1"]);
      expect(all.every((c) => c.time !== null)).toBe(true);
      expect(await db.sequence()).toBe(all.at(-1)?.lastSeq);
      expect((await take(db.changes({ since: all[1]?.seq ?? 0, limit: 1 }), 5)).map((c) => c.seq)).toEqual([
        all[1]?.seq,
      ]);
    }, { changes: {} }));

  it("keeps a batch with meta apart from writes sent with it (group commit)", () =>
    withDb(async (db) => {
      await Promise.all([
        db.put("a", "1"),
        db.batch([{ type: "put", key: "b", value: "2" }], { meta: "mine" }),
        db.put("c", "3"),
      ]);
      const all: Change[] = [];
      for await (const change of db.changes()) all.push(change);
      const withMeta = all.filter((c) => c.meta !== null);
      expect(withMeta.map((c) => [text(c.meta), putKeys(c)])).toEqual([["mine", ["b"]]]);
      expect(all.flatMap(putKeys).sort()).toEqual(["a", "b", "c"]);
    }));

  it("follow wakes on commits of another caller: puts, batches, transactions, queue pushes", () =>
    withDb(async (db, path) => {
      const queue = await db.queue("jobs");
      const since = (await db.sequence()) + 1;
      const feed = db.changes({ since, follow: true });
      const got = take(feed, 4);
      await sleep(30);
      await db.put("p", "1");
      await db.batch([{ type: "put", key: "b", value: "2" }]);
      await db.transact(async (tx) => {
        await tx.put("t", "3");
      });
      await queue.push("job");
      const changes = await got;
      expect(changes.length).toBe(4);
      const seqs = changes.map((c) => c.seq);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(changes.slice(0, 3).map(putKeys)).toEqual([["p"], ["b"], ["t"]]);
      // The queue push writes ShaleDB's own keyspaces.
      expect(changes[3]?.ops.every((op) => op.keyspace.startsWith("\u0000"))).toBe(true);
      void path;
    }));

  it("follow wakes on a synced write (sync: true)", () =>
    withDb(async (db) => {
      const feed = db.changes({ since: (await db.sequence()) + 1, follow: true });
      const first = feed.next();
      await sleep(30);
      await db.put("k", "v", { sync: true });
      const { value } = await first;
      expect(putKeys(value as Change)).toEqual(["k"]);
      await feed.return?.();
    }));

  it("a follow feed ends when its signal aborts, on return() and when the database closes", async () => {
    const path = freshPath("changes");
    const db = await open(path, { engineThread });
    const controller = new AbortController();
    const aborted = (async () => {
      const got: Change[] = [];
      for await (const change of db.changes({ follow: true, signal: controller.signal })) got.push(change);
      return got;
    })();
    await db.put("a", "1");
    await sleep(50);
    controller.abort();
    expect((await aborted).map(putKeys)).toEqual([["a"]]);
    // return() while a read waits.
    const feed = db.changes({ since: 2, follow: true });
    const pending = feed.next();
    await sleep(20);
    await feed.return?.();
    expect(await pending).toEqual({ done: true, value: undefined });
    // Close ends a waiting feed cleanly.
    const closing = (async () => {
      const got: Change[] = [];
      for await (const change of db.changes({ since: 2, follow: true })) got.push(change);
      return got;
    })();
    await sleep(30);
    await db.close();
    expect(await closing).toEqual([]);
    // An aborted signal ends at once.
    const done = new AbortController();
    done.abort();
    const db2 = await open(path, { engineThread });
    try {
      expect(await take(db2.changes({ signal: done.signal }), 10)).toEqual([]);
    } finally {
      await db2.close();
    }
  });

  // Issue 22: a feed read after close ended silently, as if caught up (keys() and the sync API
  // threw CLOSED): a forwarder loop would have believed it had caught up.
  it("a feed pulled once the database is closed rejects with CLOSED, with or without follow", async () => {
    const db = await open(freshPath("changes"), { engineThread });
    await db.put("a", "1");
    await db.close();
    await expectRejects(db.changes({ since: 1 }).next(), "CLOSED");
    await expectRejects(db.changes({ since: 1, follow: true }).next(), "CLOSED");
    await expectRejects(db.keys().next(), "CLOSED");
  });

  it("a follower applies changes (bytes and objects), skips re-applied ones, refuses gaps and writes", async () => {
    const leaderPath = freshPath("leader");
    const leader = await open(leaderPath, { engineThread });
    const follower = await open(freshPath("follower"), { engineThread, follower: true });
    try {
      await leader.put("a", "1");
      await leader.put("b", "2");
      await leader.put("c", "3");
      const changes = await take(leader.changes(), 3);
      expect(await follower.applyChanges(changes[0]?.bytes as Uint8Array)).toEqual({ applied: true, lastSeq: 1 });
      expect(await follower.applyChanges(changes[1] as Change)).toEqual({ applied: true, lastSeq: 2 });
      expect(await follower.applyChanges(changes[1] as Change)).toEqual({ applied: false, lastSeq: 2 });
      expect(await follower.get("b")).toBe("2");
      const gap = await expectRejects(follower.applyChanges(changes[2] as Change, { expectedSeq: 4 }), "CHANGE_GAP");
      expect(gap.details).toMatchObject({ expected: 4 });
      await expectRejects(follower.put("x", "y"), "READ_ONLY");
      await leader.put("d", "4");
      const [, last] = await take(leader.changes({ since: 3 }), 2);
      const skipped = await expectRejects(follower.applyChanges(last as Change), "CHANGE_GAP");
      expect(skipped.details).toMatchObject({ expected: 3, got: 4 });
    } finally {
      await leader.close();
      await follower.close();
    }
  });

  it("a follower opened from checkpoint() follows the leader's feed from seq + 1", async () => {
    const leader = await open(freshPath("leader"), { engineThread });
    try {
      await leader.put("a", "1");
      const copy = freshPath("checkpoint");
      const { seq } = await leader.checkpoint(copy);
      expect(seq).toBe(1);
      const follower = await open(copy, { engineThread, follower: true });
      try {
        const controller = new AbortController();
        const applying = (async () => {
          for await (const change of leader.changes({ since: seq + 1, follow: true, signal: controller.signal })) {
            await follower.applyChanges(change);
            if (change.lastSeq >= 3) controller.abort();
          }
        })();
        await leader.put("b", "2");
        await leader.put("c", "3");
        await applying;
        expect(await follower.get("c")).toBe("3");
        expect(await follower.sequence()).toBe(3);
      } finally {
        await follower.close();
      }
    } finally {
      await leader.close();
    }
  });

  it("keeps change cursors across a reopen", async () => {
    const path = freshPath("changes");
    let db = await open(path, { engineThread });
    await db.put("a", "1");
    await db.ackChanges("sink", 1);
    await db.close();
    db = await open(path, { engineThread });
    try {
      expect(await db.changeCursor("sink")).toBe(1);
      expect(await db.changeCursor("none")).toBeUndefined();
      expect(await db.removeChangeCursor("sink")).toBe(true);
      expect(await db.removeChangeCursor("sink")).toBe(false);
    } finally {
      await db.close();
    }
  });

  it("is CHANGES_TRUNCATED below the oldest batch kept", () =>
    withDb(async (db) => {
      for (let i = 0; i < 100; i++) await db.put(`k${i}`, "v".repeat(1000));
      await db.flush();
      while (await db.maintain()) {
        // Flush everything, so the old logs go.
      }
      await db.put("last", "x");
      const error = await expectRejects(take(db.changes({ since: 1 }), 1), "CHANGES_TRUNCATED");
      expect(error.details?.["oldest"]).toBeGreaterThan(1);
    }));
});
