// Topic logs in the browser: the same Promise API as Node (OPFS, the engine in the owner's
// worker), and a subscription in one tab woken by an append from another tab, through the owner.
import { describe, expect, it } from "vitest";

import { type Db, openIn } from "./fixtures/open-in.js";
import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

describe("topics in the browser", () => {
  it("append, read, groups, batches, retention and subscribe work as in Node", async () => {
    const page = await session.page();
    await openIn(page, "topics-api");
    const result = await page.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const t = await db.topic("events", { maxRecords: 3 });
      const offsets = await t.appendMany(["a", "b", { value: "c", key: "k", headers: { h: "x" } }]);
      const read = (await t.read({ from: 1 })).map((r) => [r.offset, r.value, r.key]);
      const batch = await db.batch([
        { type: "put", key: "out:0", value: "A" },
        { type: "append", topic: t, value: "d" },
        { type: "commitOffset", topic: t, group: "g", offset: 1 },
      ]);
      await t.commit("g", 4);
      await t.append("e");
      await t.applyRetention();
      let rangeError: { code?: string; details?: unknown } = {};
      try {
        await t.read({ from: 0 });
      } catch (error) {
        rangeError = error as { code?: string; details?: unknown };
      }
      const seen: string[] = [];
      const t0 = Date.now();
      const reading = (async () => {
        for await (const r of t.subscribe({ from: "earliest" })) {
          seen.push(r.value);
          if (r.value === "late") break;
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 30));
      await t.append("late");
      await reading;
      return {
        offsets,
        read,
        batch,
        out: await db.get("out:0"),
        committed: await t.committed("g"),
        rangeError: [rangeError.code, rangeError.details],
        seen,
        waitedMs: Date.now() - t0,
        topics: await db.topics(),
      };
    });
    expect(result).toMatchObject({
      offsets: [0, 1, 2],
      read: [
        [1, "b", undefined],
        [2, "c", "k"],
      ],
      batch: [3],
      out: "A",
      committed: 4,
      rangeError: ["OFFSET_OUT_OF_RANGE", { first: 2, next: 5 }],
      seen: ["c", "d", "e", "late"],
      topics: ["events"],
    });
    expect(result.waitedMs).toBeLessThan(5_000);
    await page.close();
  });

  it("a subscription in one tab is woken by an append from another tab", async () => {
    const [a, b] = [await session.page(), await session.page()];
    await openIn(a, "topics-tabs");
    await openIn(b, "topics-tabs");
    const waiting = a.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const t = await db.topic("events");
      const t0 = Date.now();
      for await (const r of t.subscribe()) {
        return { value: r.value, offset: r.offset, waitedMs: Date.now() - t0 };
      }
      return { value: undefined, offset: -1, waitedMs: Date.now() - t0 };
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await b.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const t = await db.topic("events");
      await t.append("from tab b");
    });
    const got = await waiting;
    expect(got).toMatchObject({ value: "from tab b", offset: 0 });
    expect(got.waitedMs).toBeLessThan(15_000);
    await Promise.all([a.close(), b.close()]);
  });
});
