// The Promise API in a real browser page (headless Chromium), served by the package's own worker
// on OPFS: the same names, options and error codes as in Node.
import type { TestPage as Page } from "./fixtures/browser.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { Session } from "./fixtures/session.js";

const session = new Session();
let page: Page;

beforeAll(async () => {
  await session.start();
  page = await session.page();
});

afterAll(async () => {
  await session.stop();
});

describe("reads and writes", () => {
  it("puts, gets, deletes and reports missing keys as undefined", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("crud");
      await db.put("a", "1");
      await db.put("b", "2");
      await db.delete("b");
      const out = {
        a: await db.get("a"),
        b: await db.get("b"),
        hasA: await db.has("a"),
        hasB: await db.has("b"),
        many: await db.getMany(["a", "b", "c"]),
        location: db.location,
      };
      await db.close();
      return out;
    });
    expect(result).toEqual({
      a: "1",
      b: undefined,
      hasA: true,
      hasB: false,
      many: ["1", undefined, undefined],
      location: "crud",
    });
  });

  it("keeps every encoding's values: utf8, binary and json", async () => {
    const result = await page.evaluate(async () => {
      const json = await shaledb.open("encodings", { valueEncoding: "json" });
      await json.put("doc", { n: 1, list: [true, null, "é😀"] });
      const doc = await json.get("doc");
      await json.close();
      const bin = await shaledb.open("encodings-bin", { keyEncoding: "binary", valueEncoding: "binary" });
      await bin.put(new Uint8Array([0, 255, 1]), new Uint8Array(100_000).fill(7));
      const value = await bin.get(new Uint8Array([0, 255, 1]));
      await bin.close();
      return { doc, length: value?.length, first: value?.[0], isBytes: value instanceof Uint8Array };
    });
    expect(result).toEqual({ doc: { n: 1, list: [true, null, "é😀"] }, length: 100_000, first: 7, isBytes: true });
  });

  it("takes binary keys, values and bounds that are views into larger buffers", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("views", { keyEncoding: "binary", valueEncoding: "binary" });
      const big = new Uint8Array(1 << 20).map((_, i) => i & 255);
      await db.put(big.subarray(10, 14), big.subarray(100, 104));
      const out = {
        value: Array.from((await db.get(big.subarray(10, 14))) ?? []),
        keys: (await db.keys({ gte: big.subarray(10, 12) }).all()).map((k) => Array.from(k)),
      };
      await db.close();
      return out;
    });
    expect(result).toEqual({ value: [100, 101, 102, 103], keys: [[10, 11, 12, 13]] });
  });

  // Regression: a request crosses to the worker in a microtask after the call, and carried the
  // caller's own Uint8Array, so a key or value changed right after the call was written changed.
  it("uses a binary key or value as it was at the call, though the caller changes it right after", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("changed-after", { keyEncoding: "binary", valueEncoding: "binary" });
      const key = new Uint8Array([0, 255, 1]);
      const value = new Uint8Array([9, 8, 7]);
      const written = db.put(key, value);
      key[0] = 42;
      value[0] = 42;
      await written;
      const out = {
        value: Array.from((await db.get(new Uint8Array([0, 255, 1]))) ?? []),
        changed: await db.get(new Uint8Array([42, 255, 1])),
      };
      await db.close();
      return out;
    });
    expect(result).toEqual({ value: [9, 8, 7], changed: undefined });
  });

  it("writes a chained batch and an array batch atomically, across keyspaces", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("batches");
      const events = await db.keyspace("events", { valueEncoding: "json" });
      await db.put("gone", "x");
      const batch = db.batch().put("k1", "v1").put("e1", { type: "signup" }, events).delete("gone");
      const queued = batch.length;
      await batch.write();
      await db.batch([
        { type: "put", key: "k2", value: "v2" },
        { type: "delete", key: "k1" },
      ]);
      const out = {
        queued,
        k1: await db.get("k1"),
        k2: await db.get("k2"),
        gone: await db.get("gone"),
        e1: await events.get("e1"),
        eventsName: events.name,
      };
      await db.close();
      return out;
    });
    expect(result).toEqual({
      queued: 3,
      k1: undefined,
      k2: "v2",
      gone: undefined,
      e1: { type: "signup" },
      eventsName: "events",
    });
  });

  it("deletes a range with one tombstone", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("ranges");
      await db.batch(["a", "b", "c", "d"].map((key) => ({ type: "put" as const, key, value: key })));
      await db.deleteRange({ gte: "b", lt: "d" });
      const keys = await db.keys().all();
      await db.close();
      return keys;
    });
    expect(result).toEqual(["a", "d"]);
  });
});

describe("writes made together", () => {
  it("are written as one group, and a bad one among them fails alone", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("together", { keyEncoding: "binary", valueEncoding: "binary" });
      const key = (i: number): Uint8Array => new TextEncoder().encode(`k${String(i).padStart(4, "0")}`);
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 500; i++) {
        writes.push(i === 250 ? db.put(new Uint8Array(70_000), new Uint8Array(1)) : db.put(key(i), new Uint8Array([i & 255])));
        if (i % 100 === 0) writes.push(db.delete(key(i)));
      }
      writes.push(db.batch().put(key(9999), new Uint8Array([9])).write());
      const outcomes = await Promise.all(writes.map((w) => outcome(w)));
      const failed = outcomes.filter((o) => o !== null).map((o) => o?.code);
      const result = { failed, count: await db.count(), k9999: Array.from((await db.get(key(9999))) ?? []) };
      await db.close();
      return result;
    });
    // 500 puts, one refused (its key is over 64 KiB), 5 deleted right after their put, one batch.
    expect(result).toEqual({ failed: ["INVALID_ARGUMENT"], count: 500 - 1 - 5 + 1, k9999: [9] });
  });
});

describe("iteration", () => {
  it("streams entries in order, in reverse, by prefix, with bounds and limits", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("iteration");
      const batch = db.batch();
      for (let i = 0; i < 5000; i++) {
        batch.put(`k${String(i).padStart(5, "0")}`, `v${i}`);
      }
      batch.put("other", "x");
      await batch.write();
      const all = await db.iterator({ prefix: "k" }).all();
      const reversed = await db.keys({ prefix: "k", reverse: true, limit: 3 }).all();
      const bounded = await db.values({ gt: "k00010", lte: "k00013" }).all();
      let looped = 0;
      for await (const [key] of db.iterator({ gte: "k01000" })) {
        if (key === "k01005") break;
        looped++;
      }
      const count = await db.count({ prefix: "k" });
      const limited = await db.count({ prefix: "k", limit: 10 });
      await db.close();
      return {
        n: all.length,
        first: all[0],
        last: all[all.length - 1],
        ordered: all.every((e, i) => i === 0 || (all[i - 1] as [string, string])[0] < e[0]),
        reversed,
        bounded,
        looped,
        count,
        limited,
      };
    });
    expect(result).toEqual({
      n: 5000,
      first: ["k00000", "v0"],
      last: ["k04999", "v4999"],
      ordered: true,
      reversed: ["k04999", "k04998", "k04997"],
      bounded: ["v11", "v12", "v13"],
      looped: 5,
      count: 5000,
      limited: 10,
    });
  });

  it("iterators and snapshots see one consistent state while writes go on", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("snapshots");
      await db.put("a", "old");
      const snapshot = await db.snapshot();
      const it = db.iterator();
      await db.put("a", "new");
      await db.put("b", "added");
      const out = {
        latest: await db.get("a"),
        viaSnapshot: await db.get("a", { snapshot }),
        countViaSnapshot: await db.count({ snapshot }),
        iterated: await it.all(),
      };
      snapshot.close();
      const closedRead = await outcome(db.get("a", { snapshot }));
      await db.close();
      return { ...out, closed: snapshot.closed, closedRead: closedRead?.code };
    });
    expect(result).toEqual({
      latest: "new",
      viaSnapshot: "old",
      countViaSnapshot: 1,
      iterated: [["a", "new"], ["b", "added"]],
      closed: true,
      closedRead: "CLOSED",
    });
  });
});

describe("transactions", () => {
  it("commits, and fails with CONFLICT when a read key changed; transact retries", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("transactions", { valueEncoding: "json" });
      await db.put("n", 0);
      const tx = await db.transaction();
      const read = await tx.get("n");
      tx.put("n", 100);
      const ownWrite = await tx.get("n");
      await db.put("n", 1); // someone else writes what tx read
      const conflict = await outcome(tx.commit());
      let attempts = 0;
      const final = await db.transact(async (t) => {
        attempts++;
        const n = ((await t.get("n")) as number) + 1;
        if (attempts === 1) await db.put("n", 10); // a conflicting write during the first attempt
        t.put("n", n);
        return n;
      });
      const out = { read, ownWrite, conflict: conflict?.code, attempts, final, stored: await db.get("n") };
      await db.close();
      return out;
    });
    expect(result).toEqual({ read: 0, ownWrite: 100, conflict: "CONFLICT", attempts: 2, final: 11, stored: 11 });
  });
});

describe("maintenance and tools", () => {
  it("flushes, compacts, checkpoints into a new database and reports stats", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("tools", { memtableSize: 256 << 10 });
      const value = "x".repeat(200);
      for (let b = 0; b < 20; b++) {
        const batch = db.batch();
        for (let i = 0; i < 500; i++) batch.put(`k${b}-${i}`, value);
        await batch.write();
      }
      await db.flush();
      await db.compact();
      while (await db.maintain(1 << 20)) {
        // until no work is pending
      }
      const stats = await db.stats();
      await db.checkpoint("tools-copy");
      const exists = await outcome(db.checkpoint("tools-copy"));
      await db.close();
      const copy = await shaledb.open("tools-copy", { createIfMissing: false });
      const copied = await copy.count();
      await copy.close();
      const names = await shaledb.listDatabases();
      await shaledb.deleteDatabase("tools-copy");
      return {
        entries: stats.entries,
        tables: stats.levels.reduce((n, l) => n + l.files, 0),
        persistedIsBoolean: typeof stats.persisted === "boolean",
        slots: stats.slots.used > 0 && stats.slots.free >= 0,
        exists: exists?.code,
        copied,
        listed: names.includes("tools") && names.includes("tools-copy"),
        afterDelete: (await shaledb.listDatabases()).includes("tools-copy"),
      };
    });
    expect(result).toEqual({
      entries: 10_000,
      tables: expect.any(Number),
      persistedIsBoolean: true,
      slots: true,
      exists: "ALREADY_EXISTS",
      copied: 10_000,
      listed: true,
      afterDelete: false,
    });
    expect(result.tables).toBeGreaterThan(0);
  });

  it("createIfMissing: false is NOT_FOUND, errorIfExists: true is ALREADY_EXISTS", async () => {
    const result = await page.evaluate(async () => {
      const missing = await outcome(shaledb.open("never-created", { createIfMissing: false }));
      const db = await shaledb.open("exists");
      await db.close();
      const exists = await outcome(shaledb.open("exists", { errorIfExists: true }));
      return { missing: missing?.code, exists: exists?.code, listed: (await shaledb.listDatabases()).includes("never-created") };
    });
    expect(result).toEqual({ missing: "NOT_FOUND", exists: "ALREADY_EXISTS", listed: false });
  });

  it("a closed database rejects every call with CLOSED; close is idempotent", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("closing");
      await db.put("a", "1");
      const it = db.iterator();
      await db.close();
      await db.close();
      return {
        closed: db.closed,
        get: (await outcome(db.get("a")))?.code,
        put: (await outcome(db.put("a", "2")))?.code,
        next: (await outcome(it.next()))?.code,
        batch: (() => {
          try {
            db.batch();
            return null;
          } catch (error) {
            return (error as { code?: string }).code;
          }
        })(),
      };
    });
    expect(result).toEqual({ closed: true, get: "CLOSED", put: "CLOSED", next: "CLOSED", batch: "CLOSED" });
  });
});
