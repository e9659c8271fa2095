// The change feed in the browser: the same Promise API as Node (OPFS, the engine in the owner's
// worker, the live write-ahead log read back through the slot pool while its writer holds it),
// and a `follow: true` feed in one tab woken by a put from another tab, through the owner.
import { describe, expect, it } from "vitest";

import { type Db, openIn } from "./fixtures/open-in.js";
import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

describe("change feed in the browser", () => {
  it("reads the live log, with meta, cursors, checkpoint and a follower as in Node", async () => {
    const page = await session.page();
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("changes-api", { changes: {} });
      const text = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));
      await db.put("a", "1");
      await db.batch([{ type: "put", key: "b", value: "2" }], { meta: "m" });
      const all = [];
      for await (const c of db.changes()) all.push(c);
      await db.ackChanges("sink", all[0]?.lastSeq ?? 0);
      const { seq } = await db.checkpoint("changes-copy");
      await db.put("c", "3");
      const follower = await shaledb.open("changes-copy", { follower: true });
      let readOnly = "";
      try {
        await follower.put("x", "y");
      } catch (error) {
        readOnly = (error as { code: string }).code;
      }
      for await (const c of db.changes({ since: seq + 1 })) await follower.applyChanges(c.bytes);
      const copied = await follower.get("c");
      await follower.close();
      const cursor = await db.changeCursor("sink");
      await db.close();
      return {
        ops: all.map((c) => c.ops.map((op) => `${op.type} ${op.keyspace} ${text("key" in op ? op.key : op.start)}`)),
        meta: all.map((c) => text(c.meta)),
        timed: all.every((c) => typeof c.time === "number"),
        cursor,
        seq,
        readOnly,
        copied,
      };
    });
    expect(result).toMatchObject({
      ops: [["put default a"], ["put default b"]],
      meta: [null, "m"],
      timed: true,
      cursor: 2,
      seq: 4,
      readOnly: "READ_ONLY",
      copied: "3",
    });
    await page.close();
  });

  it("a follow feed in tab A is woken by a put from tab B", async () => {
    const [a, b] = [await session.page(), await session.page()];
    await openIn(a, "changes-tabs");
    await openIn(b, "changes-tabs");
    const waiting = a.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const t0 = Date.now();
      for await (const c of db.changes({ since: (await db.sequence()) + 1, follow: true })) {
        const op = c.ops[0];
        const key = op === undefined || !("key" in op) ? null : new TextDecoder().decode(op.key);
        return { key, waitedMs: Date.now() - t0 };
      }
      return undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await b.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      await db.put("from-b", "hello");
    });
    const got = await waiting;
    expect(got?.key).toBe("from-b");
    expect(got?.waitedMs).toBeLessThan(10_000);
    await a.close();
    await b.close();
  });

  it("a follow feed of a served tab goes on after the owning tab closes (takeover)", async () => {
    const [owner, served] = [await session.page(), await session.page()];
    await openIn(owner, "changes-takeover");
    await openIn(served, "changes-takeover");
    await served.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const keys: string[] = [];
      (globalThis as { keys?: string[] }).keys = keys;
      void (async () => {
        for await (const c of db.changes({ since: (await db.sequence()) + 1, follow: true })) {
          for (const op of c.ops) if (op.type === "put") keys.push(new TextDecoder().decode(op.key));
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
    await owner.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      await db.put("before", "1");
    });
    await served.waitForFunction(() => (globalThis as { keys?: string[] }).keys?.includes("before"));
    await owner.close(); // the served tab's worker takes over, the feed's waiting read moves to it
    const keys = await served.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      await db.put("after", "2");
      const seen = (globalThis as { keys?: string[] }).keys as string[];
      const t0 = Date.now();
      while (!seen.includes("after") && Date.now() - t0 < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return seen;
    });
    expect(keys).toEqual(["before", "after"]);
    await served.close();
  });
});
