// openInWorker: the synchronous API in a dedicated worker of the application's own
// (test-browser/pages/own-worker.js runs the bodies these tests send it). The worker owns the
// database like the package's own worker: the same files, other pages served through it, a
// takeover when it closes; and a write that finds no OPFS file ready fails BUSY, writing nothing.
import { describe, expect, it } from "vitest";

import { appWorker, type Outcome } from "./fixtures/app-worker.js";
import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

/** The value of a run that must succeed. */
async function value(run: Promise<Outcome>): Promise<unknown> {
  const outcome = await run;
  if (!outcome.ok) {
    throw new Error(`the worker failed: ${outcome.error.code ?? ""} ${outcome.error.message}`);
  }
  return outcome.value;
}

describe("openInWorker", () => {
  it("gives the synchronous API on the database, whose writes persist across close and reopen", async () => {
    const page = await session.page();
    const run = await appWorker(page);
    const first = await value(
      run(`
        const db = await shaledb.openInWorker("sync-notes", { valueEncoding: "json" });
        db.put("a", { n: 1 });
        db.batch([{ type: "put", key: "b", value: { n: 2 } }, { type: "put", key: "c", value: { n: 3 } }]);
        db.delete("c");
        const tags = db.keyspace("tags");
        tags.put("x", "y");
        db.transact((tx) => tx.put("d", { n: (tx.get("a")?.n ?? 0) + 3 }));
        const seen = [...db.iterator()].map(([k, v]) => k + "=" + v.n);
        const got = db.get("b");
        await db.close();
        return { seen, got, closed: db.closed, tag: null };
      `),
    );
    expect(first).toEqual({ seen: ["a=1", "b=2", "d=4"], got: { n: 2 }, closed: true, tag: null });
    const again = await value(
      run(`
        const db = await shaledb.openInWorker("sync-notes", { valueEncoding: "json" });
        const out = { keys: [...db.keys()], tag: db.keyspace("tags").get("x"), count: db.count() };
        await db.close();
        return out;
      `),
    );
    expect(again).toEqual({ keys: ["a", "b", "d"], tag: "y", count: 3 });
    await page.close();
  });

  it("serves a page's open() of the same database, which takes over once the worker closes it", async () => {
    const page = await session.page();
    const run = await appWorker(page);
    await value(
      run(`
        state.db = await shaledb.openInWorker("shared-sync");
        state.db.put("from-worker", "1");
      `),
    );
    // The page's open is served by the worker that owns the database, in both directions.
    const served = await page.evaluate(async () => {
      const db = await shaledb.open("shared-sync");
      await db.put("from-page", "2");
      const fromWorker = await db.get("from-worker");
      (globalThis as unknown as { pageDb: typeof db }).pageDb = db;
      return fromWorker;
    });
    expect(served).toBe("1");
    expect(await value(run(`return state.db.get("from-page");`))).toBe("2");
    // Once the worker closes it, the page's next owner takes over with everything.
    await value(run(`await state.db.close();`));
    const after = await page.evaluate(async () => {
      const db = (globalThis as unknown as { pageDb: Awaited<ReturnType<typeof shaledb.open>> }).pageDb;
      await db.put("after", "3");
      const out = [await db.get("from-worker"), await db.get("from-page"), await db.get("after")];
      await db.close();
      return out;
    });
    expect(after).toEqual(["1", "2", "3"]);
    await page.close();
  });

  it("a write that finds no OPFS file ready fails BUSY, writes nothing, and works after ready()", async () => {
    const page = await session.page();
    const run = await appWorker(page);
    const result = await value(
      run(`
        // Small memtables: every 64 KiB of writes starts a new log (one file each), in a loop
        // that never awaits, so the pool cannot grow until the worker awaits.
        const db = await shaledb.openInWorker("busy", { memtableSize: 64 << 10 });
        const value = "v".repeat(1000);
        let written = 0;
        let busy = null;
        for (let i = 0; i < 50000; i++) {
          try {
            db.put(String(i).padStart(6, "0"), value);
            written++;
          } catch (error) {
            busy = { code: error.code, at: i, present: db.get(String(i).padStart(6, "0")) ?? null };
            break;
          }
        }
        await db.ready();
        for (let i = written; i < written + 50; i++) db.put(String(i).padStart(6, "0"), value);
        const count = db.count();
        await db.close();
        const again = await shaledb.openInWorker("busy");
        const reopened = again.count();
        await again.close();
        return { written, busy, count, reopened };
      `),
    );
    const r = result as { written: number; busy: { code: string; at: number; present: unknown }; count: number; reopened: number };
    expect(r.busy).toEqual({ code: "BUSY", at: r.written, present: null });
    expect(r.written).toBeGreaterThan(100);
    expect(r.count).toBe(r.written + 50);
    expect(r.reopened).toBe(r.written + 50);
    await page.close();
  });

  it("refuses with LOCKED when a page owns the database, and with INVALID_ARGUMENT outside a worker", async () => {
    const page = await session.page();
    const run = await appWorker(page);
    await page.evaluate(async () => {
      (globalThis as unknown as { held: unknown }).held = await shaledb.open("page-owned");
    });
    const locked = await run(`await shaledb.openInWorker("page-owned");`);
    expect(locked.ok ? undefined : locked.error.code).toBe("LOCKED");
    const inPage = await page.evaluate(() => outcome(shaledb.openInWorker("anything")));
    expect(inPage?.code).toBe("INVALID_ARGUMENT");
    const bad = await run(`await shaledb.openInWorker("x", { memtableSize: "big" });`);
    expect(bad.ok ? undefined : bad.error.code).toBe("INVALID_ARGUMENT");
    const checkpoint = await run(`
      const db = await shaledb.openInWorker("cp");
      try { db.checkpoint("elsewhere"); } finally { await db.close(); }
    `);
    expect(checkpoint.ok ? undefined : checkpoint.error.code).toBe("INVALID_ARGUMENT");
    await page.close();
  });

  it("export() is the tar archive importDatabase restores", async () => {
    const page = await session.page();
    const run = await appWorker(page);
    await value(
      run(`
        const db = await shaledb.openInWorker("to-export");
        for (let i = 0; i < 100; i++) db.put("k" + i, "v" + i);
        db.flush();
        state.archive = db.export();
        await db.close();
        await shaledb.importDatabase("restored", state.archive);
        const restored = await shaledb.openInWorker("restored");
        state.restored = [restored.count(), restored.get("k42")];
        await restored.close();
      `),
    );
    expect(await value(run(`return state.restored;`))).toEqual([100, "v42"]);
    await page.close();
  });

  it("open() in a worker owns the database in that thread, starting no nested worker (which blocked Firefox's worker now and then); a page is served by it, then takes over", async () => {
    const page = await session.page();
    const run = await appWorker(page);
    const inWorker = await value(
      run(`
        state.realWorker = self.Worker;
        self.Worker = class {
          constructor() {
            throw new Error("open() started a nested worker");
          }
        };
        state.db = await shaledb.open("opened-in-worker");
        await state.db.put("w", "from the worker");
        return await state.db.get("w");
      `),
    );
    expect(inWorker).toBe("from the worker");
    const served = await page.evaluate(async () => {
      const db = await shaledb.open("opened-in-worker");
      (globalThis as { pageDb?: unknown }).pageDb = db;
      await db.put("p", "from the page");
      return await db.get("w");
    });
    expect(served).toBe("from the worker");
    expect(await value(run(`return await state.db.get("p");`))).toBe("from the page");
    await value(run(`await state.db.close(); self.Worker = state.realWorker;`));
    const afterTakeover = await page.evaluate(async () => {
      const db = (globalThis as { pageDb?: Awaited<ReturnType<typeof shaledb.open>> }).pageDb!;
      await db.put("q", "after the worker closed");
      const out = [await db.get("w"), await db.get("q")];
      await db.close();
      return out;
    });
    expect(afterTakeover).toEqual(["from the worker", "after the worker closed"]);
    await page.close();
  });

  it("importDatabase in a worker imports in place, starting no nested worker (which blocked Firefox's worker now and then)", async () => {
    const page = await session.page();
    const run = await appWorker(page);
    const restored = await value(
      run(`
        const db = await shaledb.openInWorker("in-place-source");
        db.put("a", "1");
        const archive = db.export();
        await db.close();
        const real = self.Worker;
        self.Worker = class {
          constructor() {
            throw new Error("importDatabase started a nested worker");
          }
        };
        try {
          await shaledb.importDatabase("in-place-copy", archive);
        } finally {
          self.Worker = real;
        }
        const copy = await shaledb.openInWorker("in-place-copy");
        try {
          return copy.get("a");
        } finally {
          await copy.close();
        }
      `),
    );
    expect(restored).toBe("1");
    await page.close();
  });
});
