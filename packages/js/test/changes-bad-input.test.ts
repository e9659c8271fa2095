// Bad input to the change feed, change cursors, followers, a batch's meta and the open options
// of changes: INVALID_ARGUMENT, before anything is read or written, in both APIs.
import { describe, expect, it } from "vitest";

import { open, openSync, type Change, type ChangesFollowOptions, type ChangesOptions } from "shaledb";

import { expectCode, expectRejects, freshPath } from "./helpers.js";

const INVALID = "INVALID_ARGUMENT";
const bad = <T>(value: unknown): T => value as T;
const BAD_SEQS = [-1, 1.5, NaN, Infinity, "1", null, 2 ** 53];
const BAD_CURSORS = ["", "a\u0000b", "x".repeat(201), "\uD800", 5, null, undefined];

describe("change feed arguments (synchronous API)", () => {
  it("changes() checks since, limit and refuses follow and signal", () => {
    using db = openSync(freshPath("changes-bad"));
    for (const since of BAD_SEQS) {
      expectCode(() => db.changes({ since: bad<number>(since) }), INVALID);
    }
    for (const limit of [0, -1, 1.5, "2", null]) {
      expectCode(() => db.changes({ limit: bad<number>(limit) }), INVALID);
    }
    expectCode(() => db.changes(bad<ChangesOptions>(null)), INVALID);
    expectCode(() => db.changes(bad<ChangesOptions>("all")), INVALID);
    expectCode(() => db.changes(bad<ChangesOptions>({ follow: true })), INVALID);
    expectCode(() => db.changes(bad<ChangesOptions>({ signal: new AbortController().signal })), INVALID);
    expect([...db.changes({ since: 0 })]).toEqual([]);
  });

  it("change cursors check their names and sequence numbers", () => {
    using db = openSync(freshPath("changes-bad"));
    db.put("a", "1");
    for (const name of BAD_CURSORS) {
      expectCode(() => db.ackChanges(bad<string>(name), 1), INVALID);
      expectCode(() => db.changeCursor(bad<string>(name)), INVALID);
      expectCode(() => db.removeChangeCursor(bad<string>(name)), INVALID);
    }
    for (const seq of BAD_SEQS) {
      expectCode(() => db.ackChanges("c", bad<number>(seq)), INVALID);
    }
    expect(db.changeCursor("c")).toBeUndefined();
  });

  it("applyChanges checks the change and expectedSeq", () => {
    using db = openSync(freshPath("changes-bad"), { follower: true });
    for (const change of [null, undefined, 5, "bytes", [1, 2], {}, { bytes: "x" }]) {
      expectCode(() => db.applyChanges(bad<Change>(change)), INVALID);
    }
    const leader = openSync(freshPath("changes-bad"));
    leader.put("a", "1");
    const [change] = [...leader.changes()];
    leader.close();
    for (const expectedSeq of [0, -1, 1.5, "1", null]) {
      expectCode(() => db.applyChanges(change as Change, { expectedSeq: bad<number>(expectedSeq) }), INVALID);
    }
    expectCode(() => db.applyChanges(change as Change, bad<object>(null)), INVALID);
    // Bytes that are not a change: CORRUPTION, nothing applied.
    expectCode(() => db.applyChanges(new Uint8Array([1, 2, 3])), "CORRUPTION");
    const damaged = (change as Change).bytes.slice();
    damaged[damaged.length - 6] = (damaged[damaged.length - 6] ?? 0) ^ 0xff;
    expectCode(() => db.applyChanges(damaged), "CORRUPTION");
    expect(db.sequence()).toBe(0);
  });

  it("a batch's meta is a string or bytes of at most 64 KiB", () => {
    using db = openSync(freshPath("changes-bad"));
    for (const meta of [5, null, {}, ["a"], "\uD800"]) {
      expectCode(() => db.batch([{ type: "put", key: "k", value: "v" }], { meta: bad<string>(meta) }), INVALID);
    }
    expectCode(() => db.batch([{ type: "put", key: "k", value: "v" }], { meta: new Uint8Array(64 * 1024 + 1) }), INVALID);
    expectCode(() => db.batch([{ type: "put", key: "k", value: "v" }], { meta: "é".repeat(32 * 1024 + 1) }), INVALID);
    expect(db.sequence()).toBe(0);
    db.batch([{ type: "put", key: "k", value: "v" }], { meta: new Uint8Array(64 * 1024) });
    expect([...db.changes()][0]?.meta?.length).toBe(64 * 1024);
  });

  it("open checks follower and changes", () => {
    for (const options of [
      { follower: bad<boolean>("yes") },
      { changes: bad<object>(null) },
      { changes: bad<object>(5) },
      { changes: { retainMs: -1 } },
      { changes: { retainMs: 1.5 } },
      { changes: { retainBytes: bad<number>("1") } },
    ]) {
      expectCode(() => openSync(freshPath("changes-bad"), options), INVALID);
    }
  });
});

describe("change feed arguments (Promise API)", () => {
  it("every method rejects bad arguments with INVALID_ARGUMENT", async () => {
    const db = await open(freshPath("changes-bad"), { engineThread: "caller" });
    try {
      await db.put("a", "1");
      // On the first pull, which rejects (as every Promise-API method does).
      for (const since of BAD_SEQS) {
        const error = await expectRejects(db.changes({ since: bad<number>(since) }).next(), INVALID);
        expect(error.message).toMatch(/since/);
      }
      await expectRejects(db.changes({ follow: bad<boolean>(1) }).next(), INVALID);
      await expectRejects(db.changes({ signal: bad<AbortSignal>({}) }).next(), INVALID);
      await expectRejects(db.changes(bad<ChangesFollowOptions>(null)).next(), INVALID);
      for (const name of BAD_CURSORS) {
        await expectRejects(db.ackChanges(bad<string>(name), 1), INVALID);
        await expectRejects(db.changeCursor(bad<string>(name)), INVALID);
        await expectRejects(db.removeChangeCursor(bad<string>(name)), INVALID);
      }
      for (const seq of BAD_SEQS) {
        await expectRejects(db.ackChanges("c", bad<number>(seq)), INVALID);
      }
      await expectRejects(db.applyChanges(bad<Change>(null)), INVALID);
      await expectRejects(db.applyChanges(new Uint8Array(4), { expectedSeq: -2 }), INVALID);
      await expectRejects(db.batch([{ type: "put", key: "k", value: "v" }], { meta: bad<string>(5) }), INVALID);
      await expectRejects(
        db.batch([{ type: "put", key: "k", value: "v" }], { meta: new Uint8Array(64 * 1024 + 1) }),
        INVALID,
      );
      expect(await db.sequence()).toBe(1);
    } finally {
      await db.close();
    }
  });
});
