// Topic logs through the Promise API (open), with the engine in a worker thread and in the
// caller's thread: the synchronous API's behaviours, and subscriptions that wait for appends
// without polling (woken by another caller's append), with backpressure, ended by break, an
// AbortSignal and close.
import { describe, expect, it } from "vitest";

import { open, type Database, type TopicRecord } from "shaledb";

import { expectRejects, freshPath } from "./helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(["own", "caller"] as const)("topics (Promise API, engine thread: %s)", (engineThread) => {
  async function withDb(body: (db: Database<string, string>, path: string) => Promise<void>): Promise<void> {
    const path = freshPath("topic");
    const db = await open(path, { engineThread });
    try {
      await body(db, path);
    } finally {
      await db.close();
    }
  }

  it("gives dense offsets and reads from an offset, a time, a group and the end", () =>
    withDb(async (db) => {
      const t = await db.topic("events");
      expect(await t.append("a", { key: "ka", headers: { h: new Uint8Array([1, 2]) } })).toBe(0);
      expect(await t.appendMany(["b", "c"])).toEqual([1, 2]);
      const all = await t.read();
      expect(all.map((r) => [r.offset, r.value])).toEqual([
        [0, "a"],
        [1, "b"],
        [2, "c"],
      ]);
      expect(all[0]).toMatchObject({ key: "ka", headers: { h: new Uint8Array([1, 2]) } });
      expect((await t.read({ from: 1, limit: 1 })).map((r) => r.value)).toEqual(["b"]);
      expect(await t.read({ from: "latest" })).toEqual([]);
      expect((await t.read({ from: { time: all[0]!.time } })).length).toBe(3);
      expect((await t.latest(1)).map((r) => r.value)).toEqual(["c"]);
      await t.commit("g", 2);
      expect(await t.committed("g")).toBe(2);
      expect(await t.committed("other")).toBeUndefined();
      expect((await t.read({ from: { group: "g" } })).map((r) => r.value)).toEqual(["c"]);
      expect(await t.stats()).toEqual({ first: 0, next: 3, bytes: expect.any(Number), groups: [{ name: "g", committed: 2, lag: 1 }] });
      expect(await t.removeGroup("g")).toBe(true);
      expect(await db.topics()).toEqual(["events"]);
    }));

  it("a subscription yields what is there, then is woken by another caller's append", () =>
    withDb(async (db) => {
      const t = await db.topic("events");
      const other = await db.topic("events");
      await t.appendMany(["a", "b"]);
      const seen: string[] = [];
      const started = Date.now();
      const reading = (async () => {
        for await (const r of t.subscribe({ from: "earliest" })) {
          seen.push(r.value);
          if (seen.length === 4) break;
        }
      })();
      await sleep(50);
      expect(seen).toEqual(["a", "b"]);
      await other.append("c");
      await sleep(20);
      await other.append("d");
      await reading;
      expect(seen).toEqual(["a", "b", "c", "d"]);
      expect(Date.now() - started).toBeLessThan(5_000);
    }));

  it("the longest wait sets no timer past what a timer can wait (it would fire at once: polling)", () =>
    withDb(async (db) => {
      const warnings: string[] = [];
      const onWarning = (w: Error) => warnings.push(w.name);
      process.on("warning", onWarning);
      try {
        const t = await db.topic("events");
        const q = await db.queue("jobs");
        const it = t.subscribe();
        const next = it.next();
        const waiting = q.take({ waitMs: 0x7fff_ffff });
        await sleep(50);
        await t.append("x");
        await q.push("y");
        expect((await next).value?.value).toBe("x");
        expect((await waiting)?.value).toBe("y");
        await it.return?.();
        await sleep(10);
      } finally {
        process.off("warning", onWarning);
      }
      expect(warnings).not.toContain("TimeoutOverflowWarning");
    }));

  it("a subscription from latest sees only new records, and pulls a chunk at a time", () =>
    withDb(async (db) => {
      const t = await db.topic("events");
      await t.appendMany(["old1", "old2"]);
      const it = t.subscribe({ chunk: 2 });
      const first = it.next();
      await sleep(20);
      await t.appendMany(["n1", "n2", "n3", "n4", "n5"]);
      expect((await first).value?.value).toBe("n1");
      // The reader holds one chunk; the rest stays in the log until it asks.
      expect((await it.next()).value?.value).toBe("n2");
      expect((await it.next()).value?.value).toBe("n3");
      await it.return?.();
      expect((await it.next()).done).toBe(true);
    }));

  it("an AbortSignal and close end subscriptions", async () => {
    const db = await open(freshPath("topic"), { engineThread });
    const t = await db.topic("events");
    const controller = new AbortController();
    const aborted = (async () => {
      const got: TopicRecord<string>[] = [];
      for await (const r of t.subscribe({ signal: controller.signal })) got.push(r);
      return got;
    })();
    const closed = (async () => {
      const got: TopicRecord<string>[] = [];
      for await (const r of t.subscribe()) got.push(r);
      return got;
    })();
    await sleep(30);
    await t.append("x");
    await sleep(30);
    controller.abort();
    expect((await aborted).map((r) => r.value)).toEqual(["x"]);
    const t0 = Date.now();
    await db.close();
    expect((await closed).map((r) => r.value)).toEqual(["x"]);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // Issue 22: a loop started once the database is closed is CLOSED, not an empty topic.
    await expectRejects(t.subscribe({ from: "earliest" }).next(), "CLOSED");
  });

  it("a consumer commits its offset atomically with its output; appends join batches and transactions", () =>
    withDb(async (db) => {
      const t = await db.topic("in", { valueEncoding: "json" });
      const out = await db.topic("out");
      const q = await db.queue("jobs");
      await t.appendMany([{ n: 1 }, { n: 2 }]);
      const records = await t.read({ from: { group: "worker" } });
      const ids = await db.batch([
        ...records.map((r) => ({ type: "put" as const, key: `done:${r.offset}`, value: "yes" })),
        { type: "push", queue: q, value: "j" },
        { type: "append", topic: out, value: "derived", key: "k" },
        { type: "commitOffset", topic: t, group: "worker", offset: 2 },
      ]);
      expect(ids).toEqual([1, 0]);
      expect(await db.get("done:1")).toBe("yes");
      expect(await t.committed("worker")).toBe(2);
      expect(await t.read({ from: { group: "worker" } })).toEqual([]);
      const tx = await db.transaction();
      tx.append(out, "tx1");
      tx.commitOffset(t, "worker", 1);
      tx.push(q, "j2");
      tx.put("k", "v");
      expect(await tx.commit()).toEqual([1, 2]);
      expect(await t.committed("worker")).toBe(1);
      expect((await out.read()).map((r) => r.value)).toEqual(["derived", "tx1"]);
    }));

  it("retention drops old records: reads below get OFFSET_OUT_OF_RANGE with where the log starts", () =>
    withDb(async (db) => {
      const t = await db.topic("events", { maxRecords: 2 });
      await t.appendMany(["a", "b", "c", "d"]);
      await t.applyRetention();
      const error = await expectRejects(t.read({ from: 0 }), "OFFSET_OUT_OF_RANGE");
      expect(error.details).toEqual({ first: 2, next: 4 });
      expect((await t.read({ from: "earliest" })).map((r) => r.value)).toEqual(["c", "d"]);
    }));

  it("keeps offsets and groups across a reopen; deleted topics are gone", async () => {
    const path = freshPath("topic");
    let db = await open(path, { engineThread });
    let t = await db.topic("events");
    await t.appendMany(["a", "b"]);
    await t.commit("g", 1);
    await db.close();
    db = await open(path, { engineThread });
    t = await db.topic("events");
    expect(await t.append("c")).toBe(2);
    expect(await t.committed("g")).toBe(1);
    expect(await db.deleteTopic("events")).toBe(true);
    expect(await db.topics()).toEqual([]);
    await db.close();
  });
});
