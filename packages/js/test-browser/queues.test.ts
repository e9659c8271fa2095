// Durable queues in the browser: the same Promise API as Node (OPFS, the engine in the owner's
// worker), and a read waiting in one tab woken by a push from another tab, through the owner.
import { describe, expect, it } from "vitest";

import { appWorker } from "./fixtures/app-worker.js";
import { type Db, openIn } from "./fixtures/open-in.js";
import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

describe("queues in the browser", () => {
  it("push, reserve, ack, release, batches, groups, limits and consume work as in Node", async () => {
    const page = await session.page();
    await openIn(page, "queues-api");
    const result = await page.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const q = await db.queue("jobs", { maxItems: 10 });
      const ids = await q.pushMany(["a", "b", "c"]);
      const a = await q.reserve({ leaseMs: 60_000 });
      await q.release(a!);
      const again = await q.reserve();
      await q.ack(again!);
      let ackError = "";
      try {
        await q.ack(again!);
      } catch (error) {
        ackError = (error as { code: string }).code;
      }
      const batchIds = await db.batch([
        { type: "put", key: "photo", value: "..." },
        { type: "push", queue: q, value: "d" },
      ]);
      const audit = await q.group("audit", { start: "head" });
      const auditValues = (await audit.takeMany(10)).map((i) => i.value);
      const consumed: string[] = [];
      for await (const job of q.consume({ concurrency: 2 })) {
        consumed.push(job.value);
        await job.ack();
        if (consumed.length === 3) break;
      }
      const full = await db.queue("small", { maxItems: 1 });
      await full.push("x");
      let fullError = "";
      try {
        await full.push("y");
      } catch (error) {
        fullError = (error as { code: string }).code;
      }
      const t0 = Date.now();
      const waiting = q.take({ waitMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 30));
      await q.push("late");
      const late = await waiting;
      return {
        ids,
        again: [again?.value, again?.deliveries],
        ackError,
        batchIds,
        photo: await db.get("photo"),
        auditValues,
        consumed,
        fullError,
        late: late?.value,
        waitedMs: Date.now() - t0,
        queues: await db.queues(),
      };
    });
    expect(result).toMatchObject({
      ids: [1, 2, 3],
      again: ["a", 2],
      ackError: "UNKNOWN_RESERVATION",
      batchIds: [4],
      photo: "...",
      auditValues: ["b", "c", "d"],
      consumed: ["b", "c", "d"],
      fullError: "QUEUE_FULL",
      late: "late",
      queues: ["jobs", "small"],
    });
    expect(result.waitedMs).toBeLessThan(5_000);
    await page.close();
  });

  it("a read waiting in one tab is woken by a push from another tab", async () => {
    const [a, b] = [await session.page(), await session.page()];
    await openIn(a, "queues-tabs");
    await openIn(b, "queues-tabs");
    const waiting = a.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const q = await db.queue("jobs");
      const t0 = Date.now();
      const item = await q.reserve({ waitMs: 20_000 });
      if (item !== undefined) await q.ack(item);
      return { value: item?.value, waitedMs: Date.now() - t0 };
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await b.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const q = await db.queue("jobs");
      await q.push("from tab b");
    });
    const got = await waiting;
    expect(got.value).toBe("from tab b");
    expect(got.waitedMs).toBeLessThan(15_000);
    await a.close();
    await b.close();
  });

  it("a reservation open when the owner tab closed is delivered again by the next owner", async () => {
    const [a, b] = [await session.page(), await session.page()];
    await openIn(a, "queues-takeover");
    await a.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const q = await db.queue("jobs");
      await q.push("job");
      await q.reserve({ leaseMs: 600_000 });
    });
    await a.close();
    await openIn(b, "queues-takeover");
    const again = await b.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const item = await (await db.queue("jobs")).reserve();
      return [item?.value, item?.deliveries];
    });
    expect(again).toEqual(["job", 2]);
    await b.close();
  });

  it("openInWorker's synchronous queues work, refuse to wait, and wake a page's wait served by the worker", async () => {
    const [a, b] = [await session.page(), await session.page()];
    const run = await appWorker(a);
    const first = await run(`
      state.db = await shaledb.openInWorker("queues-own-worker");
      const q = state.db.queue("jobs");
      q.pushMany(["a", "b"]);
      const item = q.reserve();
      q.ack(item);
      let code = "";
      try { q.take({ waitMs: 10 }); } catch (error) { code = error.code; }
      return { value: item.value, code, next: q.peek().value };
    `);
    expect(first).toMatchObject({ ok: true, value: { value: "a", code: "INVALID_ARGUMENT", next: "b" } });
    await openIn(b, "queues-own-worker");
    const waiting = b.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const q = await db.queue("jobs");
      await q.take();
      return (await q.take({ waitMs: 20_000 }))?.value;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await run(`state.db.queue("jobs").push("from the worker"); return true;`)).toMatchObject({ ok: true, value: true });
    expect(await waiting).toBe("from the worker");
    await run(`await state.db.close(); return true;`);
    await a.close();
    await b.close();
  });
});
