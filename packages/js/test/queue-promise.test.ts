// Durable queues through the Promise API (open), with the engine in a worker thread and in the
// caller's thread: the same behaviours as the synchronous API, plus reads that wait (woken by
// pushes of other callers, by leases falling due, ended by waitMs and by close) and the consume
// loop.
import { describe, expect, it } from "vitest";

import { open, type Database, type Job } from "shaledb";

import { expectRejects, freshPath } from "./helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(["own", "caller"] as const)("queues (Promise API, engine thread: %s)", (engineThread) => {
  async function withDb(body: (db: Database<string, string>, path: string) => Promise<void>): Promise<void> {
    const path = freshPath("queue");
    const db = await open(path, { engineThread });
    try {
      await body(db, path);
    } finally {
      await db.close();
    }
  }

  it("takes, peeks, reserves, acks and releases in push order", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      expect(await q.push("a")).toBe(1);
      expect(await q.pushMany(["b", "c", "d"])).toEqual([2, 3, 4]);
      expect((await q.peek())?.value).toBe("a");
      expect((await q.take())?.value).toBe("a");
      const b = await q.reserve({ leaseMs: 60_000 });
      expect(b).toMatchObject({ value: "b", deliveries: 1, lease: { id: 2, delivery: 1 } });
      const [c, d] = await q.reserveMany(5);
      expect([c?.value, d?.value]).toEqual(["c", "d"]);
      await q.release(b!);
      await q.ackMany([c!, d!]);
      await expectRejects(q.ack(c!), "UNKNOWN_RESERVATION");
      const again = await q.reserve();
      expect(again).toMatchObject({ value: "b", deliveries: 2 });
      expect(await q.extend(again!, 60_000)).toBeGreaterThan(Date.now() + 50_000);
      await q.ack(again!);
      expect(await q.takeMany(3)).toEqual([]);
      expect(await q.stats()).toMatchObject({ items: 0, reserved: 0 });
      expect(await db.queues()).toEqual(["jobs"]);
    }));

  it("peekMany shows the next items in delivery order and changes nothing", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      await q.pushMany(["a", "b", "c"]);
      await q.reserve({ leaseMs: 60_000 });
      expect((await q.peekMany(10)).map((i) => i.value)).toEqual(["b", "c"]);
      expect((await q.takeMany(10)).map((i) => i.value)).toEqual(["b", "c"]);
    }));

  // Issue 22: a second release, or an ack after a release, was LEASE_EXPIRED.
  it("a reservation its holder released is UNKNOWN_RESERVATION to a second release, an ack or an extend", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      await q.push("a");
      const a = await q.reserve({ leaseMs: 60_000 });
      await q.release(a!, { delayMs: 60_000 });
      await expectRejects(q.release(a!), "UNKNOWN_RESERVATION");
      await expectRejects(q.ack(a!), "UNKNOWN_RESERVATION");
      await expectRejects(q.extend(a!, 1_000), "UNKNOWN_RESERVATION");
    }));

  it("a wait is woken by a push of another caller, not by polling", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      const other = await db.queue("jobs");
      const started = Date.now();
      const waiting = q.reserve({ waitMs: 10_000 });
      const takeWaiting = q.take({ waitMs: 10_000 });
      await sleep(50);
      await other.pushMany(["x", "y"]);
      const [reserved, taken] = await Promise.all([waiting, takeWaiting]);
      expect([reserved?.value, taken?.value].sort()).toEqual(["x", "y"]);
      expect(Date.now() - started).toBeLessThan(5_000);
    }));

  it("a wait is woken by a release and by a lease running out, and ends empty after waitMs", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      await q.push("a");
      const held = await q.reserve({ leaseMs: 100 });
      const started = Date.now();
      const back = await q.reserve({ waitMs: 10_000 });
      expect(back).toMatchObject({ value: "a", deliveries: 2 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(80);
      expect(Date.now() - started).toBeLessThan(5_000);
      await expectRejects(q.ack(held!), "LEASE_EXPIRED");
      const waiting = q.reserve({ waitMs: 10_000 });
      await sleep(20);
      await q.release(back!);
      expect((await waiting)?.deliveries).toBe(3);
      const t0 = Date.now();
      expect(await q.take({ waitMs: 60 })).toBeUndefined();
      expect(Date.now() - t0).toBeGreaterThanOrEqual(50);
    }));

  it("a delayed push wakes a waiting read once its delay has passed", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      const waiting = q.take({ waitMs: 10_000 });
      const t0 = Date.now();
      await q.push("later", { delayMs: 100 });
      expect((await waiting)?.value).toBe("later");
      expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    }));

  it("closing the database ends waiting reads with nothing", async () => {
    const db = await open(freshPath("queue"), { engineThread });
    const q = await db.queue("jobs");
    const waiting = q.reserve({ waitMs: 60_000 });
    await sleep(20);
    const t0 = Date.now();
    await db.close();
    expect(await waiting).toBeUndefined();
    expect(Date.now() - t0).toBeLessThan(5_000);
    // Issue 22: a consume loop started once the database is closed is CLOSED, not an empty queue.
    await expectRejects(q.consume().next(), "CLOSED");
  });

  it("reservations open at close are delivered again after reopen", async () => {
    const path = freshPath("queue");
    let db = await open(path, { engineThread });
    let q = await db.queue("jobs", { valueEncoding: "json" });
    await q.pushMany([{ n: 1 }, { n: 2 }]);
    expect((await q.reserve({ leaseMs: 600_000 }))?.value).toEqual({ n: 1 });
    await db.close();
    db = await open(path, { engineThread });
    q = await db.queue("jobs", { valueEncoding: "json" });
    const items = await q.reserveMany(5);
    expect(items.map((i) => [i.value, i.deliveries])).toEqual([
      [{ n: 1 }, 2],
      [{ n: 2 }, 1],
    ]);
    await db.close();
  });

  it("a batch commits pushes and acks atomically with puts and resolves with the push ids", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      const audit = await q.group("audit", { start: "head" });
      await q.push("old");
      const old = await audit.reserve();
      const ids = await db.batch([
        { type: "put", key: "photo:1", value: "..." },
        { type: "push", queue: q, value: "resize 1" },
        { type: "ack", queue: audit, lease: old! },
      ]);
      expect(ids).toEqual([2]);
      expect(await db.get("photo:1")).toBe("...");
      expect((await q.stats()).groups).toEqual([
        { name: "", lag: 2, reserved: 0 },
        { name: "audit", lag: 1, reserved: 0 },
      ]);
      await expectRejects(
        db.batch([
          { type: "put", key: "photo:2", value: "..." },
          { type: "ack", queue: q, lease: { id: 42, delivery: 1 } },
        ]),
        "UNKNOWN_RESERVATION",
      );
      expect(await db.get("photo:2")).toBeUndefined();
      expect(await db.batch([{ type: "put", key: "k", value: "v" }])).toEqual([]);
    }));

  it("a transaction commits pushes and acks with its writes, resolves with the push ids, and wakes waits", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      await q.push("first");
      const first = await q.reserve();
      const waiting = q.take({ waitMs: 10_000 });
      const ids = await db.transact(async (tx) => {
        await tx.get("order:1");
        tx.put("order:1", "paid");
        tx.push(q, "ship 1");
        tx.ack(q, first!);
        return "done";
      });
      expect(ids).toBe("done");
      expect((await waiting)?.value).toBe("ship 1");
      expect(await db.get("order:1")).toBe("paid");
      const tx = await db.transaction();
      tx.push(q, "a");
      tx.push(q, "b");
      expect(await tx.commit()).toEqual([3, 4]);
      const bad = await db.transaction();
      bad.put("order:2", "x");
      bad.ack(q, { id: 99, delivery: 1 });
      await expectRejects(bad.commit(), "UNKNOWN_RESERVATION");
      expect(await db.get("order:2")).toBeUndefined();
    }));

  it("a batch push wakes a waiting read", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      const waiting = q.take({ waitMs: 10_000 });
      await sleep(20);
      await db.batch([{ type: "push", queue: q, value: "from a batch" }]);
      expect((await waiting)?.value).toBe("from a batch");
    }));

  it("groups, limits, dead letters, clear and delete", () =>
    withDb(async (db) => {
      const q = await db.queue("events", { maxItems: 3, maxDeliveries: 1 });
      const audit = await q.group("audit");
      await q.pushMany(["a", "b", "c"]);
      await expectRejects(q.push("d"), "QUEUE_FULL");
      expect((await audit.takeMany(5)).map((i) => i.value)).toEqual(["a", "b", "c"]);
      expect(await q.groups()).toEqual(["", "audit"]);
      const dead = await db.queue("events.dead");
      const deadWait = dead.take({ waitMs: 10_000 });
      await q.release((await q.reserve())!);
      // Delivered once already: the next read moves it to the dead-letter queue.
      expect((await q.reserve())?.value).toBe("b");
      expect((await deadWait)?.value).toBe("a");
      expect(await q.removeGroup("audit")).toBe(true);
      await q.clear();
      expect((await q.stats()).items).toBe(0);
      expect(await db.deleteQueue("events")).toBe(true);
      expect(await db.queues()).toEqual(["events.dead"]);
    }));

  it("consume hands out up to `concurrency` jobs at once and releases what it holds when the loop breaks", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      const ids = await q.pushMany(Array.from({ length: 20 }, (_, i) => `job ${i}`));
      let running = 0;
      let most = 0;
      const done: string[] = [];
      const work: Promise<void>[] = [];
      for await (const job of q.consume({ concurrency: 4, leaseMs: 60_000 })) {
        running += 1;
        most = Math.max(most, running);
        work.push(
          sleep(5).then(async () => {
            done.push(job.value);
            running -= 1;
            await job.ack();
          }),
        );
        if (done.length + running >= 20) break;
      }
      await Promise.all(work);
      expect(most).toBe(4);
      expect(done.sort()).toEqual(ids.map((i) => `job ${i - 1}`).sort());
      expect(await q.stats()).toMatchObject({ items: 0, reserved: 0 });
    }));

  it("consume waits for pushes and stops when its signal aborts", () =>
    withDb(async (db) => {
      const q = await db.queue("jobs");
      const controller = new AbortController();
      const seen: Job<string>[] = [];
      const loop = (async () => {
        for await (const job of q.consume({ signal: controller.signal })) {
          seen.push(job);
          await job.ack();
        }
      })();
      await sleep(30);
      await q.push("one");
      while (seen.length === 0) await sleep(5);
      const t0 = Date.now();
      controller.abort();
      await loop;
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(seen.map((j) => j.value)).toEqual(["one"]);
      // A job released goes back to the queue.
      await q.push("two");
      for await (const job of q.consume()) {
        await job.release();
        break;
      }
      expect((await q.take())?.value).toBe("two");
    }));
});
