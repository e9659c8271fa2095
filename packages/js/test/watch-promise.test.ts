// db.watch() and db.liveQuery() through the Promise API (open), with the engine in a worker
// thread and in the caller's thread: deliveries of the writes in the watched ranges only (from
// any write path: put, batch, transaction, deleteRange, another keyspace), values when asked,
// coalescing, the listener form, and the ends (close(), break, an AbortSignal, the database
// closing).
import { describe, expect, it } from "vitest";

import { open, type Database, type WatchChange, type WatchEvent, type Watcher } from "shaledb";

import { freshPath } from "./helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol("pending");
  return (await Promise.race([promise, sleep(ms).then(() => marker)])) === marker;
}

/** The changes of `watcher`'s next deliveries, until there are `n`. */
async function changesOf(watcher: Watcher<string, string>, n: number): Promise<WatchChange<string, string>[]> {
  const out: WatchChange<string, string>[] = [];
  while (out.length < n) {
    const next = await watcher.next();
    if (next.done === true) break;
    out.push(...next.value.changes);
  }
  return out;
}

describe.each(["own", "caller"] as const)("watch (Promise API, engine thread: %s)", (engineThread) => {
  async function withDb(body: (db: Database<string, string>) => Promise<void>): Promise<void> {
    const db = await open(freshPath("watch"), { engineThread });
    try {
      await body(db);
    } finally {
      await db.close();
    }
  }

  it("delivers the writes in its ranges, with values when asked, and none of the others", () =>
    withDb(async (db) => {
      await db.put("todo:0", "before the watch");
      const watcher = db.watch([{ prefix: "todo:" }, { gte: "m", lt: "n" }], { values: true });
      const first = watcher.next();
      await db.put("other", "x");
      await db.put("n", "just past lt");
      expect(await pendingAfter(first, 50)).toBe(true);
      await db.batch([
        { type: "put", key: "todo:1", value: "a" },
        { type: "put", key: "zzz", value: "outside" },
        { type: "delete", key: "todo:0" },
      ]);
      const event = (await first).value as WatchEvent<string, string>;
      expect(event.changes).toEqual([
        { type: "put", key: "todo:1", value: "a" },
        { type: "delete", key: "todo:0" },
      ]);
      expect(event.overflow).toBe(false);
      expect(event.seq).toBe(await db.sequence());
      await db.transact(async (tx) => {
        await tx.put("mango", "m");
      });
      await db.deleteRange({ gte: "a", lt: "b" }); // meets no watched range
      await db.deleteRange({ gte: "todo:5", lt: "todo:9" });
      expect(await changesOf(watcher, 2)).toEqual([
        { type: "put", key: "mango", value: "m" },
        { type: "deleteRange", gte: "todo:5", lt: "todo:9" },
      ]);
      watcher.close();
      expect(await watcher.next()).toEqual({ done: true, value: undefined });
    }));

  it("watches one keyspace: writes to another keyspace, a queue or a topic wake nobody", () =>
    withDb(async (db) => {
      const tags = await db.keyspace("tags");
      const onTags = tags.watch();
      const onDefault = db.watch();
      const tagEvent = onTags.next();
      const defaultEvent = onDefault.next();
      await tags.put("t", "1");
      expect((await tagEvent).value?.changes).toEqual([{ type: "put", key: "t" }]);
      const queue = await db.queue("jobs");
      await queue.push("job");
      const topic = await db.topic("log");
      await topic.append("line");
      expect(await pendingAfter(defaultEvent, 50)).toBe(true);
      await db.put("d", "1");
      expect((await defaultEvent).value?.changes).toEqual([{ type: "put", key: "d" }]);
      onTags.close();
      onDefault.close();
    }));

  it("calls a listener until unsubscribed; coalesce merges a burst into fewer deliveries", () =>
    withDb(async (db) => {
      const events: WatchEvent<string, string>[] = [];
      const unsubscribe = db.watch({ prefix: "k" }, (event) => events.push(event), { coalesce: "frame" });
      await sleep(10);
      for (let i = 0; i < 50; i++) await db.put(`k${i}`, "v");
      await sleep(100);
      const keys = events.flatMap((e) => e.changes.map((c) => (c.type === "put" ? c.key : "")));
      expect(keys).toEqual(Array.from({ length: 50 }, (_, i) => `k${i}`));
      expect(events.length).toBeLessThan(50);
      unsubscribe();
      await db.put("k-after", "v");
      await sleep(50);
      expect(events.flatMap((e) => e.changes).length).toBe(50);
    }));

  it("ends a for-await loop when the database closes, and at an abort", async () => {
    const db = await open(freshPath("watch-end"), { engineThread });
    const controller = new AbortController();
    const aborted = db.watch(undefined, { signal: controller.signal });
    const abortedNext = aborted.next();
    controller.abort();
    expect(await abortedNext).toEqual({ done: true, value: undefined });
    const seen: string[] = [];
    const loop = (async () => {
      for await (const event of db.watch({ prefix: "x" })) {
        for (const c of event.changes) if (c.type === "put") seen.push(c.key);
      }
    })();
    await sleep(20);
    await db.put("x1", "1");
    await sleep(50);
    await db.close();
    await loop;
    expect(seen).toEqual(["x1"]);
  });

  it("liveQuery re-runs its read after writes in its ranges and stops at unsubscribe", () =>
    withDb(async (db) => {
      await db.put("todo:a", "1");
      const results: string[][] = [];
      const subscription = db
        .liveQuery({ prefix: "todo:" }, () => db.keys({ prefix: "todo:" }).all())
        .subscribe((keys) => results.push(keys));
      await sleep(50);
      expect(results).toEqual([["todo:a"]]);
      await db.put("unrelated", "1");
      await sleep(60);
      expect(results.length).toBe(1);
      await db.put("todo:b", "2");
      await sleep(60);
      expect(results.at(-1)).toEqual(["todo:a", "todo:b"]);
      subscription.unsubscribe();
      expect(subscription.closed).toBe(true);
      const count = results.length;
      await db.put("todo:c", "3");
      await sleep(60);
      expect(results.length).toBe(count);
    }));

  it("liveQuery hands a read's error to the observer's error and stops", () =>
    withDb(async (db) => {
      const errors: unknown[] = [];
      const subscription = db
        .liveQuery(undefined, () => {
          throw new Error("read failed");
        })
        .subscribe({ next: () => undefined, error: (e) => errors.push(e) });
      await sleep(30);
      expect(errors.map((e) => (e as Error).message)).toEqual(["read failed"]);
      expect(subscription.closed).toBe(true);
    }));
});
