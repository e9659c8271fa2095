// What "acknowledged" means in a browser (DESIGN.md): a write whose promise resolved has reached
// OPFS, so it survives the page being reloaded or closed without close(); a synced one
// (`sync: true`, the access handle's flush) survives the browser itself being restarted.
import type { TestPage as Page } from "./fixtures/browser.js";
import { expect, it } from "vitest";

import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

/** Writes `n` keys `<prefix><i>` one by one (every tenth synced), never closing the database. */
function writeWithoutClose(page: Page, name: string, prefix: string, n: number): Promise<void> {
  return page.evaluate(
    async ([db, p, count]) => {
      const handle = await shaledb.open(db, { valueEncoding: "json" });
      for (let i = 0; i < count; i++) {
        await handle.put(`${p}${String(i).padStart(5, "0")}`, { i }, { sync: i % 10 === 0 });
      }
      const batch = handle.batch();
      for (let i = 0; i < 1000; i++) batch.put(`${p}batch:${i}`, { i });
      await batch.write();
    },
    [name, prefix, n] as const,
  );
}

/** Counts the keys under `prefix` and reads one of them. */
function read(page: Page, name: string, prefix: string): Promise<[number, unknown]> {
  return page.evaluate(
    async ([db, p]) => {
      const handle = await shaledb.open(db, { valueEncoding: "json", createIfMissing: false });
      const result: [number, unknown] = [await handle.count({ prefix: p }), await handle.get(`${p}00007`)];
      await handle.close();
      return result;
    },
    [name, prefix] as const,
  );
}

it("acknowledged writes survive a reload of the page that never closed the database", async () => {
  const page = await session.page();
  await writeWithoutClose(page, "reload", "r:", 500);
  await page.reload();
  await page.waitForFunction(() => globalThis.shaledbReady === true);
  expect(await read(page, "reload", "r:")).toEqual([1500, { i: 7 }]);
  await page.close();
});

it("acknowledged writes survive closing the tab, and a restart of the browser with the same profile", async () => {
  let page = await session.page();
  await writeWithoutClose(page, "restart", "s:", 500);
  await page.close(); // the worker dies with the tab, the database never closed
  page = await session.page();
  await writeWithoutClose(page, "restart", "t:", 300);
  await session.restart(); // the whole browser goes
  page = await session.page();
  expect(await read(page, "restart", "s:")).toEqual([1500, { i: 7 }]);
  expect(await read(page, "restart", "t:")).toEqual([1300, { i: 7 }]);
  await page.close();
});

it("a database grown past several memtables and compactions reopens whole after a restart", async () => {
  let page = await session.page();
  const written = await page.evaluate(async () => {
    const db = await shaledb.open("grown", { memtableSize: 128 << 10 });
    const value = "v".repeat(300);
    for (let b = 0; b < 30; b++) {
      const batch = db.batch();
      for (let i = 0; i < 200; i++) batch.put(`k${String(b * 200 + i).padStart(6, "0")}`, `${value}${b}`);
      await batch.write();
    }
    await db.deleteRange({ gte: "k000100", lt: "k000200" });
    while (await db.maintain()) {
      // let flush and compaction catch up, as idle time would
    }
    const stats = await db.stats();
    return { count: await db.count(), tables: stats.levels.reduce((n, l) => n + l.files, 0) };
  });
  expect(written.count).toBe(5900);
  expect(written.tables).toBeGreaterThan(1);
  await session.restart();
  page = await session.page();
  const reopened = await page.evaluate(async () => {
    const db = await shaledb.open("grown", { createIfMissing: false });
    const result = { count: await db.count(), last: await db.get("k005999") };
    await db.close();
    return result;
  });
  expect(reopened).toEqual({ count: 5900, last: `${"v".repeat(300)}29` });
  await page.close();
});
