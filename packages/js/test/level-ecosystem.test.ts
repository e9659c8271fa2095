// The Level ecosystem on ShaleLevel (shaledb/level): level-read-stream, sublevels, hooks,
// encodings, explicit snapshots, data that outlives a reopen, and bad input.
import { EntryStream, KeyStream, ValueStream } from "level-read-stream";
import { describe, expect, it } from "vitest";

import { ShaleLevel } from "shaledb/level";

import { freshPath } from "./helpers.js";

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) {
    items.push(item);
  }
  return items;
}

describe("ShaleLevel in the Level ecosystem", () => {
  it("level-read-stream streams entries, keys and values with ranges, reverse and limit", async () => {
    const db = new ShaleLevel(freshPath("level-stream"));
    await db.batch(Array.from({ length: 300 }, (_, i) => ({ type: "put" as const, key: `k${String(i).padStart(3, "0")}`, value: `v${i}` })));
    const entries = await collect<{ key: string; value: string }>(new EntryStream(db, { gte: "k100", lt: "k103" }) as AsyncIterable<{ key: string; value: string }>);
    expect(entries).toEqual([
      { key: "k100", value: "v100" },
      { key: "k101", value: "v101" },
      { key: "k102", value: "v102" },
    ]);
    expect(await collect(new KeyStream(db, { reverse: true, limit: 2 }) as AsyncIterable<string>)).toEqual(["k299", "k298"]);
    expect((await collect(new ValueStream(db) as AsyncIterable<string>)).length).toBe(300);
    await db.close();
  });

  it("sublevels keep their keys apart, nest, and batch atomically across sublevels", async () => {
    const db = new ShaleLevel(freshPath("level-sublevel"));
    const users = db.sublevel<string, { name: string }>("users", { valueEncoding: "json" });
    const posts = db.sublevel("posts");
    const drafts = posts.sublevel("drafts");
    await users.put("ada", { name: "Ada" });
    await db.batch([
      { type: "put", sublevel: posts, key: "p1", value: "hello" },
      { type: "put", key: "top", value: "level" },
    ]);
    await drafts.put("d1", "wip");
    expect(await users.get("ada")).toEqual({ name: "Ada" });
    // A nested sublevel's keys are in its parent's range (prefixed), as in every Level store.
    expect(await posts.keys().all()).toEqual(["!drafts!d1", "p1"]);
    expect(await drafts.values().all()).toEqual(["wip"]);
    expect(await db.get("top")).toBe("level");
    expect((await db.keys().all()).length).toBe(4);
    await users.clear();
    expect(await users.keys().all()).toEqual([]);
    expect(await drafts.keys().all()).toEqual(["d1"]);
    await db.close();
  });

  it("hooks: prewrite adds and changes operations, postopen runs, write events fire", async () => {
    const db = new ShaleLevel(freshPath("level-hooks"));
    const index = db.sublevel("by-length");
    let opened = 0;
    db.hooks.postopen.add(async () => {
      opened += 1;
    });
    db.hooks.prewrite.add((op, batch) => {
      if (op.type === "put" && op.sublevel === undefined) {
        op.value = op.value.toUpperCase();
        batch.add({ type: "put", sublevel: index, key: `${op.value.length}:${op.key}`, value: "" });
      }
    });
    const written: unknown[] = [];
    db.on("write", (ops: unknown[]) => written.push(...ops));
    await db.open();
    await db.put("a", "xyz");
    await db.batch().put("b", "hello").write();
    expect(opened).toBe(1);
    expect(await db.get("a")).toBe("XYZ");
    expect(await index.keys().all()).toEqual(["3:a", "5:b"]);
    expect(written.length).toBe(4);
    await db.close();
  });

  it("encodings: json, buffer, view and a custom encoding round-trip; explicit snapshots", async () => {
    const db = new ShaleLevel<string, unknown>(freshPath("level-encodings"), { valueEncoding: "json" });
    await db.put("obj", { n: 1, list: [true, null] });
    expect(await db.get("obj")).toEqual({ n: 1, list: [true, null] });
    await db.put("bin", Buffer.from([0, 255]), { valueEncoding: "buffer" });
    expect(await db.get("bin", { valueEncoding: "view" })).toEqual(new Uint8Array([0, 255]));
    await db.put(Buffer.from([1, 2]), "k", { keyEncoding: "buffer" });
    const upper = { name: "upper", format: "utf8" as const, encode: (s: string) => s.toUpperCase(), decode: (s: string) => s.toLowerCase() };
    await db.put("custom", "abc", { valueEncoding: upper });
    expect(await db.get("custom", { valueEncoding: "utf8" })).toBe("ABC");
    expect(await db.get("custom", { valueEncoding: upper })).toBe("abc");
    const snapshot = db.snapshot();
    await db.put("obj", "changed");
    expect(await db.get("obj", { snapshot })).toEqual({ n: 1, list: [true, null] });
    expect(await db.get("obj")).toBe("changed");
    await snapshot.close();
    await db.close();
  });

  it("data outlives a reopen; createIfMissing and errorIfExists are honoured", async () => {
    const path = freshPath("level-reopen");
    await expect(new ShaleLevel(path, { createIfMissing: false }).open()).rejects.toMatchObject({ code: "LEVEL_DATABASE_NOT_OPEN" });
    const db = new ShaleLevel(path);
    await db.put("k", "v");
    await db.close();
    await db.open();
    expect(await db.get("k")).toBe("v");
    await db.close();
    await expect(new ShaleLevel(path, { errorIfExists: true }).open()).rejects.toMatchObject({ code: "LEVEL_DATABASE_NOT_OPEN" });
  });

  it("bad input: a missing location is a TypeError, a bad ShaleDB option or key fails", async () => {
    expect(() => new ShaleLevel(undefined as unknown as string)).toThrow(TypeError);
    expect(() => new ShaleLevel("")).toThrow(TypeError);
    const bad = new ShaleLevel(freshPath("level-bad-option"), { shaledb: { memtableSize: -1 } });
    const failure: unknown = await bad.open().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "LEVEL_DATABASE_NOT_OPEN", cause: { code: "INVALID_ARGUMENT" } });
    const db = new ShaleLevel(freshPath("level-bad"));
    await expect(db.put(undefined as unknown as string, "v")).rejects.toMatchObject({ code: "LEVEL_INVALID_KEY" });
    await db.close();
  });
});
