// Iterator seek(), sync and Promise API: it moves within the range and at the iterator's
// snapshot, back and forth, after the end, with the limit counting on; bad targets are typed
// errors; a closed iterator stays closed.
import { describe, expect, it } from "vitest";

import { open, openSync, type SyncDatabase } from "shaledb";

import { expectCode, freshPath } from "./helpers.js";

const LETTERS = ["a", "b", "c", "d", "e", "f", "g"];

function filled(label: string): SyncDatabase<string, string> {
  const db = openSync(freshPath(label));
  for (const k of LETTERS) {
    db.put(k, k.toUpperCase());
  }
  return db;
}

function take<T>(it: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    const r = it.next();
    if (r.done === true) break;
    out.push(r.value);
  }
  return out;
}

async function takeAsync<T>(it: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    const r = await it.next();
    if (r.done === true) break;
    out.push(r.value);
  }
  return out;
}

describe("seek (sync API)", () => {
  it("moves forward and back to the first key >= target, entries fetched ahead are dropped", () => {
    const db = filled("seek-sync");
    const it = db.keys();
    expect(take(it, 2)).toEqual(["a", "b"]);
    it.seek("e");
    expect(take(it, 1)).toEqual(["e"]);
    it.seek("bb");
    expect(take(it, 2)).toEqual(["c", "d"]);
    it.seek("z");
    expect(take(it, 1)).toEqual([]);
    db.close();
  });

  it("in reverse, moves to the last key <= target; it stays within the range", () => {
    const db = filled("seek-sync-reverse");
    const rev = db.iterator({ reverse: true, gt: "b", lte: "f" });
    expect(take(rev, 1)).toEqual([["f", "F"]]);
    rev.seek("dd");
    expect(take(rev, 1)).toEqual([["d", "D"]]);
    rev.seek("z");
    expect(take(rev, 1)).toEqual([["f", "F"]]);
    rev.seek("a");
    expect(take(rev, 1)).toEqual([]);
    const fwd = db.values({ gte: "c", lt: "e" });
    fwd.seek("a");
    expect([...fwd]).toEqual(["C", "D"]);
    db.close();
  });

  it("sees the iterator's snapshot, not later writes; limit counts on across seeks", () => {
    const db = filled("seek-sync-snapshot");
    const it = db.keys({ limit: 3 });
    expect(take(it, 2)).toEqual(["a", "b"]);
    db.put("aa", "new");
    it.seek("a");
    expect(take(it, 5)).toEqual(["a"]);
    db.close();
  });

  it("after the end or close() it does nothing; a target of the wrong type is INVALID_ARGUMENT", () => {
    const db = filled("seek-sync-closed");
    const it = db.keys();
    expect([...it]).toEqual(LETTERS);
    it.seek("a");
    expect(take(it, 1)).toEqual([]);
    const other = db.keys();
    expectCode(() => other.seek(5 as unknown as string), "INVALID_ARGUMENT");
    other.close();
    other.seek("a");
    expect(take(other, 1)).toEqual([]);
    const bin = openSync(freshPath("seek-sync-binary"), { keyEncoding: "binary" });
    bin.put(new Uint8Array([1, 2]), "x");
    const bit = bin.keys();
    expectCode(() => bit.seek("text" as unknown as Uint8Array), "INVALID_ARGUMENT");
    bit.seek(new Uint8Array([1]));
    expect(take(bit, 1)).toEqual([new Uint8Array([1, 2])]);
    bin.close();
    db.close();
  });
});

describe("seek (Promise API)", () => {
  for (const engineThread of ["own", "caller"] as const) {
    it(`moves forward past read-ahead and back, within the range; after done it does nothing (engine: ${engineThread})`, async () => {
      const path = freshPath("seek-async");
      const setup = openSync(path);
      for (let i = 0; i < 500; i++) setup.put(`k${String(i).padStart(3, "0")}`, `v${i}`);
      setup.close();
      const db = await open(path, { engineThread });
      const it = db.keys({ lt: "k400" });
      expect(await takeAsync(it, 2)).toEqual(["k000", "k001"]);
      it.seek("k350");
      expect(await takeAsync(it, 1)).toEqual(["k350"]);
      it.seek("k450");
      it.seek("k000");
      expect(await takeAsync(it, 1)).toEqual(["k000"]);
      it.seek("k399");
      expect(await takeAsync(it, 2)).toEqual(["k399"]);
      it.seek("k000");
      expect(await takeAsync(it, 1)).toEqual([]);
      const rev = db.iterator({ reverse: true });
      rev.seek("k100x");
      expect(await takeAsync(rev, 2)).toEqual([
        ["k100", "v100"],
        ["k099", "v99"],
      ]);
      await rev.close();
      rev.seek("k200");
      expect(await takeAsync(rev, 1)).toEqual([]);
      expect(() => it.seek(5 as unknown as string)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
      await it.close();
      await db.close();
    });
  }

  it("calls of next() and seek() made without awaiting each other take effect in the order made", async () => {
    const db = await open(freshPath("seek-async-order"));
    for (let i = 0; i < 300; i++) await db.put(`k${String(i).padStart(3, "0")}`, "v");
    const it = db.keys();
    expect((await it.next()).value).toBe("k000"); // the first batch is at hand now
    const calls = [it.next(), it.next()];
    it.seek("k200");
    calls.push(it.next(), it.next());
    it.seek("k010");
    calls.push(it.next());
    expect((await Promise.all(calls)).map((r) => r.value)).toEqual(["k001", "k002", "k200", "k201", "k010"]);
    // all() takes the rest of the batch at hand, then the batches after it.
    const rest = await it.all();
    expect([rest.length, rest[0], rest.at(-1)]).toEqual([289, "k011", "k299"]);
    await db.close();
  });

  it("sees the iterator's snapshot; a small range read in one batch can still be sought back", async () => {
    const db = await open(freshPath("seek-async-snapshot"));
    await db.put("a", "1");
    await db.put("b", "2");
    const it = db.keys();
    expect(await takeAsync(it, 1)).toEqual(["a"]);
    await db.put("aa", "new");
    it.seek("a");
    expect(await it.all()).toEqual(["a", "b"]);
    await db.close();
  });
});
