// Topic logs through the synchronous API (openSync): dense offsets, reads from an offset, a time
// and the end, keys and headers, consumer groups, batches and transactions atomic with puts,
// retention and OFFSET_OUT_OF_RANGE, reopen keeping offsets and groups, the subscription that
// ends once caught up.
import { describe, expect, it } from "vitest";

import { openSync, ShaleError } from "shaledb";

import { freshPath } from "./helpers.js";

describe("topics (synchronous API)", () => {
  it("gives dense offsets from 0 and reads from an offset, the start and the end", () => {
    using db = openSync(freshPath("topic"));
    const t = db.topic("events");
    expect(t.append("a")).toBe(0);
    expect(t.appendMany(["b", "c", { value: "d", key: "k", headers: { h: "x" } }])).toEqual([1, 2, 3]);
    expect(t.read().map((r) => r.value)).toEqual(["a", "b", "c", "d"]);
    expect(t.read({ from: 2, limit: 1 }).map((r) => r.offset)).toEqual([2]);
    expect(t.read({ from: "latest" })).toEqual([]);
    expect(t.latest(2).map((r) => r.value)).toEqual(["c", "d"]);
    const d = t.read({ from: 3 })[0]!;
    expect(d.key).toBe("k");
    expect(new TextDecoder().decode(d.headers["h"])).toBe("x");
    expect(t.read({ from: 0 })[0]!.key).toBeUndefined();
    expect(t.read({ from: { time: d.time + 1 } })).toEqual([]);
    expect(t.read({ from: { time: 0 } }).length).toBe(4);
    expect(db.topics()).toEqual(["events"]);
    expect(t.stats()).toMatchObject({ first: 0, next: 4, groups: [] });
  });

  it("keeps consumer offsets; a read from a group starts at its commit", () => {
    using db = openSync(freshPath("topic"));
    const t = db.topic("events", { valueEncoding: "json" });
    t.appendMany([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(t.committed("mailer")).toBeUndefined();
    expect(t.read({ from: { group: "mailer" } }).length).toBe(3);
    t.commit("mailer", 2);
    expect(t.committed("mailer")).toBe(2);
    expect(t.read({ from: { group: "mailer" } }).map((r) => r.value)).toEqual([{ n: 3 }]);
    expect(t.stats().groups).toEqual([{ name: "mailer", committed: 2, lag: 1 }]);
    expect(t.removeGroup("mailer")).toBe(true);
    expect(t.removeGroup("mailer")).toBe(false);
  });

  it("commits a consumer's offset atomically with its output in a batch; appends join batches and transactions", () => {
    using db = openSync(freshPath("topic"));
    const t = db.topic("events");
    const q = db.queue("jobs");
    t.appendMany(["x", "y"]);
    const out = db.batch([
      { type: "put", key: "out:0", value: "X" },
      { type: "push", queue: q, value: "job" },
      { type: "append", topic: t, value: "z", key: "kz" },
      { type: "commitOffset", topic: t, group: "g", offset: 1 },
    ]);
    expect(out).toEqual([1, 2]);
    expect(db.get("out:0")).toBe("X");
    expect(t.committed("g")).toBe(1);
    expect(t.read({ from: 2 })[0]).toMatchObject({ value: "z", key: "kz" });
    // A failing batch writes nothing: not the put, not the offset.
    expect(() =>
      db.batch([
        { type: "put", key: "out:1", value: "Y" },
        { type: "commitOffset", topic: t, group: "g", offset: -1 },
      ]),
    ).toThrow(ShaleError);
    expect(db.get("out:1")).toBeUndefined();
    expect(t.committed("g")).toBe(1);
    const ids = db.transact((tx) => {
      tx.put("out:1", "Y");
      tx.append(t, "w");
      tx.commitOffset(t, "g", 2);
      tx.push(q, "job2");
      return "ok";
    });
    expect(ids).toBe("ok");
    const tx = db.transaction();
    tx.append(t, "v");
    tx.push(q, "job3");
    expect(tx.commit()).toEqual([4, 3]);
    expect(t.committed("g")).toBe(2);
    expect(t.stats().next).toBe(5);
  });

  it("drops records past a retention limit and says where the log starts now", () => {
    using db = openSync(freshPath("topic"));
    const t = db.topic("events", { maxRecords: 3 });
    t.appendMany(["a", "b", "c", "d", "e"]);
    t.applyRetention();
    expect(t.stats()).toMatchObject({ first: 2, next: 5 });
    let error: unknown;
    try {
      t.read({ from: 0 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ShaleError);
    expect((error as ShaleError).code).toBe("OFFSET_OUT_OF_RANGE");
    expect((error as ShaleError).details).toEqual({ first: 2, next: 5 });
    expect(() => t.read({ from: 6 })).toThrow(/./);
    // A group holds retention back unless the topic says otherwise.
    const held = db.topic("held", { maxRecords: 1 });
    held.commit("slow", 0);
    held.appendMany(["a", "b", "c", "d"]);
    expect(held.stats().first).toBe(0);
  });

  it("keeps offsets, records and groups across a reopen", () => {
    const path = freshPath("topic");
    {
      using db = openSync(path);
      const t = db.topic("events");
      t.appendMany(["a", "b"]);
      t.commit("g", 1);
    }
    using db = openSync(path);
    const t = db.topic("events");
    expect(t.append("c")).toBe(2);
    expect(t.committed("g")).toBe(1);
    expect(t.read().map((r) => r.value)).toEqual(["a", "b", "c"]);
  });

  it("subscribe yields the records there are, a chunk at a time, and ends when caught up", () => {
    using db = openSync(freshPath("topic"));
    const t = db.topic("events");
    t.appendMany(Array.from({ length: 10 }, (_, i) => `r${i}`));
    const seen = [...t.subscribe({ from: "earliest", chunk: 3 })].map((r) => r.offset);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect([...t.subscribe()]).toEqual([]);
    expect([...t.subscribe({ from: 8 })].map((r) => r.value)).toEqual(["r8", "r9"]);
    expect(db.deleteTopic("events")).toBe(true);
    expect(db.topics()).toEqual([]);
  });
});
