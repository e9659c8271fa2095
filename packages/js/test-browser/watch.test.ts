// db.watch() and liveQuery() in the browser: a watch in one tab hears the writes of another tab
// (through the owner's worker) in its ranges only, a live query re-runs on them, and a watch
// ends when its tab's database closes. Also prints the commit → listener latency in the same
// tab and across tabs (figures, not assertions: `console.log` lines "watch latency").
import { describe, expect, it } from "vitest";

import { BROWSER, type TestPage as Page } from "./fixtures/browser.js";
import { type Db, openIn } from "./fixtures/open-in.js";
import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

interface Watching {
  events: { changes: { type: string; key?: string; value?: string }[] }[];
  live: string[][];
  latencies: number[];
}

/** Starts, in `page`, a watch of prefix "w:" (listener form, values) and a live query of its keys. */
async function startWatching(page: Page): Promise<void> {
  await page.evaluate(() => {
    const db = (globalThis as { db?: Db }).db as Db;
    const watching: Watching = { events: [], live: [], latencies: [] };
    (globalThis as { watching?: Watching }).watching = watching;
    db.watch(
      { prefix: "w:" },
      (event) => {
        const now = performance.timeOrigin + performance.now();
        watching.events.push(event as Watching["events"][number]);
        for (const change of event.changes) {
          const value = change.type === "put" ? String(change.value) : "";
          if (value.startsWith("t=")) watching.latencies.push(now - Number(value.slice(2)));
        }
      },
      { values: true },
    );
    db.liveQuery({ prefix: "w:" }, () => db.keys({ prefix: "w:" }).all()).subscribe((keys) =>
      watching.live.push(keys.map(String)),
    );
  });
}

/** What `page`'s watch saw so far. */
function watched(page: Page): Promise<Watching> {
  return page.evaluate(() => (globalThis as { watching?: Watching }).watching as Watching);
}

/** Puts `n` keys "w:lat<i>" from `page`, one at a time, each value the time it was sent (after 20 warming up). */
async function timedPuts(page: Page, n: number): Promise<void> {
  await page.evaluate(async (count) => {
    const db = (globalThis as { db?: Db }).db as Db;
    for (let i = 0; i < 20; i++) await db.put(`w:warm${i}`, "warming up"); // not timed
    for (let i = 0; i < count; i++) {
      await db.put(`w:lat${i}`, `t=${performance.timeOrigin + performance.now()}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }, n);
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function summary(latencies: number[]): string {
  const sorted = [...latencies].sort((x, y) => x - y);
  const at = (p: number) => (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN).toFixed(2);
  return `n=${sorted.length} p50=${at(0.5)} ms p99=${at(0.99)} ms max=${at(1)} ms`;
}

describe("watch in the browser", () => {
  it("a watch in tab A hears tab B's writes in its range, not the others; its live query re-runs", async () => {
    const a = await session.page();
    await openIn(a, "watch-tabs");
    await startWatching(a);
    await until(async () => (await watched(a)).live.length === 1, "the live query's first run");
    // Commit → listener in one tab (A writes and hears), while A is the tab in front: a tab in
    // the background has its timers slowed (Firefox: to one a second).
    await timedPuts(a, 400);
    await until(async () => (await watched(a)).latencies.length >= 400, "400 timed puts from tab A");
    console.log(`watch latency in one tab (${BROWSER}): ${summary((await watched(a)).latencies)}`);
    await a.evaluate(async () => {
      const watching = (globalThis as { watching?: Watching }).watching as Watching;
      watching.latencies.length = 0;
      watching.events.length = 0;
      const db = (globalThis as { db?: Db }).db as Db;
      await db.deleteRange({ gte: "w:", lt: "w;" });
    });
    await until(async () => (await watched(a)).events.length > 0, "the deleteRange");
    await a.evaluate(() => {
      ((globalThis as { watching?: Watching }).watching as Watching).events.length = 0;
    });

    await until(async () => JSON.stringify((await watched(a)).live.at(-1)) === "[]", "the live query after the deleteRange");
    const runs = (await watched(a)).live.length;
    const b = await session.page();
    await openIn(b, "watch-tabs");
    await b.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      await db.put("elsewhere", "1");
      await db.batch([
        { type: "put", key: "w:1", value: "one" },
        { type: "put", key: "x", value: "outside" },
      ]);
      await db.delete("w:1");
    });
    await until(async () => (await watched(a)).events.flatMap((e) => e.changes).length >= 2, "two changes");
    expect((await watched(a)).events.flatMap((e) => e.changes)).toEqual([
      { type: "put", key: "w:1", value: "one" },
      { type: "delete", key: "w:1" },
    ]);
    await until(async () => (await watched(a)).live.length > runs, "the live query's re-run");
    await until(async () => JSON.stringify((await watched(a)).live.at(-1)) === "[]", "the live query's last run");

    // Commit → listener across tabs (B, in front, writes; A hears).
    await timedPuts(b, 100);
    await until(async () => (await watched(a)).latencies.length >= 100, "100 timed puts from tab B");
    console.log(`watch latency across tabs (${BROWSER}): ${summary((await watched(a)).latencies)}`);
    await a.close();
    await b.close();
  });

  it("bad input is INVALID_ARGUMENT; a watch's iterator ends when its database closes", async () => {
    const page = await session.page();
    await openIn(page, "watch-close");
    const codes = await page.evaluate(() => {
      const db = (globalThis as { db?: Db }).db as Db;
      const code = (call: () => unknown) => {
        try {
          call();
          return "no error";
        } catch (error) {
          return (error as { code?: string }).code;
        }
      };
      const bad = <T>(value: unknown) => value as T;
      return [
        code(() => db.watch(bad<undefined>(null))),
        code(() => db.watch({ prefix: bad<string>(5) })),
        code(() => db.watch({}, bad<undefined>({ coalesce: "always" }))),
        code(() => db.liveQuery({}, bad<() => number>("read"))),
      ];
    });
    expect(codes).toEqual(["INVALID_ARGUMENT", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "INVALID_ARGUMENT"]);
    const ended = await page.evaluate(async () => {
      const db = (globalThis as { db?: Db }).db as Db;
      const watcher = db.watch();
      const next = watcher.next();
      await db.close();
      return await next;
    });
    expect(ended).toEqual({ done: true });
    await page.close();
  });
});
