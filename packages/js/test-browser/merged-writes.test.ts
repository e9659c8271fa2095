// Writes that reach the owner together are applied as one group (one log record). If that group
// commit fails, each request is run again alone only when the failure guarantees that nothing
// was written (an argument error, found before the commit: then the bad request fails alone).
// Any other failure (QUOTA, IO, ...) leaves the outcome unknown: every request of the group gets
// that error and none is run again. The failure is injected by a test hook
// (debugFailMergedWrite): it fails the next group commit without writing anything, so a request
// run again would show up as written.
import type { TestPage as Page } from "./fixtures/browser.js";
import { describe, expect, it } from "vitest";

import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

type Db = Awaited<ReturnType<typeof shaledb.open>>;
interface Hooks {
  debugFailMergedWrite(code: string): Promise<void>;
}

/**
 * In `page`, on database `name` (opened there, perhaps served by another tab): injects a
 * failure with `code` into the next group commit, then makes three writes in one turn (a put,
 * a delete and an array batch, one group); returns their outcomes and what was written.
 */
function failedGroup(page: Page, name: string, code: string) {
  return page.evaluate(
    async ([n, c]) => {
      const db: Db = await shaledb.open(n);
      await db.put("d", "before");
      await (db as unknown as Hooks).debugFailMergedWrite(c);
      const outcomes = await Promise.all([
        outcome(db.put("a", "1")),
        outcome(db.delete("d")),
        outcome(db.batch([{ type: "put", key: "c", value: "3" }])),
      ]);
      const state = { a: await db.get("a"), c: await db.get("c"), d: await db.get("d") };
      // The injected failure wrote nothing and stopped nothing: later writes go through.
      await db.put("after", "ok");
      const after = await db.get("after");
      await db.close();
      return { outcomes, state, after };
    },
    [name, code] as const,
  );
}

describe("a merged write that fails", () => {
  for (const code of ["QUOTA", "IO"]) {
    it(`with ${code} fails every request of the group with that error and runs none again`, async () => {
      const page = await session.page();
      const result = await failedGroup(page, `merged-${code}`, code);
      const message = "shaledb: injected failure of a merged write (test hook)";
      expect(result).toEqual({
        outcomes: [
          { code, message },
          { code, message },
          { code, message },
        ],
        state: { a: undefined, c: undefined, d: "before" },
        after: "ok",
      });
      await page.close();
    });
  }

  it("with QUOTA in a served tab (whose writes carry applied records) fails them all too", async () => {
    const [owner, served] = [await session.page(), await session.page()];
    await owner.evaluate(async () => {
      (globalThis as { db?: Db }).db = await shaledb.open("merged-served");
    });
    const result = await failedGroup(served, "merged-served", "QUOTA");
    expect(result.outcomes.map((o) => o?.code)).toEqual(["QUOTA", "QUOTA", "QUOTA"]);
    expect(result.state).toEqual({ a: undefined, c: undefined, d: "before" });
    expect(result.after).toBe("ok");
    await owner.close();
    await served.close();
  });

  it("with INVALID_ARGUMENT (found before the commit) runs each alone: only the bad one fails", async () => {
    const page = await session.page();
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("merged-bad-one");
      const outcomes = await Promise.all([
        outcome(db.put("a", "1")),
        outcome(db.put("k".repeat(70_000), "oversize key")),
        outcome(db.batch([{ type: "put", key: "c", value: "3" }])),
      ]);
      const state = { a: await db.get("a"), c: await db.get("c"), count: await db.count() };
      await db.close();
      return { codes: outcomes.map((o) => o?.code ?? null), state };
    });
    expect(result).toEqual({ codes: [null, "INVALID_ARGUMENT", null], state: { a: "1", c: "3", count: 2 } });
    await page.close();
  });
});
