// Issue 22: an unknown option name was ignored everywhere but open() (`queue.push(v, { delay: 5 })`
// pushed with no delay: the option is `delayMs`). Every method that takes options refuses a
// name it does not know with INVALID_ARGUMENT naming it, in both APIs, and writes nothing.
import { describe, expect, it } from "vitest";

import { importDatabase, open, openSync } from "shaledb";

import { expectRejects, freshPath } from "./helpers.js";

/** An options object with one misspelt name (what the types forbid). */
const typo = { delay: 5 } as never;

/**
 * The methods of both APIs, loosely typed: every call below is written once and awaited, so a
 * synchronous throw and a rejection both reject it.
 */
type AnyDb = any;

/** Iterators of the Promise API check their options on the first pull. */
function pulled(value: unknown): unknown {
  const it = value as { next?: () => unknown; then?: unknown };
  return typeof it?.next === "function" && it.then === undefined ? it.next() : value;
}

const calls: Record<string, (db: AnyDb) => Promise<unknown>> = {
  get: async (db) => db.get("k", typo),
  getMany: async (db) => db.getMany(["k"], typo),
  has: async (db) => db.has("k", typo),
  put: async (db) => db.put("k", "x", typo),
  delete: async (db) => db.delete("k", typo),
  deleteRange: async (db) => db.deleteRange({ gte: "a", lt: "b" }, typo),
  iterator: async (db) => pulled(db.iterator(typo)),
  keys: async (db) => pulled(db.keys(typo)),
  values: async (db) => pulled(db.values(typo)),
  count: async (db) => db.count(typo),
  batch: async (db) => db.batch([{ type: "put", key: "k", value: "x" }], typo),
  "batch().write": async (db) => db.batch().put("k", "x").write(typo),
  "batch operation": async (db) => db.batch([{ type: "push", queue: await db.queue("q"), value: "x", delay: 5 }]),
  transact: async (db) => db.transact(() => undefined, typo),
  "transaction().commit": async (db) => (await db.transaction()).commit(typo),
  compact: async (db) => db.compact(typo),
  keyspace: async (db) => db.keyspace("ks", typo),
  queue: async (db) => db.queue("q", typo),
  push: async (db) => (await db.queue("q")).push("x", typo),
  pushMany: async (db) => (await db.queue("q")).pushMany(["x"], typo),
  take: async (db) => (await db.queue("q")).take(typo),
  takeMany: async (db) => (await db.queue("q")).takeMany(1, typo),
  reserve: async (db) => (await db.queue("q")).reserve(typo),
  reserveMany: async (db) => (await db.queue("q")).reserveMany(1, typo),
  release: async (db) => {
    const q = await db.queue("q");
    return q.release(await q.reserve(), typo);
  },
  group: async (db) => (await db.queue("q")).group("g", typo),
  topic: async (db) => db.topic("t", typo),
  append: async (db) => (await db.topic("t")).append("x", typo),
  appendMany: async (db) => (await db.topic("t")).appendMany(["x"], typo),
  read: async (db) => (await db.topic("t")).read(typo),
  subscribe: async (db) => pulled((await db.topic("t")).subscribe(typo)),
  changes: async (db) => pulled(db.changes(typo)),
  applyChanges: async (db) => db.applyChanges(new Uint8Array(1), typo),
};

describe.each([
  ["synchronous API", async () => openSync(freshPath("typo"))],
  ["Promise API", async () => open(freshPath("typo"))],
] as const)("an unknown option name is INVALID_ARGUMENT naming it: %s", (api, opening) => {
  let db: AnyDb;
  const methods = Object.entries(calls);
  if (api === "Promise API") {
    methods.push(["consume", async (d) => pulled((await d.queue("q")).consume(typo))]);
  }
  it.each(methods)("%s", async (_name, call) => {
    db ??= await opening();
    await db.put("k", "v");
    await (await db.queue("q")).push("item");
    const error = await expectRejects(call(db), "INVALID_ARGUMENT");
    expect(error.message).toContain('"delay"');
    expect(await db.get("k")).toBe("v");
  });

  it("(importDatabase too)", async () => {
    const error = await expectRejects(importDatabase(freshPath("typo"), new Uint8Array(0), typo), "INVALID_ARGUMENT");
    expect(error.message).toContain('"delay"');
    await db.close();
  });
});
