// shaledb/level in a real browser (headless Chromium or Firefox): ShaleLevel on OPFS through the
// browser entry, with sublevels, encodings, seek, a snapshot and level-read-stream, and its data
// after a reload.
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import type { EntryStream as EntryStreamClass } from "level-read-stream";
import type { ShaleLevel as ShaleLevelClass } from "shaledb/level";

import { openPage, type TestPage } from "./fixtures/browser.js";
import { Session } from "./fixtures/session.js";
import { bundleLevelDeps } from "./level/bundle-deps.js";

declare global {
  var ShaleLevel: typeof ShaleLevelClass;
  var EntryStream: typeof EntryStreamClass;
}

const session = new Session();
let page: TestPage;

beforeAll(async () => {
  await bundleLevelDeps();
  await session.start();
  page = await openPage(session.context, `${session.server.origin}/test-browser/pages/level.html`);
});

afterAll(async () => {
  await session.stop();
});

describe("ShaleLevel in the browser", () => {
  it("reads and writes with sublevels, json, seek, a snapshot and level-read-stream; data outlives a reload", async () => {
    const result = await page.evaluate(async () => {
      const db = new ShaleLevel("level-db");
      const docs = db.sublevel<string, { n: number }>("docs", { valueEncoding: "json" });
      await db.batch([
        { type: "put", key: "a", value: "1" },
        { type: "put", key: "b", value: "2" },
        { type: "put", key: "c", value: "3" },
      ]);
      await docs.put("x", { n: 42 });
      const snapshot = db.snapshot();
      await db.put("a", "changed");
      const it = db.keys();
      await it.next();
      it.seek("c");
      const sought = await it.next();
      await it.close();
      const streamed: string[] = [];
      for await (const entry of new EntryStream(db, { lt: "c" }) as AsyncIterable<{ key: string; value: string }>) {
        streamed.push(`${entry.key}=${entry.value}`);
      }
      const out = {
        doc: await docs.get("x"),
        old: await db.get("a", { snapshot }),
        sought,
        streamed,
      };
      await snapshot.close();
      await db.close();
      return out;
    });
    expect(result).toEqual({ doc: { n: 42 }, old: "1", sought: "c", streamed: ["!docs!x={\"n\":42}", "a=changed", "b=2"] });
    await page.reload();
    await page.waitForFunction(() => (globalThis as { shaledbReady?: boolean }).shaledbReady === true);
    const after = await page.evaluate(async () => {
      const db = new ShaleLevel("level-db");
      const all = await db.iterator().all();
      await db.close();
      return all;
    });
    expect(after).toEqual([
      ["!docs!x", "{\"n\":42}"],
      ["a", "changed"],
      ["b", "2"],
      ["c", "3"],
    ]);
  });
});
