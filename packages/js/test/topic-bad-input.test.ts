// Bad input to topics beyond the one case per method of bad-input.test.ts: options of db.topic,
// read starts, headers, batch operations (checked before anything is written) and the Promise
// API's batches.
import { describe, expect, it } from "vitest";

import { open, openSync, type BatchOperation, type TopicFrom } from "shaledb";

import { expectCode, expectRejects, freshPath } from "./helpers.js";

const INVALID = "INVALID_ARGUMENT";
const bad = <T>(value: unknown): T => value as T;

describe("topic arguments", () => {
  it("db.topic checks its name and options", () => {
    using db = openSync(freshPath("topic-bad"));
    expectCode(() => db.topic(""), INVALID);
    expectCode(() => db.topic("a\u0000b"), INVALID);
    expectCode(() => db.topic("x".repeat(201)), INVALID);
    expectCode(() => db.topic("t", { maxAgeMs: 1.5 }), INVALID);
    expectCode(() => db.topic("t", { maxBytes: bad<number>("1") }), INVALID);
    expectCode(() => db.topic("t", { valueEncoding: bad<"utf8">("text") }), INVALID);
    expectCode(() => db.topic("t", bad<object>(5)), INVALID);
    expect(db.topics()).toEqual([]);
  });

  it("reads check where they start and their limits", () => {
    using db = openSync(freshPath("topic-bad"));
    const t = db.topic("t");
    for (const from of [-1, 0.5, "first", { time: "now" }, { group: "" }, { time: 1, group: "g" }, null]) {
      expectCode(() => t.read({ from: bad<TopicFrom>(from) }), INVALID);
    }
    expectCode(() => t.read({ limit: 100_001 }), INVALID);
    expectCode(() => t.read({ maxBytes: 0 }), INVALID);
    expectCode(() => t.subscribe({ signal: new AbortController().signal } as object), INVALID);
    expectCode(() => t.read({ from: 1 }), "OFFSET_OUT_OF_RANGE");
  });

  it("appends check keys and headers of the topic's encodings", () => {
    using db = openSync(freshPath("topic-bad"));
    const t = db.topic("t", { keyEncoding: "binary" });
    expectCode(() => t.append("v", { key: bad<Uint8Array>("k") }), INVALID);
    expectCode(() => t.append("v", { headers: bad<Record<string, string>>(null) }), INVALID);
    expectCode(() => t.appendMany([{ value: "v", headers: { h: bad<string>(true) } }]), INVALID);
    expect(t.append("v", { key: new Uint8Array([1]) })).toBe(0);
    expect(t.read()[0]?.key).toEqual(new Uint8Array([1]));
  });

  it("a batch with a bad topic operation writes nothing", async () => {
    const path = freshPath("topic-bad");
    {
      using db = openSync(path);
      const t = db.topic("t");
      const other = openSync(freshPath("topic-other"));
      const foreign = other.topic("t");
      const cases: BatchOperation<string, string>[][] = [
        [{ type: "append", topic: foreign, value: "v" }],
        [{ type: "append", topic: bad<typeof t>({ name: "t" }), value: "v" }],
        [{ type: "append", topic: t, value: bad<string>(1) }],
        [{ type: "commitOffset", topic: t, group: "", offset: 1 }],
        [{ type: "commitOffset", topic: t, group: "g", offset: 2 ** 53 }],
      ];
      for (const ops of cases) {
        expectCode(() => db.batch([{ type: "put", key: "k", value: "v" }, ...ops]), INVALID);
      }
      other.close();
      expect(db.get("k")).toBeUndefined();
      expect(t.stats().next).toBe(0);
    }
    const db = await open(path);
    try {
      const t = await db.topic("t");
      await expectRejects(db.batch([{ type: "put", key: "k", value: "v" }, { type: "commitOffset", topic: t, group: "g", offset: -1 }]), INVALID);
      await expectRejects(db.batch([{ type: "append", topic: bad<typeof t>({ name: "t" }), value: "v" }]), INVALID);
      expect(await db.get("k")).toBeUndefined();
    } finally {
      await db.close();
    }
  });
});
