// Bad input to every queue method gets INVALID_ARGUMENT (never a TypeError or a silent
// default), from the synchronous and the Promise API alike, and changes nothing.
import { describe, expect, it } from "vitest";

import { open, openSync, type Database, type Queue, type SyncDatabase } from "shaledb";

import { expectCode, expectRejects, freshPath } from "./helpers.js";

/** Any queue, sync or Promise: the calls below go through it untyped, as bad callers do. */
type Fn = (...args: unknown[]) => unknown;
interface AnyQueue {
  push: Fn;
  pushMany: Fn;
  take: Fn;
  takeMany: Fn;
  reserve: Fn;
  reserveMany: Fn;
  ack: Fn;
  ackMany: Fn;
  release: Fn;
  extend: Fn;
  group: Fn;
  removeGroup: Fn;
}
interface AnyDb {
  queue: Fn;
  deleteQueue: Fn;
  batch: Fn;
}

const LONG_NAME = "q".repeat(201);
const LEASE = { id: 1, delivery: 1 };

/** [what, call]: each must fail with INVALID_ARGUMENT. */
const QUEUE_CASES: [string, (q: AnyQueue, other: unknown) => unknown][] = [
  ["push: a number for a utf8 queue", (q) => q.push(5)],
  ["push: null", (q) => q.push(null)],
  ["push: a lone surrogate", (q) => q.push("\uD800")],
  ["push: options null", (q) => q.push("a", null)],
  ["push: delayMs negative", (q) => q.push("a", { delayMs: -1 })],
  ["push: ttlMs a string", (q) => q.push("a", { ttlMs: "5" })],
  ["push: sync a number", (q) => q.push("a", { sync: 1 })],
  ["pushMany: not an array", (q) => q.pushMany("abc")],
  ["pushMany: a bad value inside", (q) => q.pushMany(["a", 5])],
  ["pushMany: too many values", (q) => q.pushMany(new Array(100_001).fill("a"))],
  ["take: waitMs fractional", (q) => q.take({ waitMs: 1.5 })],
  ["take: waitMs over 2^31 - 1", (q) => q.take({ waitMs: 2 ** 31 })],
  ["take: options a string", (q) => q.take("soon")],
  ["takeMany: n = 0", (q) => q.takeMany(0)],
  ["takeMany: n = null", (q) => q.takeMany(null)],
  ["takeMany: n over the limit", (q) => q.takeMany(100_001)],
  ["reserve: leaseMs 0", (q) => q.reserve({ leaseMs: 0 })],
  ["reserve: leaseMs NaN", (q) => q.reserve({ leaseMs: Number.NaN })],
  ["reserve: options null", (q) => q.reserve(null)],
  ["reserveMany: n a string", (q) => q.reserveMany("5")],
  ["reserveMany: leaseMs over 2^53", (q) => q.reserveMany(1, { leaseMs: 2 ** 54 })],
  ["ack: null", (q) => q.ack(null)],
  ["ack: a number", (q) => q.ack(5)],
  ["ack: a lease without delivery", (q) => q.ack({ id: 1 })],
  ["ack: an id of 0", (q) => q.ack({ id: 0, delivery: 1 })],
  ["ack: an item whose lease is null", (q) => q.ack({ id: 1, lease: null })],
  ["ackMany: not an array", (q) => q.ackMany(LEASE)],
  ["ackMany: a bad lease inside", (q) => q.ackMany([LEASE, "x"])],
  ["release: undefined", (q) => q.release(undefined)],
  ["release: delayMs negative", (q) => q.release(LEASE, { delayMs: -5 })],
  ["extend: leaseMs missing", (q) => q.extend(LEASE)],
  ["extend: leaseMs 0", (q) => q.extend(LEASE, 0)],
  ["group: an empty name", (q) => q.group("")],
  ["group: a name over 200 bytes", (q) => q.group(LONG_NAME)],
  ["group: start is neither head nor tail", (q) => q.group("g", { start: "middle" })],
  ["group: null", (q) => q.group(null)],
  ["removeGroup: a number", (q) => q.removeGroup(5)],
];

const DB_CASES: [string, (db: AnyDb, other: unknown) => unknown][] = [
  ["queue: no name", (db) => db.queue()],
  ["queue: an empty name", (db) => db.queue("")],
  ["queue: a name with NUL", (db) => db.queue("a\u0000b")],
  ["queue: a name over 200 bytes", (db) => db.queue(LONG_NAME)],
  ["queue: options null", (db) => db.queue("q", null)],
  ["queue: maxItems negative", (db) => db.queue("q", { maxItems: -1 })],
  ["queue: maxBytes a string", (db) => db.queue("q", { maxBytes: "1" })],
  ["queue: whenFull unknown", (db) => db.queue("q", { whenFull: "block" })],
  ["queue: maxDeliveries 0", (db) => db.queue("q", { maxDeliveries: 0 })],
  ["queue: deadLetter without maxDeliveries", (db) => db.queue("q", { deadLetter: "d" })],
  ["queue: deadLetter itself", (db) => db.queue("q", { maxDeliveries: 2, deadLetter: "q" })],
  ["queue: leaseMs 0", (db) => db.queue("q", { leaseMs: 0 })],
  ["queue: valueEncoding unknown", (db) => db.queue("q", { valueEncoding: "xml" })],
  ["deleteQueue: null", (db) => db.deleteQueue(null)],
  ["batch: push without a queue", (db) => db.batch([{ type: "put", key: "k", value: "changed" }, { type: "push", value: "v" }])],
  ["batch: push to a queue name", (db) => db.batch([{ type: "put", key: "k", value: "changed" }, { type: "push", queue: "jobs", value: "v" }])],
  ["batch: push to another database's queue", (db, other) => db.batch([{ type: "push", queue: other, value: "v" }])],
  ["batch: push a bad value", (db, other) => db.batch([{ type: "push", queue: other, value: 5 }])],
  ["batch: ack a bad lease", (db) => db.batch([{ type: "ack", queue: (db as unknown as { q: unknown }).q, lease: null }])],
  ["batch: push with a negative delay", (db) => db.batch([{ type: "push", queue: (db as unknown as { q: unknown }).q, value: "v", delayMs: -1 }])],
];

describe("queue arguments, synchronous API", () => {
  const db = openSync(freshPath("queue-args")) as SyncDatabase<string, string>;
  const otherDb = openSync(freshPath("queue-args-other"));
  const q = db.queue("jobs");
  const other = otherDb.queue("jobs");
  q.push("kept");
  db.put("k", "v");
  (db as unknown as { q: unknown }).q = q;

  it.each(QUEUE_CASES)("%s", (_what, call) => {
    expectCode(() => call(q as unknown as AnyQueue, other), "INVALID_ARGUMENT");
    expect(q.stats().items).toBe(1);
  });

  it.each(DB_CASES)("%s", (_what, call) => {
    expectCode(() => call(db as unknown as AnyDb, other), "INVALID_ARGUMENT");
    expect(db.get("k")).toBe("v");
    expect(db.queues()).toEqual(["jobs"]);
  });

  it("consume is not in the synchronous API", () => {
    expect((q as unknown as Partial<Queue<string>>).consume).toBeUndefined();
    db.close();
    otherDb.close();
  });
});

describe("queue arguments, Promise API", () => {
  let db: Database<string, string>;
  let otherDb: Database<string, string>;
  let q: Queue<string>;
  let other: Queue<string>;

  it("opens", async () => {
    db = await open(freshPath("queue-args"));
    otherDb = await open(freshPath("queue-args-other"));
    q = await db.queue("jobs");
    other = await otherDb.queue("jobs");
    await q.push("kept");
    await db.put("k", "v");
    (db as unknown as { q: unknown }).q = q;
  });

  it.each(QUEUE_CASES)("%s", async (_what, call) => {
    await expectRejects(Promise.resolve().then(() => call(q as unknown as AnyQueue, other)), "INVALID_ARGUMENT");
    expect((await q.stats()).items).toBe(1);
  });

  it.each(DB_CASES)("%s", async (_what, call) => {
    await expectRejects(Promise.resolve().then(() => call(db as unknown as AnyDb, other)), "INVALID_ARGUMENT");
    expect(await db.get("k")).toBe("v");
    expect(await db.queues()).toEqual(["jobs"]);
  });

  // Issue 22: consume(), subscribe() and changes() threw at the call, where every other
  // Promise-API method rejects.
  it("consume checks its options on the first pull, which rejects", async () => {
    await expectRejects(q.consume({ concurrency: 0 }).next(), "INVALID_ARGUMENT");
    await expectRejects(q.consume({ signal: {} as AbortSignal }).next(), "INVALID_ARGUMENT");
    const jobs = q.consume(null as unknown as undefined);
    await expectRejects(jobs.next(), "INVALID_ARGUMENT");
    expect(await jobs.next()).toEqual({ done: true, value: undefined });
  });

  it("closes", async () => {
    await db.close();
    await otherDb.close();
  });
});

