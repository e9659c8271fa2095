// Each keyspace's encodings are recorded in the database: opening it with others is
// ENCODING_MISMATCH (never values misread), "binary" reads any keyspace, and read-only opens and
// followers check but record nothing. The synchronous API and the Promise API (both engine
// threads) share one implementation (src/engine/keyspace-encodings.ts).
import { describe, expect, it } from "vitest";

import { open, openSync, type ShaleError } from "shaledb";

import { expectCode, expectRejects, freshPath } from "./helpers.js";

function expectMismatch(error: ShaleError, ...parts: string[]): void {
  expect(error.code).toBe("ENCODING_MISMATCH");
  for (const part of parts) {
    expect(error.message).toContain(part);
  }
}

describe("keyspace encodings (sync)", () => {
  it("reopening a keyspace with another value encoding is ENCODING_MISMATCH; its data is untouched", () => {
    const path = freshPath("enc");
    const db = openSync(path);
    db.keyspace("users", { valueEncoding: "json" }).put("ada", { born: 1815 });
    db.close();
    const again = openSync(path);
    const error = expectCode(() => again.keyspace("users"), "ENCODING_MISMATCH");
    expectMismatch(error, '"users"', 'valueEncoding "json"', 'valueEncoding "utf8"');
    expect(again.keyspace("users", { valueEncoding: "json" }).get("ada")).toEqual({ born: 1815 });
    again.close();
  });

  it("a key encoding other than the recorded one is ENCODING_MISMATCH too", () => {
    const path = freshPath("enc");
    const db = openSync(path);
    db.keyspace("k", { keyEncoding: "utf8" }).put("a", "1");
    expectMismatch(expectCode(() => db.keyspace("k", { keyEncoding: "binary", valueEncoding: "json" }), "ENCODING_MISMATCH"), '"k"');
    db.close();
  });

  it("the default keyspace records the open() encodings: reopening with others is ENCODING_MISMATCH and leaves nothing open", () => {
    const path = freshPath("enc");
    const db = openSync(path, { valueEncoding: "json" });
    db.put("n", [1, 2]);
    db.close();
    expectMismatch(expectCode(() => openSync(path), "ENCODING_MISMATCH"), "default keyspace", '"json"');
    // The failed open released the database: it opens again, with its encodings.
    const again = openSync(path, { valueEncoding: "json" });
    expect(again.get("n")).toEqual([1, 2]);
    again.close();
  });

  it("a binary view reads any keyspace, as stored", () => {
    const path = freshPath("enc");
    const db = openSync(path, { valueEncoding: "json" });
    db.put("k", { a: 1 });
    db.keyspace("t").put("x", "text");
    db.close();
    const raw = openSync(path, { keyEncoding: "binary", valueEncoding: "binary" });
    expect(new TextDecoder().decode(raw.get(new TextEncoder().encode("k")))).toBe('{"a":1}');
    // A binary part next to a checked one: keys utf8 (as recorded), values raw.
    const t = raw.keyspace("t", { valueEncoding: "binary" });
    expect(new TextDecoder().decode(t.get("x"))).toBe("text");
    raw.close();
    // Nothing was recorded by the binary views: the recorded encodings still hold.
    const again = openSync(path, { valueEncoding: "json" });
    expect(again.get("k")).toEqual({ a: 1 });
    expect(again.keyspace("t").get("x")).toBe("text");
    again.close();
  });

  it("a keyspace first opened as binary records the encodings it is opened with next, while it is empty", () => {
    const path = freshPath("enc");
    const db = openSync(path);
    db.keyspace("b", { keyEncoding: "binary", valueEncoding: "binary" });
    db.keyspace("b", { valueEncoding: "json" });
    expectCode(() => db.keyspace("b"), "ENCODING_MISMATCH");
    db.close();
  });

  it("a keyspace that already holds keys with nothing recorded (older databases, binary writes) stays unchecked", () => {
    const path = freshPath("enc");
    const db = openSync(path);
    db.keyspace("old", { valueEncoding: "binary" }).put("k", new TextEncoder().encode('"s"'));
    // Its bytes could be either: no guess is recorded.
    expect(db.keyspace("old").get("k")).toBe('"s"');
    expect(db.keyspace("old", { valueEncoding: "json" }).get("k")).toBe("s");
    db.close();
  });

  it("a read-only open checks but records nothing", () => {
    const path = freshPath("enc");
    const writer = openSync(path, { valueEncoding: "json" });
    writer.keyspace("fresh");
    try {
      const reader = openSync(path, { readOnly: true, valueEncoding: "json" });
      expectMismatch(expectCode(() => reader.keyspace("fresh", { valueEncoding: "json" }), "ENCODING_MISMATCH"), '"fresh"');
      reader.close();
      // The default keyspace is json: a utf8 read-only open is refused.
      expectCode(() => openSync(path, { readOnly: true }), "ENCODING_MISMATCH");
      writer.keyspace("empty", { keyEncoding: "binary", valueEncoding: "binary" });
      const second = openSync(path, { readOnly: true, valueEncoding: "json" });
      second.keyspace("empty", { valueEncoding: "json" });
      second.close();
      // The read-only open recorded nothing: the writer may still choose.
      writer.keyspace("empty", { valueEncoding: "utf8" });
    } finally {
      writer.close();
    }
  });

  it("a follower checks but records nothing", () => {
    const path = freshPath("enc");
    const follower = openSync(path, { follower: true, valueEncoding: "json" });
    follower.keyspace("f", { valueEncoding: "json" });
    follower.close();
    const again = openSync(path, { follower: true });
    again.keyspace("f", { valueEncoding: "utf8" });
    again.close();
  });
});

describe.each(["own", "caller"] as const)("keyspace encodings (Promise API, engine thread %s)", (engineThread) => {
  it("reopening a keyspace with another value encoding is ENCODING_MISMATCH; its data is untouched", async () => {
    const path = freshPath("enc");
    const db = await open(path, { engineThread });
    await (await db.keyspace("users", { valueEncoding: "json" })).put("ada", { born: 1815 });
    const error = await expectRejects(db.keyspace("users"), "ENCODING_MISMATCH");
    expectMismatch(error, '"users"', 'valueEncoding "json"', 'valueEncoding "utf8"');
    expect(await (await db.keyspace("users", { valueEncoding: "json" })).get("ada")).toEqual({ born: 1815 });
    await db.close();
  });

  it("open() with other encodings than the default keyspace's is ENCODING_MISMATCH and leaves nothing open", async () => {
    const path = freshPath("enc");
    const sync = openSync(path, { valueEncoding: "json" });
    sync.put("n", 1);
    sync.close();
    expectMismatch(await expectRejects(open(path, { engineThread }), "ENCODING_MISMATCH"), "default keyspace");
    const db = await open(path, { engineThread, valueEncoding: "json" });
    expect(await db.get("n")).toBe(1);
    const raw = await db.keyspace("default2", { keyEncoding: "binary", valueEncoding: "binary" });
    expect(raw.name).toBe("default2");
    await db.close();
  });

  it("a binary view reads any keyspace", async () => {
    const path = freshPath("enc");
    const db = await open(path, { engineThread, valueEncoding: "json" });
    await db.put("k", { a: 1 });
    await db.close();
    const raw = await open(path, { engineThread, valueEncoding: "binary" });
    expect(new TextDecoder().decode(await raw.get("k"))).toBe('{"a":1}');
    await raw.close();
  });
});
