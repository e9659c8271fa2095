// Durable queues through the synchronous API (openSync): FIFO, reliable reads with leases,
// delivery limits, groups, limits, batches atomic with puts, reopen, typed errors.
import { describe, expect, it } from "vitest";

import { openSync, type SyncDatabase } from "shaledb";

import { expectCode, freshPath } from "./helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function withDb(body: (db: SyncDatabase<string, string>, path: string) => void | Promise<void>) {
  return async () => {
    const path = freshPath("queue");
    const db = openSync(path);
    try {
      await body(db, path);
    } finally {
      db.close();
    }
  };
}

describe("queues (synchronous API)", () => {
  it(
    "take returns items in push order and peek leaves them",
    withDb((db) => {
      const q = db.queue("jobs");
      expect(q.push("a")).toBe(1);
      expect(q.pushMany(["b", "c"])).toEqual([2, 3]);
      expect(q.peek()?.value).toBe("a");
      const first = q.take();
      expect(first).toMatchObject({ id: 1, value: "a", deliveries: 1, leaseUntil: undefined });
      expect(typeof first?.pushedAt).toBe("number");
      expect(q.takeMany(5).map((i) => i.value)).toEqual(["b", "c"]);
      expect(q.take()).toBeUndefined();
      expect(db.queues()).toEqual(["jobs"]);
    }),
  );

  it(
    "a reserved item is invisible until acked, released or its lease runs out",
    withDb(async (db) => {
      const q = db.queue("jobs");
      q.pushMany(["a", "b"]);
      const a = q.reserve({ leaseMs: 60_000 });
      expect(a).toMatchObject({ value: "a", deliveries: 1, lease: { id: 1, delivery: 1 } });
      expect(a?.leaseUntil).toBeGreaterThan(Date.now());
      const b = q.reserve({ leaseMs: 20 });
      expect(b?.value).toBe("b");
      expect(q.reserve()).toBeUndefined();
      q.release(a!);
      const again = q.reserve();
      expect(again).toMatchObject({ value: "a", deliveries: 2 });
      q.ack(again!);
      expectCode(() => q.ack(again!), "UNKNOWN_RESERVATION");
      await sleep(40);
      // b's lease ran out: it is back, and its old lease is refused.
      const b2 = q.reserve();
      expect(b2).toMatchObject({ value: "b", deliveries: 2 });
      expectCode(() => q.ack(b!), "LEASE_EXPIRED");
      expect(q.extend(b2!, 60_000)).toBeGreaterThan(Date.now() + 50_000);
      q.ackMany([b2!]);
      expect(q.stats()).toMatchObject({ items: 0, reserved: 0 });
    }),
  );

  it(
    "peekMany shows the next items in delivery order and changes nothing",
    withDb(async (db) => {
      const q = db.queue("jobs");
      q.pushMany(["a", "b", "c", "d"]);
      const a = q.reserve({ leaseMs: 60_000 });
      const b = q.reserve({ leaseMs: 60_000 });
      q.release(b!);
      expect(q.peekMany(10).map((i) => [i.value, i.deliveries, i.leaseUntil])).toEqual([
        ["b", 1, undefined],
        ["c", 0, undefined],
        ["d", 0, undefined],
      ]);
      expect(q.peekMany(2).map((i) => i.value)).toEqual(["b", "c"]);
      expect(q.takeMany(10).map((i) => i.value)).toEqual(["b", "c", "d"]);
      q.ack(a!);
      expect(q.peekMany(5)).toEqual([]);
    }),
  );

  // Issue 22: a second release, or an ack after a release, was LEASE_EXPIRED.
  it(
    "a reservation its holder released is UNKNOWN_RESERVATION to a second release, an ack or an extend",
    withDb(async (db) => {
      const q = db.queue("jobs");
      q.push("a");
      const a = q.reserve({ leaseMs: 60_000 });
      q.release(a!, { delayMs: 60_000 });
      expectCode(() => q.release(a!), "UNKNOWN_RESERVATION");
      expectCode(() => q.ack(a!), "UNKNOWN_RESERVATION");
      expectCode(() => q.extend(a!, 1_000), "UNKNOWN_RESERVATION");
    }),
  );

  it("reservations open when the database closed are delivered again after reopen", async () => {
    const path = freshPath("queue");
    let db = openSync(path);
    const q = db.queue("jobs", { valueEncoding: "json" });
    q.pushMany([{ n: 1 }, { n: 2 }]);
    expect(q.reserve({ leaseMs: 600_000 })?.value).toEqual({ n: 1 });
    db.close();
    db = openSync(path);
    const again = db.queue("jobs", { valueEncoding: "json" }).reserveMany(5);
    expect(again.map((i) => [i.value, i.deliveries])).toEqual([
      [{ n: 1 }, 2],
      [{ n: 2 }, 1],
    ]);
    db.close();
  });

  it(
    "an item delivered maxDeliveries times moves to the dead-letter queue",
    withDb((db) => {
      const q = db.queue("jobs", { maxDeliveries: 2 });
      q.push("poison");
      q.release(q.reserve()!);
      q.release(q.reserve()!);
      expect(q.reserve()).toBeUndefined();
      expect(db.queue("jobs.dead").take()?.value).toBe("poison");
      expect(q.stats().deadLettered).toBe(1);
    }),
  );

  it(
    "every group sees every item with its own position",
    withDb((db) => {
      const q = db.queue("events");
      const audit = q.group("audit", { start: "tail" });
      q.pushMany(["x", "y"]);
      expect(q.take()?.value).toBe("x");
      expect(audit.takeMany(10).map((i) => i.value)).toEqual(["x", "y"]);
      expect(q.groups()).toEqual(["", "audit"]);
      expect(q.stats().groups).toEqual([
        { name: "", lag: 1, reserved: 0 },
        { name: "audit", lag: 0, reserved: 0 },
      ]);
      expect(q.removeGroup("audit")).toBe(true);
      expect(q.removeGroup("audit")).toBe(false);
    }),
  );

  it(
    "a full queue rejects pushes with QUEUE_FULL or discards its oldest items",
    withDb((db) => {
      const strict = db.queue("strict", { maxItems: 2 });
      strict.pushMany(["a", "b"]);
      expectCode(() => strict.push("c"), "QUEUE_FULL");
      const lossy = db.queue("lossy", { maxItems: 2, whenFull: "discardOldest" });
      for (const v of ["a", "b", "c"]) lossy.push(v);
      expect(lossy.takeMany(5).map((i) => i.value)).toEqual(["b", "c"]);
    }),
  );

  it(
    "opening a queue without settings keeps its stored options",
    withDb((db) => {
      db.queue("q", { maxItems: 1 }).push("a");
      expectCode(() => db.queue("q").push("b"), "QUEUE_FULL");
      db.queue("q", { maxItems: 5 }).push("b");
    }),
  );

  it(
    "delayed and expiring items follow the clock",
    withDb(async (db) => {
      const q = db.queue("q");
      q.push("later", { delayMs: 30 });
      q.push("gone", { ttlMs: 10 });
      await sleep(50);
      expect(q.takeMany(5).map((i) => i.value)).toEqual(["later"]);
    }),
  );

  it(
    "a batch commits pushes and acks atomically with puts and returns the push ids",
    withDb((db) => {
      const q = db.queue("jobs");
      q.push("old");
      const old = q.reserve()!;
      const ids = db.batch([
        { type: "put", key: "photo:1", value: "..." },
        { type: "push", queue: q, value: "resize 1" },
        { type: "ack", queue: q, lease: old },
        { type: "push", queue: q, value: "resize 2", delayMs: 0 },
      ]);
      expect(ids).toEqual([2, 3]);
      expect(db.get("photo:1")).toBe("...");
      expect(q.stats().reserved).toBe(0);
      // An ack of an unknown reservation fails the whole batch: the put is not written.
      expectCode(
        () =>
          db.batch([
            { type: "put", key: "photo:2", value: "..." },
            { type: "push", queue: q, value: "resize 3" },
            { type: "ack", queue: q, lease: { id: 99, delivery: 1 } },
          ]),
        "UNKNOWN_RESERVATION",
      );
      expect(db.get("photo:2")).toBeUndefined();
      expect(q.takeMany(10).map((i) => i.value)).toEqual(["resize 1", "resize 2"]);
      expect(db.batch([{ type: "put", key: "k", value: "v" }])).toEqual([]);
    }),
  );

  it(
    "a transaction commits pushes and acks with its writes, returns the push ids, and a conflict writes none",
    withDb((db) => {
      const q = db.queue("jobs");
      q.push("first");
      const first = q.reserve()!;
      const tx = db.transaction();
      tx.put("order:1", "paid");
      tx.push(q, "ship 1");
      tx.ack(q, first);
      tx.push(q, "mail 1", { delayMs: 0 });
      expect(tx.commit()).toEqual([2, 3]);
      expect(db.get("order:1")).toBe("paid");
      expect(q.stats()).toMatchObject({ items: 2, reserved: 0 });

      const a = db.transaction();
      a.get("order:1");
      a.push(q, "lost");
      db.put("order:1", "refunded");
      expectCode(() => a.commit(), "CONFLICT");
      expect(q.takeMany(10).map((i) => i.value)).toEqual(["ship 1", "mail 1"]);
      expect(db.transaction().commit()).toEqual([]);
    }),
  );

  it(
    "the synchronous API refuses to wait",
    withDb((db) => {
      const q = db.queue("q");
      expectCode(() => q.take({ waitMs: 10 }), "INVALID_ARGUMENT");
      expectCode(() => q.reserve({ waitMs: 10 }), "INVALID_ARGUMENT");
      expect(q.take({ waitMs: 0 })).toBeUndefined();
    }),
  );

  it(
    "a deleted queue's handles stop working and clear empties a queue",
    withDb((db) => {
      const q = db.queue("q");
      q.pushMany(["a", "b"]);
      q.clear();
      expect(q.stats()).toMatchObject({ items: 0, bytes: 0, oldestAgeMs: undefined });
      expect(db.deleteQueue("q")).toBe(true);
      expect(db.deleteQueue("q")).toBe(false);
      expectCode(() => q.push("c"), "INVALID_ARGUMENT");
      expect(db.queues()).toEqual([]);
      expect(db.queue("q").take()).toBeUndefined();
    }),
  );

  it(
    "binary values and a closed database",
    withDb((db) => {
      const q = db.queue("bin", { valueEncoding: "binary" });
      q.push(new Uint8Array([1, 2, 3]));
      expect(q.take()?.value).toEqual(new Uint8Array([1, 2, 3]));
      db.close();
      expectCode(() => q.push(new Uint8Array(1)), "CLOSED");
    }),
  );
});
