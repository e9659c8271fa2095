// Keyspaces across tabs and takeovers: a keyspace handle names its keyspace, whichever tab owns
// the database now. A served tab's handles keep working after the owner goes (without calling
// keyspace() again), and no takeover makes one handle write into another keyspace.
import type { TestPage as Page } from "./fixtures/browser.js";
import { describe, expect, it } from "vitest";

import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

type Db = Awaited<ReturnType<typeof shaledb.open>>;
type Ks = Awaited<ReturnType<Db["keyspace"]>>;
/** What the tests keep on a page's globalThis. */
interface Held {
  db?: Db;
  ks?: Record<string, Ks>;
}

/** Opens `name` in `page` with keyspaces `keyspaces` (in that order), kept on globalThis. */
async function openWith(page: Page, name: string, keyspaces: string[]): Promise<void> {
  await page.evaluate(
    async ([n, names]) => {
      const g = globalThis as Held;
      g.db = await shaledb.open(n);
      g.ks = {};
      for (const k of names) g.ks[k] = await g.db.keyspace(k);
    },
    [name, keyspaces] as const,
  );
}

/** Every entry of the default keyspace and of keyspaces `names`, read in `page`. */
function contents(page: Page, names: string[]): Promise<Record<string, [string, string][]>> {
  return page.evaluate(async (ks) => {
    const g = globalThis as Held;
    const db = g.db as Db;
    const out: Record<string, [string, string][]> = {
      default: (await db.iterator().all()) as [string, string][],
    };
    for (const k of ks) out[k] = (await (await db.keyspace(k)).iterator().all()) as [string, string][];
    return out;
  }, names);
}

describe("keyspaces across a takeover", () => {
  it("an old keyspace handle writes into its own keyspace after the tab that took over opens another first", async () => {
    const [a, b] = [await session.page(), await session.page()];
    await openWith(a, "ks-remap", ["a", "b"]);
    await openWith(b, "ks-remap", ["a", "b"]); // served by a
    await a.close(); // b takes over
    const result = await b.evaluate(async () => {
      const g = globalThis as Held;
      const db = g.db as Db;
      const old = g.ks as Record<string, Ks>;
      // On the new owner, "b" is the first keyspace opened: it gets what was "a"'s number.
      const b2 = await db.keyspace("b");
      const settled = (p: Promise<unknown>) => p.catch((e: { code?: string }) => `failed: ${e.code}`);
      const put = await outcome(old.a!.put("x", "written through the old handle of a"));
      await b2.put("y", "written through the new handle of b");
      return {
        put,
        aX: await settled(old.a!.get("x")),
        bX: await settled(b2.get("x")),
        bY: await settled(old.b!.get("y")),
      };
    });
    expect(result).toEqual({
      put: null,
      aX: "written through the old handle of a",
      bX: undefined,
      bY: "written through the new handle of b",
    });
    expect(await contents(b, ["a", "b"])).toEqual({
      default: [],
      a: [["x", "written through the old handle of a"]],
      b: [["y", "written through the new handle of b"]],
    });
    await b.close();
  });

  it("a served tab's keyspace handles keep working after the owner goes, without keyspace() again", async () => {
    const [owner, served] = [await session.page(), await session.page()];
    await openWith(owner, "ks-served", ["events", "index"]);
    await owner.evaluate(async () => {
      const { ks } = globalThis as Held;
      await ks!.events!.put("e1", "before");
    });
    await openWith(served, "ks-served", ["index", "events"]); // another order than the owner's
    await owner.close();
    const result = await served.evaluate(async () => {
      const g = globalThis as Held;
      const db = g.db as Db;
      const events = g.ks!.events as Ks;
      const index = g.ks!.index as Ks;
      await events!.put("e2", "after");
      await index!.put("i2", "e2");
      await db
        .batch()
        .put("e3", "batched", events)
        .put("i3", "e3", index)
        .delete("e1", events)
        .write();
      const inTx = await db.transact(async (tx) => {
        const seen = await tx.get("e2", events);
        tx.put("i4", String(seen), index);
        return seen;
      });
      return {
        inTx,
        events: await events!.iterator().all(),
        index: await index!.keys().all(),
        count: await index!.count(),
        has: await events!.has("e3"),
        many: await events!.getMany(["e1", "e2", "e3"]),
      };
    });
    expect(result).toEqual({
      inTx: "after",
      events: [
        ["e2", "after"],
        ["e3", "batched"],
      ],
      index: ["i2", "i3", "i4"],
      count: 3,
      has: true,
      many: [undefined, "after", "batched"],
    });
    await served.close();
  });

  it("handles survive takeovers in both directions: each tab in turn owns and is served", async () => {
    const [first, second] = [await session.page(), await session.page()];
    await openWith(first, "ks-both-ways", ["left", "right"]);
    await openWith(second, "ks-both-ways", ["right", "left"]);
    const write = (page: Page, tag: string) =>
      page.evaluate(async (t) => {
        const { ks } = globalThis as Held;
        await ks!.left!.put(t, `left from ${t}`);
        await ks!.right!.put(t, `right from ${t}`);
      }, tag);
    await write(first, "1-owner");
    await write(second, "2-served");
    // The first tab's owner goes (its database closed): the second takes over, the first is
    // served by it through the same handles.
    await first.evaluate(async () => {
      const g = globalThis as Held;
      await g.db!.close();
      await openWithHandles();
      async function openWithHandles(): Promise<void> {
        g.db = await shaledb.open("ks-both-ways");
        // New handles, opened in the opposite order, while the second tab owns the database.
        g.ks = { right: await g.db.keyspace("right"), left: await g.db.keyspace("left") };
      }
    });
    await write(second, "3-owner");
    await write(first, "4-served");
    // And back: the second tab closes, the first takes over again.
    await second.close();
    await write(first, "5-owner-again");
    expect(await contents(first, ["left", "right"])).toEqual({
      default: [],
      left: ["1-owner", "2-served", "3-owner", "4-served", "5-owner-again"].map((t) => [t, `left from ${t}`]),
      right: ["1-owner", "2-served", "3-owner", "4-served", "5-owner-again"].map((t) => [t, `right from ${t}`]),
    });
    await first.close();
  });

  it("a served tab that opened a keyspace the owner never did still uses it after the owner goes", async () => {
    const [owner, served, third] = [await session.page(), await session.page(), await session.page()];
    await openWith(owner, "ks-only-served", []);
    await openWith(served, "ks-only-served", ["mine"]);
    await openWith(third, "ks-only-served", ["other", "mine"]);
    await served.evaluate(() => (globalThis as Held).ks!.mine!.put("k", "from served"));
    await owner.close(); // one of the others takes over; the other is served by it
    const failures = await Promise.all(
      [served, third].map((page, i) =>
        page.evaluate((n) => outcome((globalThis as Held).ks!.mine!.put(`after-${n}`, "v")), i),
      ),
    );
    expect(failures).toEqual([null, null]);
    const final = await third.evaluate(() => (globalThis as Held).ks!.mine!.keys().all());
    expect(final).toEqual(["after-0", "after-1", "k"]);
    const other = await third.evaluate(() => (globalThis as Held).ks!.other!.keys().all());
    expect(other).toEqual([]);
    await served.close();
    await third.close();
  });

  it("a keyspace name starting with a NUL character is reserved", async () => {
    const page = await session.page();
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("ks-reserved");
      const refused = await outcome(db.keyspace("\u0000shaledb"));
      const fine = await outcome(db.keyspace("a\u0000b"));
      await db.close();
      return { refused: refused?.code, fine };
    });
    expect(result).toEqual({ refused: "INVALID_ARGUMENT", fine: null });
    await page.close();
  });
});
