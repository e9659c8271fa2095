// Writes are carried out exactly once across a takeover. A served tab whose owner committed its
// writes but went away before the replies arrived sends them again to the next owner; that owner
// must answer "done" (the write's record says it was applied), not apply them again — which
// would overwrite what another tab wrote since. The owner's reply is dropped by a test hook
// (debugLoseReplies), then the owner's tab closes.
import type { TestPage as Page } from "./fixtures/browser.js";
import { describe, expect, it } from "vitest";

import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

type Db = Awaited<ReturnType<typeof shaledb.open>>;
interface Hooks {
  debugLoseReplies(): Promise<void>;
}
interface Held {
  db?: Db;
  /** How the writes whose replies were lost ended: "done" or an error code. */
  outcomes?: Promise<string[]>;
}

async function openIn(page: Page, name: string): Promise<void> {
  await page.evaluate(async (n) => {
    (globalThis as Held).db = await shaledb.open(n);
  }, name);
}

/**
 * In `page`: makes the owner lose the replies to this tab's next message, then sends in it a
 * put of "k", a batch putting "b" and, if `bad`, a put with an oversize key (refused).
 */
function writeAndLoseReplies(page: Page, bad = false): Promise<void> {
  return page.evaluate(async (withBad) => {
    const g = globalThis as Held;
    const db = g.db as Db;
    await (db as unknown as Hooks).debugLoseReplies();
    const settle = (p: Promise<unknown>) =>
      p.then(
        () => "done",
        (e: { code?: string }) => String(e.code),
      );
    const writes = [settle(db.put("k", "from the served tab")), settle(db.batch([{ type: "put", key: "b", value: "from the served tab" }]))];
    if (withBad) writes.unshift(settle(db.put("x".repeat(70_000), "refused")));
    g.outcomes = Promise.all(writes);
  }, bad);
}

/** In the owner's `page`: waits until the served tab's writes are committed, then overwrites them. */
function overwriteOnceCommitted(page: Page): Promise<void> {
  return page.evaluate(async () => {
    const db = (globalThis as Held).db as Db;
    while ((await db.get("k")) !== "from the served tab" || (await db.get("b")) !== "from the served tab") {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await db.put("k", "from the owner, later");
    await db.batch([{ type: "put", key: "b", value: "from the owner, later" }]);
  });
}

/** In the served `page`: how its lost writes ended, and what "k" and "b" hold now. */
function afterwards(page: Page): Promise<{ outcomes: string[]; k: unknown; b: unknown }> {
  return page.evaluate(async () => {
    const g = globalThis as Held;
    const outcomes = await (g.outcomes as Promise<string[]>);
    return { outcomes, k: await g.db!.get("k"), b: await g.db!.get("b") };
  });
}

describe("writes whose replies were lost with their owner", () => {
  it("are not applied again by the served tab's own worker taking over: a later write of the owner stays", async () => {
    const [owner, served] = [await session.page(), await session.page()];
    await openIn(owner, "once-local");
    await openIn(served, "once-local");
    await writeAndLoseReplies(served);
    await overwriteOnceCommitted(owner);
    await owner.close(); // the served tab's worker takes over and gets the writes again
    expect(await afterwards(served)).toEqual({
      outcomes: ["done", "done"],
      k: "from the owner, later",
      b: "from the owner, later",
    });
    await served.close();
  });

  it("are not applied again by another tab taking over: a later write of the owner stays", async () => {
    const [owner, next, served] = [await session.page(), await session.page(), await session.page()];
    await openIn(owner, "once-remote");
    await openIn(next, "once-remote"); // waits for the lock first: it takes over
    await openIn(served, "once-remote");
    await writeAndLoseReplies(served);
    await overwriteOnceCommitted(owner);
    await owner.close();
    expect(await afterwards(served)).toEqual({
      outcomes: ["done", "done"],
      k: "from the owner, later",
      b: "from the owner, later",
    });
    // The tab that took over is the owner now, and sees the same.
    expect(await next.evaluate(async () => (globalThis as Held).db!.get("k"))).toBe("from the owner, later");
    await served.close();
    await next.close();
  });

  it("a write refused by the owner is refused again, not reported done", async () => {
    const [owner, served] = [await session.page(), await session.page()];
    await openIn(owner, "once-refused");
    await openIn(served, "once-refused");
    await writeAndLoseReplies(served, true);
    await overwriteOnceCommitted(owner);
    await owner.close();
    expect(await afterwards(served)).toEqual({
      outcomes: ["INVALID_ARGUMENT", "done", "done"],
      k: "from the owner, later",
      b: "from the owner, later",
    });
    await served.close();
  });
});
