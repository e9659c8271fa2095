// Bad input of every kind gets a typed ShaleError (test `code`, never the message) and loses no
// data: after each rejected call, what was written before is intact. Damaged files are reported
// as CORRUPTION; a torn WAL tail is tolerated by design.
import { existsSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import {
  ShaleError,
  open,
  openSync,
  type Database,
  type Keyspace,
  type KeyspaceRef,
  type Lease,
  type Queue,
  type Snapshot,
  type SyncDatabase,
  type SyncKeyspace,
  type SyncQueue,
  type SyncTopic,
  type Topic,
  type WatchOptions,
  type WatchRange,
  type TopicFrom,
} from "shaledb";
import { recordioRoundTrip } from "shaledb/testing";

import {
  bytes,
  expectCode,
  expectRejects,
  filesMatching,
  flipByte,
  freshPath,
  tempDir,
  thrown,
} from "./helpers.js";

/** `value` typed as `T`: how these tests pass what the types forbid. */
function bad<T>(value: unknown): T {
  return value as T;
}

const WRONG_FOR_STRING: [string, unknown][] = [
  ["a number", 5],
  ["null", null],
  ["an object", { a: 1 }],
  ["undefined", undefined],
  ["a Uint8Array", bytes(1, 2)],
  ["a boolean", true],
  ["a symbol", Symbol("s")],
];

const WRONG_FOR_BINARY: [string, unknown][] = [
  ["a number", 5],
  ["null", null],
  ["an object", { a: 1 }],
  ["undefined", undefined],
  ["a string", "ab"],
  ["an ArrayBuffer", new ArrayBuffer(2)],
  ["an array of numbers", [1, 2]],
  ["a DataView", new DataView(new ArrayBuffer(2))],
];

/** Everything in the default keyspace and keyspace "ks", for before/after comparisons. */
function contents(db: SyncDatabase<string, string>, ks: SyncKeyspace<string, string>): unknown {
  return { default: [...db.iterator()], ks: [...ks.iterator()] };
}

function seeded(label: string): {
  dir: string;
  db: SyncDatabase<string, string>;
  ks: SyncKeyspace<string, string>;
  before: unknown;
} {
  const dir = freshPath(label);
  const db = openSync(dir);
  const ks = db.keyspace("ks");
  for (let i = 0; i < 20; i++) {
    db.put(`k${i}`, `v${i}`);
    ks.put(`k${i}`, `w${i}`);
  }
  return { dir, db, ks, before: contents(db, ks) };
}

/** The data of `dir` is `expected`, also after closing and reopening it. */
function expectIntact(
  dir: string,
  db: SyncDatabase<string, string>,
  ks: SyncKeyspace<string, string>,
  expected: unknown,
): void {
  expect(contents(db, ks)).toEqual(expected);
  db.close();
  const again = openSync(dir);
  expect(contents(again, again.keyspace("ks"))).toEqual(expected);
  again.close();
}

describe("wrong key and value types are INVALID_ARGUMENT and write nothing", () => {
  it("utf8 keys and values: every write and read rejects non-strings", () => {
    const { dir, db, ks, before } = seeded("types-utf8");
    for (const [, v] of WRONG_FOR_STRING) {
      const k = bad<string>(v);
      expectCode(() => db.put(k, "x"), "INVALID_ARGUMENT");
      expectCode(() => db.put("k1", k), "INVALID_ARGUMENT");
      expectCode(() => db.get(k), "INVALID_ARGUMENT");
      expectCode(() => db.has(k), "INVALID_ARGUMENT");
      expectCode(() => db.delete(k), "INVALID_ARGUMENT");
      expectCode(() => db.getMany(["k1", k]), "INVALID_ARGUMENT");
      expectCode(() => db.deleteRange({ gte: k, lt: "k9" }), "INVALID_ARGUMENT");
      expectCode(() => db.deleteRange({ gte: "k0", lt: k }), "INVALID_ARGUMENT");
      if (v !== undefined) {
        // (undefined bounds mean "unbounded")
        expectCode(() => db.iterator({ gte: k }), "INVALID_ARGUMENT");
        expectCode(() => db.keys({ lt: k }), "INVALID_ARGUMENT");
        expectCode(() => db.count({ prefix: k }), "INVALID_ARGUMENT");
      }
      expectCode(() => ks.put(k, "x"), "INVALID_ARGUMENT");
      expectCode(() => ks.put("k1", k), "INVALID_ARGUMENT");
      expectCode(() => db.batch([{ type: "put", key: "k1", value: "new" }, { type: "put", key: k, value: "x" }]), "INVALID_ARGUMENT");
      expectCode(() => db.batch([{ type: "put", key: "k1", value: k }]), "INVALID_ARGUMENT");
      expectCode(() => db.batch().put("k1", "new").put(k, "x"), "INVALID_ARGUMENT");
      expectCode(() => db.batch().put("k1", k, ks), "INVALID_ARGUMENT");
      const tx = db.transaction();
      tx.put("k1", "in-tx");
      expectCode(() => tx.put(k, "x"), "INVALID_ARGUMENT");
      expectCode(() => tx.put("k2", k, ks), "INVALID_ARGUMENT");
      expectCode(() => tx.get(k), "INVALID_ARGUMENT");
      tx.rollback();
    }
    expectIntact(dir, db, ks, before);
  });

  it("binary keys and values: every write and read rejects what is not a Uint8Array", () => {
    const dir = freshPath("types-binary");
    const db = openSync(dir, { keyEncoding: "binary", valueEncoding: "binary" });
    db.put(bytes(1), bytes(10));
    db.put(bytes(2), bytes(20));
    for (const [, v] of WRONG_FOR_BINARY) {
      const k = bad<Uint8Array>(v);
      expectCode(() => db.put(k, bytes(1)), "INVALID_ARGUMENT");
      expectCode(() => db.put(bytes(1), k), "INVALID_ARGUMENT");
      expectCode(() => db.get(k), "INVALID_ARGUMENT");
      expectCode(() => db.has(k), "INVALID_ARGUMENT");
      expectCode(() => db.delete(k), "INVALID_ARGUMENT");
      expectCode(() => db.deleteRange({ gte: k, lt: bytes(9) }), "INVALID_ARGUMENT");
      expectCode(() => db.batch([{ type: "delete", key: bytes(1) }, { type: "delete", key: k }]), "INVALID_ARGUMENT");
      if (v !== undefined) {
        expectCode(() => db.iterator({ gt: k }), "INVALID_ARGUMENT");
      }
    }
    // A Buffer is a Uint8Array: accepted.
    db.put(Buffer.from([3]), Buffer.from([30]));
    expect([...db.iterator()].map(([k, v]) => [[...k], [...v]])).toEqual([
      [[1], [10]],
      [[2], [20]],
      [[3], [30]],
    ]);
    db.close();
  });

  it("json values: what JSON cannot represent is rejected; null is a value", () => {
    const db = openSync(freshPath("types-json"), { valueEncoding: "json" });
    db.put("a", { x: [1, "two", null] });
    const circular: Record<string, unknown> = {};
    circular["self"] = circular;
    for (const v of [undefined, () => 1, Symbol("s"), 10n, circular]) {
      expectCode(() => db.put("a", bad<null>(v)), "INVALID_ARGUMENT");
      expectCode(() => db.batch([{ type: "put", key: "b", value: bad<null>(v) }]), "INVALID_ARGUMENT");
    }
    expect(db.get("a")).toEqual({ x: [1, "two", null] });
    expect(db.has("b")).toBe(false);
    db.put("n", null);
    expect(db.get("n")).toBeNull();
    expect(db.has("n")).toBe(true);
    db.close();
  });

  it("the Promise API rejects (never throws) wrong types, with the same code", async () => {
    const db = await open(freshPath("types-async"));
    await db.put("a", "1");
    const ks = await db.keyspace("ks");
    for (const [, v] of WRONG_FOR_STRING) {
      const k = bad<string>(v);
      await expectRejects(db.put(k, "x"), "INVALID_ARGUMENT");
      await expectRejects(db.put("a", k), "INVALID_ARGUMENT");
      await expectRejects(db.get(k), "INVALID_ARGUMENT");
      await expectRejects(db.has(k), "INVALID_ARGUMENT");
      await expectRejects(db.delete(k), "INVALID_ARGUMENT");
      await expectRejects(db.getMany([k]), "INVALID_ARGUMENT");
      await expectRejects(ks.put(k, "x"), "INVALID_ARGUMENT");
      await expectRejects(db.batch([{ type: "put", key: k, value: "x" }]), "INVALID_ARGUMENT");
    }
    expect(await db.iterator().all()).toEqual([["a", "1"]]);
    expect(await ks.count()).toBe(0);
    await db.close();
  });
});

describe("size limits", () => {
  it("a key over 64 KiB is INVALID_ARGUMENT everywhere; exactly 64 KiB is fine", () => {
    const { dir, db, ks, before } = seeded("oversize");
    const max = "k".repeat(64 * 1024);
    const over = "k".repeat(64 * 1024 + 1);
    // Fewer UTF-16 units than 64 Ki, more UTF-8 bytes: the limit is on bytes.
    const overInBytes = "é".repeat(40_000);
    for (const k of [over, overInBytes]) {
      expectCode(() => db.put(k, "x"), "INVALID_ARGUMENT");
      expectCode(() => ks.put(k, "x"), "INVALID_ARGUMENT");
      expectCode(() => db.get(k), "INVALID_ARGUMENT");
      expectCode(() => db.delete(k), "INVALID_ARGUMENT");
      expectCode(() => db.deleteRange({ gte: "a", lt: k }), "INVALID_ARGUMENT");
      // Atomic: the valid operations of the batch are not written either.
      expectCode(() => db.batch([{ type: "put", key: "k1", value: "changed" }, { type: "put", key: k, value: "x" }]), "INVALID_ARGUMENT");
      expectCode(() => db.batch().put("k2", "changed").put(k, "x", ks).write(), "INVALID_ARGUMENT");
      const tx = db.transaction();
      tx.put("k3", "changed");
      const error = thrown(() => {
        tx.put(k, "x");
        tx.commit();
      });
      expect(error).toBeInstanceOf(ShaleError);
      expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
      tx.rollback();
    }
    expect(contents(db, ks)).toEqual(before);
    db.put(max, "max");
    expect(db.get(max)).toBe("max");
    db.delete(max);
    expectIntact(dir, db, ks, before);
  });
});

describe("bad options", () => {
  const badOpenOptions: [string, unknown][] = [
    ["keyEncoding: 'hex'", { keyEncoding: "hex" }],
    ["keyEncoding: 'json' (values only)", { keyEncoding: "json" }],
    ["valueEncoding: 'xml'", { valueEncoding: "xml" }],
    ["valueEncoding: 5", { valueEncoding: 5 }],
    ["memtableSize: '4MB'", { memtableSize: "4MB" }],
    ["memtableSize: 1000 (below 64 KiB)", { memtableSize: 1000 }],
    ["memtableSize: 1.5e6 + 0.5", { memtableSize: 1.5e6 + 0.5 }],
    ["memtableSize: NaN", { memtableSize: NaN }],
    ["memtableSize: Infinity", { memtableSize: Infinity }],
    ["blockCacheSize: -1", { blockCacheSize: -1 }],
    ["bloomBitsPerKey: 1.5", { bloomBitsPerKey: 1.5 }],
    ["bloomBitsPerKey: -1", { bloomBitsPerKey: -1 }],
    ["compression: 'snappy'", { compression: "snappy" }],
    ["createIfMissing: 'no'", { createIfMissing: "no" }],
    ["errorIfExists: 1", { errorIfExists: 1 }],
    ["autoMaintenance: 'off'", { autoMaintenance: "off" }],
    ["options: null", null],
    ["options: 'fast'", "fast"],
  ];

  for (const [name, options] of badOpenOptions) {
    it(`openSync with ${name} is INVALID_ARGUMENT, and the directory stays usable`, () => {
      const dir = freshPath("options");
      expectCode(() => openSync(dir, bad<object>(options)), "INVALID_ARGUMENT");
      // Nothing is left locked or half-created: a good open works.
      const db = openSync(dir);
      db.put("a", "b");
      db.close();
    });
  }

  it("a size option out of range names the range and the value as JavaScript writes it", () => {
    // The module formats the number through JavaScript (no float formatting compiled in).
    for (const [value, shown] of [
      [1.5e6 + 0.5, "1500000.5"],
      [1e21, "1e+21"],
      [1000, "1000"],
    ] as const) {
      try {
        openSync(freshPath("options-message"), { memtableSize: value });
        expect.unreachable("openSync accepted a bad memtableSize");
      } catch (error) {
        expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
        expect((error as Error).message).toContain(
          `memtableSize must be a whole number from 65536 to 1000000000, got ${shown}`,
        );
      }
    }
  });

  it("open (Promise API) rejects bad options with INVALID_ARGUMENT", async () => {
    await expectRejects(open(freshPath("options-async"), bad<object>({ keyEncoding: "hex" })), "INVALID_ARGUMENT");
    await expectRejects(open(freshPath("options-async"), bad<object>({ memtableSize: "big" })), "INVALID_ARGUMENT");
  });

  it("a bad location is INVALID_ARGUMENT", async () => {
    expectCode(() => openSync(""), "INVALID_ARGUMENT");
    expectCode(() => openSync(bad<string>(5)), "INVALID_ARGUMENT");
    expectCode(() => openSync(bad<string>(undefined)), "INVALID_ARGUMENT");
    await expectRejects(open(""), "INVALID_ARGUMENT");
  });

  it("bad keyspace names and encodings, iterator limits and ranges are INVALID_ARGUMENT", () => {
    const { dir, db, ks, before } = seeded("call-options");
    expectCode(() => db.keyspace(""), "INVALID_ARGUMENT");
    expectCode(() => db.keyspace(bad<string>(5)), "INVALID_ARGUMENT");
    expectCode(() => db.keyspace("n".repeat(256)), "INVALID_ARGUMENT"); // names are 1 to 255 bytes
    expectCode(() => db.keyspace("é".repeat(128)), "INVALID_ARGUMENT");
    expect(db.keyspace("n".repeat(255)).count()).toBe(0);
    // Regression: the sync API opened ShaleDB's own keyspaces (names starting with NUL).
    expectCode(() => db.keyspace("\u0000shaledb:applied-writes"), "INVALID_ARGUMENT");
    expectCode(() => db.keyspace("x", bad<object>({ keyEncoding: "hex" })), "INVALID_ARGUMENT");
    expectCode(() => db.keyspace("x", bad<object>({ valueEncoding: "yaml" })), "INVALID_ARGUMENT");
    // Regression: options that are not an object (null) threw a TypeError, not a ShaleError.
    expectCode(() => db.keyspace("x", bad<object>(null)), "INVALID_ARGUMENT");
    expectCode(() => db.keyspace("x", bad<object>("binary")), "INVALID_ARGUMENT");
    for (const limit of ["5", 1.5, NaN]) {
      expectCode(() => db.iterator({ limit: bad<number>(limit) }), "INVALID_ARGUMENT");
      expectCode(() => db.count({ limit: bad<number>(limit) }), "INVALID_ARGUMENT");
    }
    expectCode(() => db.getMany(bad<string[]>("k1")), "INVALID_ARGUMENT");
    expectCode(() => db.batch(bad<[]>("ops")), "INVALID_ARGUMENT");
    expectCode(() => db.batch(bad<[]>([{ type: "merge", key: "k1", value: "x" }])), "INVALID_ARGUMENT");
    expectCode(() => db.batch(bad<[]>([{ type: "put", key: "k1", value: "x" }, null])), "INVALID_ARGUMENT");
    expectCode(() => db.deleteRange(bad<{ gte: string; lt: string }>(null)), "INVALID_ARGUMENT");
    expectCode(() => db.deleteRange(bad<{ gte: string; lt: string }>({ gte: "k1" })), "INVALID_ARGUMENT");
    expectCode(() => db.compact({ start: bad<string>(5) }), "INVALID_ARGUMENT");
    expectCode(() => db.checkpoint(""), "INVALID_ARGUMENT");
    expectCode(() => db.checkpoint(bad<string>(null)), "INVALID_ARGUMENT");
    expectIntact(dir, db, ks, before);
  });

  // Regression (fixed): options of the wrong type on writes, iteration and maintenance are ignored
  // silently (packages/js/src/engine/store.ts reads `options?.sync === true`, iterator.ts
  // `options.reverse === true`, the binding turns a non-number budget into 1 byte). A caller
  // who wrote `{ sync: "true" }` or `{ sync: 1 }` believes the write is durable, and it is not.
  it("a write option of the wrong type ({ sync: 'yes' }) is INVALID_ARGUMENT", () => {
    const db = openSync(freshPath("sync-type"));
    try {
      expectCode(() => db.put("a", "b", bad<{ sync: boolean }>({ sync: "yes" })), "INVALID_ARGUMENT");
    } finally {
      db.close();
    }
  });

  it("an iterator option of the wrong type ({ reverse: 'yes' }) is INVALID_ARGUMENT", () => {
    const db = openSync(freshPath("reverse-type"));
    try {
      expectCode(() => db.iterator({ reverse: bad<boolean>("yes") }), "INVALID_ARGUMENT");
    } finally {
      db.close();
    }
  });

  it("maintain() with a budget that is not a number is INVALID_ARGUMENT", () => {
    const db = openSync(freshPath("budget-type"));
    try {
      expectCode(() => db.maintain(bad<number>("1MB")), "INVALID_ARGUMENT");
    } finally {
      db.close();
    }
  });

  // FINDING (introduced with the wrong-type option check, f97ee4f): SyncTransactionImpl.commit
  // marks the transaction ended and stops tracking it *before* it checks `options.sync`, so a
  // commit with a bad option throws INVALID_ARGUMENT, the transaction is then CLOSED (its
  // writes lost, no retry possible), and the native transaction is never committed or rolled
  // back: its snapshot stays pinned until the database closes (compaction keeps old versions).
  // Expected: a rejected argument changes nothing; the same transaction can still commit.
  it("a commit with a wrong-type option is INVALID_ARGUMENT and leaves the transaction usable", () => {
    const db = openSync(freshPath("tx-commit-option"));
    try {
      db.put("k", "v0");
      const tx = db.transaction();
      tx.get("k");
      tx.put("t", "from the transaction");
      expectCode(() => tx.commit(bad<{ sync: boolean }>({ sync: "yes" })), "INVALID_ARGUMENT");
      tx.commit();
      expect(db.get("t")).toBe("from the transaction");
    } finally {
      db.close();
    }
  });

  it("a commit with a wrong-type option writes nothing (either API)", async () => {
    const db = openSync(freshPath("tx-commit-option-nothing"));
    const tx = db.transaction();
    tx.put("t", "x");
    expectCode(() => tx.commit(bad<{ sync: boolean }>({ sync: 1 })), "INVALID_ARGUMENT");
    expect(db.get("t")).toBeUndefined();
    db.close();
    const adb = await open(freshPath("tx-commit-option-async"));
    const atx = await adb.transaction();
    atx.put("t", "x");
    await expectRejects(atx.commit(bad<{ sync: boolean }>({ sync: "true" })), "INVALID_ARGUMENT");
    expect(await adb.get("t")).toBeUndefined();
    await adb.close();
  });
});

describe("objects of another database", () => {
  it("a snapshot or keyspace of another database is INVALID_ARGUMENT", async () => {
    const { dir, db, ks, before } = seeded("foreign");
    const other = openSync(freshPath("foreign-other"));
    const otherKs = other.keyspace("ks");
    const otherSnap = other.snapshot();
    const fakeSnap = bad<Snapshot>({ closed: false, close: () => undefined });
    for (const snapshot of [otherSnap, fakeSnap]) {
      expectCode(() => db.get("k1", { snapshot }), "INVALID_ARGUMENT");
      expectCode(() => db.has("k1", { snapshot }), "INVALID_ARGUMENT");
      expectCode(() => db.getMany(["k1"], { snapshot }), "INVALID_ARGUMENT");
      expectCode(() => db.iterator({ snapshot }), "INVALID_ARGUMENT");
      expectCode(() => ks.count({ snapshot }), "INVALID_ARGUMENT");
    }
    const fakeKs = bad<KeyspaceRef<string, string>>({ name: "ks" });
    for (const keyspace of [otherKs, fakeKs]) {
      expectCode(() => db.batch().put("k1", "x", keyspace), "INVALID_ARGUMENT");
      expectCode(() => db.batch().delete("k1", keyspace), "INVALID_ARGUMENT");
      expectCode(() => db.batch().deleteRange({ gte: "a", lt: "z" }, keyspace), "INVALID_ARGUMENT");
      const tx = db.transaction();
      expectCode(() => tx.get("k1", keyspace), "INVALID_ARGUMENT");
      expectCode(() => tx.put("k1", "x", keyspace), "INVALID_ARGUMENT");
      expectCode(() => tx.delete("k1", keyspace), "INVALID_ARGUMENT");
      tx.commit();
    }
    // The Promise API: its keyspaces and snapshots of another database too.
    const asyncOther = await open(freshPath("foreign-async"));
    const asyncKs = await asyncOther.keyspace("ks");
    const asyncSnap = await asyncOther.snapshot();
    expectCode(() => db.batch().put("k1", "x", asyncKs), "INVALID_ARGUMENT");
    expectCode(() => db.get("k1", { snapshot: asyncSnap }), "INVALID_ARGUMENT");
    const asyncDb = await open(freshPath("foreign-async-2"));
    await expectRejects(asyncDb.get("k1", { snapshot: otherSnap }), "INVALID_ARGUMENT");
    // A chained batch checks the keyspace when the operation is added.
    expectCode(() => asyncDb.batch().put("k1", "x", otherKs), "INVALID_ARGUMENT");
    expectCode(() => asyncDb.batch().put("k1", "x", asyncKs), "INVALID_ARGUMENT");
    const atx = await asyncDb.transaction();
    await expectRejects(atx.get("k1", asyncKs), "INVALID_ARGUMENT");
    expectCode(() => atx.put("k1", "x", otherKs), "INVALID_ARGUMENT");
    await atx.rollback();
    await asyncDb.close();
    await asyncOther.close();
    other.close();
    expectIntact(dir, db, ks, before);
  });
});

describe("deleteRange of an empty or inverted range", () => {
  it("gte == lt and gte > lt delete nothing and do not throw, in every form (the Level rule)", async () => {
    const { dir, db, ks, before } = seeded("range");
    for (const [gte, lt] of [
      ["k1", "k1"],
      ["k5", "k1"],
      ["z", "a"],
    ] as const) {
      db.deleteRange({ gte, lt });
      ks.deleteRange({ gte, lt });
      db.batch().deleteRange({ gte, lt }).write();
      db.batch().deleteRange({ gte, lt }, ks).write();
    }
    const adb = await open(freshPath("range-async"));
    await adb.put("k1", "v");
    await adb.deleteRange({ gte: "k2", lt: "k1" });
    await adb.deleteRange({ gte: "k1", lt: "k1" });
    await adb.batch().deleteRange({ gte: "k2", lt: "k1" }).put("k0", "w").write();
    expect(await adb.get("k1")).toBe("v");
    expect(await adb.get("k0")).toBe("w");
    await adb.close();
    await expectRejects(adb.deleteRange({ gte: "k2", lt: "k1" }), "CLOSED");
    expectIntact(dir, db, ks, before);
  });

  it("an empty range with a key of the wrong type is still INVALID_ARGUMENT", () => {
    const { db } = seeded("range-bad");
    expectCode(() => db.deleteRange(bad<{ gte: string; lt: string }>({ gte: 5, lt: "a" })), "INVALID_ARGUMENT");
    db.close();
  });
});

/** Writes 100 keys into tables and 50 more into the WAL, then closes. */
function databaseOnDisk(label: string): string {
  const dir = freshPath(label);
  const db = openSync(dir, { autoMaintenance: false });
  for (let i = 0; i < 100; i++) {
    db.put(`t${String(i).padStart(3, "0")}`, `table value ${i} `.repeat(4));
  }
  db.flush();
  for (let i = 0; i < 50; i++) {
    db.put(`w${String(i).padStart(3, "0")}`, `wal value ${i}`);
  }
  db.close();
  return dir;
}

/** Opens `dir` and reads everything; returns the error, if any, of the open or the reads. */
function openAndReadAll(dir: string): unknown {
  let db: SyncDatabase<string, string> | undefined;
  try {
    db = openSync(dir, { autoMaintenance: false });
    const entries = [...db.iterator()];
    for (const [k] of entries) {
      db.get(k);
    }
    return undefined;
  } catch (error) {
    return error;
  } finally {
    try {
      db?.close();
    } catch {
      // The error above is what the test looks at.
    }
  }
}

function expectCorruption(dir: string): void {
  const error = openAndReadAll(dir);
  expect(error, "a damaged file must be reported").toBeInstanceOf(ShaleError);
  expect((error as ShaleError).code, (error as ShaleError).message).toBe("CORRUPTION");
}

describe("damaged files are CORRUPTION", () => {
  it("a flipped byte in an SSTable's data is CORRUPTION when read", () => {
    const dir = databaseOnDisk("sst-data");
    const [table] = filesMatching(dir, /\.sst$/);
    expect(table).toBeDefined();
    flipByte(join(dir, table as string), 100);
    expectCorruption(dir);
    // A point read of a key in the damaged block, too.
    const db = openSync(dir, { autoMaintenance: false });
    expectCode(() => db.get("t000"), "CORRUPTION");
    // What the WAL held is unaffected.
    expect(db.get("w010")).toBe("wal value 10");
    db.close();
  });

  it("a flipped byte in an SSTable's footer is CORRUPTION", () => {
    const dir = databaseOnDisk("sst-footer");
    const [table] = filesMatching(dir, /\.sst$/);
    flipByte(join(dir, table as string), -20);
    expectCorruption(dir);
  });

  it("a truncated SSTable is CORRUPTION", () => {
    const dir = databaseOnDisk("sst-truncated");
    const [table] = filesMatching(dir, /\.sst$/);
    const path = join(dir, table as string);
    truncateSync(path, Math.floor(statSync(path).size / 2));
    expectCorruption(dir);
  });

  it("a flipped byte inside the MANIFEST's first edit is CORRUPTION on open", () => {
    const dir = databaseOnDisk("manifest-first");
    const [manifest] = filesMatching(dir, /^MANIFEST-/);
    flipByte(join(dir, manifest as string), 30);
    expectCode(() => openSync(dir), "CORRUPTION");
  });

  it("a flipped byte in the MANIFEST's last edit is CORRUPTION (the manifest no longer matches the files)", () => {
    const dir = databaseOnDisk("manifest-last");
    const [manifest] = filesMatching(dir, /^MANIFEST-/);
    flipByte(join(dir, manifest as string), -10);
    expectCode(() => openSync(dir), "CORRUPTION");
  });

  it("a truncated MANIFEST is CORRUPTION", () => {
    for (const cut of [5, "to 20 bytes"] as const) {
      const dir = databaseOnDisk("manifest-truncated");
      const [manifest] = filesMatching(dir, /^MANIFEST-/);
      const path = join(dir, manifest as string);
      truncateSync(path, cut === 5 ? statSync(path).size - 5 : 20);
      expectCode(() => openSync(dir), "CORRUPTION");
    }
  });

  it("a damaged or dangling CURRENT is CORRUPTION", () => {
    const garbage = databaseOnDisk("current-garbage");
    writeFileSync(join(garbage, "CURRENT"), "not a manifest name");
    expectCode(() => openSync(garbage), "CORRUPTION");
    const dangling = databaseOnDisk("current-dangling");
    writeFileSync(join(dangling, "CURRENT"), "MANIFEST-999999\n");
    expectCode(() => openSync(dangling), "CORRUPTION");
  });

  it("a flipped byte in the middle of the WAL (intact records after it) is CORRUPTION on open", () => {
    const dir = databaseOnDisk("wal-middle");
    const wals = filesMatching(dir, /^wal-\d+\.log$/);
    const newest = join(dir, wals[wals.length - 1] as string);
    expect(statSync(newest).size).toBeGreaterThan(1000);
    flipByte(newest, Math.floor(statSync(newest).size / 2));
    expectCode(() => openSync(dir), "CORRUPTION");
    // Refusing to open changed nothing: the damage is still reported.
    expectCode(() => openSync(dir), "CORRUPTION");
  });

  it("a torn WAL tail (last bytes cut off) is tolerated: every earlier write survives", () => {
    const dir = databaseOnDisk("wal-torn");
    const wals = filesMatching(dir, /^wal-\d+\.log$/);
    const newest = join(dir, wals[wals.length - 1] as string);
    // The last record is the synced mark close() appends after its sync: cutting into it
    // loses no write.
    truncateSync(newest, statSync(newest).size - 3);
    const db = openSync(dir);
    for (let i = 0; i < 100; i++) {
      expect(db.get(`t${String(i).padStart(3, "0")}`)).toBe(`table value ${i} `.repeat(4));
    }
    for (let i = 0; i < 50; i++) {
      expect(db.get(`w${String(i).padStart(3, "0")}`)).toBe(`wal value ${i}`);
    }
    // The database goes on: new writes survive a reopen.
    db.put("after", "torn tail", { sync: true });
    db.close();
    const again = openSync(dir);
    expect(again.get("after")).toBe("torn tail");
    expect(again.count()).toBe(100 + 50 + 1);
    again.close();
  });

  it("a WAL cut inside its last write keeps every write before it", () => {
    const dir = databaseOnDisk("wal-torn-write");
    const wals = filesMatching(dir, /^wal-\d+\.log$/);
    const newest = join(dir, wals[wals.length - 1] as string);
    // Past the close's synced mark (about 13 bytes) into the record of w049.
    truncateSync(newest, statSync(newest).size - 20);
    const db = openSync(dir);
    for (let i = 0; i < 49; i++) {
      expect(db.get(`w${String(i).padStart(3, "0")}`)).toBe(`wal value ${i}`);
    }
    expect(db.get("w049")).toBeUndefined();
    expect(db.count()).toBe(100 + 49);
    db.close();
  });

  it("the Promise API rejects a damaged database with CORRUPTION", async () => {
    const dir = databaseOnDisk("async-corrupt");
    const [manifest] = filesMatching(dir, /^MANIFEST-/);
    flipByte(join(dir, manifest as string), 30);
    await expectRejects(open(dir), "CORRUPTION");
  });
});

describe("opening where there is no database, or one already", () => {
  it("createIfMissing: false on an empty directory is an error (NOT_FOUND), and creates nothing", () => {
    const dir = tempDir("empty");
    const error = expectCode(() => openSync(dir, { createIfMissing: false }), "NOT_FOUND");
    expect(error.message).toContain("CURRENT");
    expect(filesMatching(dir, /^(CURRENT|MANIFEST-.*|wal-.*)$/)).toEqual([]);
  });

  // Regression (fixed): the Node storage bridge's errors from opening the directory (mkdir/stat in
  // NodeFsStorage's constructor, called outside the engine) escape as plain `Error`s with an
  // errno code ("ENOENT", "EEXIST", "ENOTDIR"), not as ShaleErrors, although `openSync` is
  // documented to throw ShaleError (codes IO / NOT_FOUND / INVALID_ARGUMENT).
  it("createIfMissing: false on a directory that does not exist is a ShaleError", () => {
    const dir = join(tempDir("missing"), "nothing-here");
    const error = thrown(() => openSync(dir, { createIfMissing: false }));
    expect(error).toBeInstanceOf(ShaleError);
    expect(existsSync(dir)).toBe(false);
  });

  it("opening a path that is a regular file is a ShaleError (IO or INVALID_ARGUMENT)", () => {
    const file = join(tempDir("file"), "plain-file");
    writeFileSync(file, "not a database");
    const error = thrown(() => openSync(file));
    expect(error).toBeInstanceOf(ShaleError);
    expect(["IO", "INVALID_ARGUMENT"]).toContain((error as ShaleError).code);
    expect(readFileSync(file, "utf8")).toBe("not a database");
  });

  it("a checkpoint into a path that is a regular file is a ShaleError", () => {
    const base = tempDir("cp-file");
    const file = join(base, "plain-file");
    writeFileSync(file, "x");
    const db = openSync(join(base, "db"));
    try {
      const error = thrown(() => db.checkpoint(file));
      expect(error).toBeInstanceOf(ShaleError);
    } finally {
      db.close();
    }
  });

  it("opening a path that is a regular file fails and leaves the file alone", () => {
    const file = join(tempDir("file2"), "plain-file");
    writeFileSync(file, "not a database");
    expect(thrown(() => openSync(file))).toBeInstanceOf(Error);
    expect(readFileSync(file, "utf8")).toBe("not a database");
  });

  it("errorIfExists on an existing database is ALREADY_EXISTS, and the database is intact", async () => {
    const dir = freshPath("exists");
    const db = openSync(dir);
    db.put("a", "1");
    db.close();
    expectCode(() => openSync(dir, { errorIfExists: true }), "ALREADY_EXISTS");
    await expectRejects(open(dir, { errorIfExists: true }), "ALREADY_EXISTS");
    const again = openSync(dir, { errorIfExists: false });
    expect(again.get("a")).toBe("1");
    again.close();
    // errorIfExists on a new directory is fine.
    const fresh = openSync(freshPath("exists-new"), { errorIfExists: true });
    fresh.close();
  });

  it("a database open in this process is LOCKED for a second open, through either API", async () => {
    const dir = freshPath("locked");
    const db = openSync(dir);
    db.put("a", "1");
    expectCode(() => openSync(dir), "LOCKED");
    await expectRejects(open(dir), "LOCKED");
    expect(db.get("a")).toBe("1");
    db.close();
    const again = openSync(dir);
    expect(again.get("a")).toBe("1");
    again.close();
  });

  it("a checkpoint into a directory that holds files is ALREADY_EXISTS and writes nothing there", () => {
    const base = tempDir("cp-exists");
    const db = openSync(join(base, "db"));
    db.put("a", "1");
    const target = join(base, "target");
    mkdirSync(target);
    writeFileSync(join(target, "keep.txt"), "mine");
    expectCode(() => db.checkpoint(target), "ALREADY_EXISTS");
    expect(filesMatching(target, /./)).toEqual(["keep.txt"]);
    // Into itself, too.
    expectCode(() => db.checkpoint(join(base, "db")), "ALREADY_EXISTS");
    expect(db.get("a")).toBe("1");
    db.close();
  });
});

// Regressions: arguments that escaped as a plain TypeError, were silently accepted, or (one)
// panicked the WebAssembly module. Each is INVALID_ARGUMENT now, and changes nothing.
describe("arguments that escaped as TypeError or were accepted silently", () => {
  it("a null keyspace argument of batch().put/delete/deleteRange and tx.get/put/delete is INVALID_ARGUMENT, in either API", async () => {
    const { dir, db, ks, before } = seeded("null-keyspace");
    const none = bad<KeyspaceRef<string, string>>(null);
    const batch = db.batch().put("k1", "changed");
    expectCode(() => batch.put("k1", "x", none), "INVALID_ARGUMENT");
    expectCode(() => batch.delete("k1", none), "INVALID_ARGUMENT");
    expectCode(() => batch.deleteRange({ gte: "a", lt: "z" }, none), "INVALID_ARGUMENT");
    expect(batch.length).toBe(1);
    batch.clear();
    const tx = db.transaction();
    expectCode(() => tx.get("k1", none), "INVALID_ARGUMENT");
    expectCode(() => tx.put("k1", "x", none), "INVALID_ARGUMENT");
    expectCode(() => tx.delete("k1", none), "INVALID_ARGUMENT");
    tx.commit();
    // A keyspace's name is not a keyspace either.
    expectCode(() => db.batch().put("k1", "x", bad<KeyspaceRef<string, string>>("ks")), "INVALID_ARGUMENT");
    expect(contents(db, ks)).toEqual(before);
    db.close();
    const adb = await open(dir);
    const abatch = adb.batch();
    expectCode(() => abatch.put("k1", "x", none), "INVALID_ARGUMENT");
    expectCode(() => abatch.delete("k1", none), "INVALID_ARGUMENT");
    expectCode(() => abatch.deleteRange({ gte: "a", lt: "z" }, none), "INVALID_ARGUMENT");
    const atx = await adb.transaction();
    await expectRejects(atx.get("k1", none), "INVALID_ARGUMENT");
    expectCode(() => atx.put("k1", "x", none), "INVALID_ARGUMENT");
    expectCode(() => atx.delete("k1", none), "INVALID_ARGUMENT");
    await atx.rollback();
    await adb.close();
    const again = openSync(dir);
    expectIntact(dir, again, again.keyspace("ks"), before);
  });

  it("batch().deleteRange(null) is INVALID_ARGUMENT, in either API", async () => {
    const { dir, db, ks, before } = seeded("batch-range-null");
    expectCode(() => db.batch().deleteRange(bad<{ gte: string; lt: string }>(null)), "INVALID_ARGUMENT");
    expectCode(() => db.batch().deleteRange(bad<{ gte: string; lt: string }>("k1"), ks), "INVALID_ARGUMENT");
    db.close();
    const adb = await open(dir);
    expectCode(() => adb.batch().deleteRange(bad<{ gte: string; lt: string }>(null)), "INVALID_ARGUMENT");
    await adb.close();
    const again = openSync(dir);
    expectIntact(dir, again, again.keyspace("ks"), before);
  });

  it("transact(42), a body that is not a function, is INVALID_ARGUMENT and begins no transaction", async () => {
    const db = openSync(freshPath("transact-body"));
    expectCode(() => db.transact(bad<() => void>(42)), "INVALID_ARGUMENT");
    expectCode(() => db.transact(bad<() => void>(null)), "INVALID_ARGUMENT");
    db.close(); // nothing left open: a transaction would have been closed here silently anyway
    const adb = await open(freshPath("transact-body-async"));
    await expectRejects(adb.transact(bad<() => Promise<void>>(42)), "INVALID_ARGUMENT");
    await adb.close();
  });

  it("transact(fn, null) is INVALID_ARGUMENT and does not run the body", async () => {
    let runs = 0;
    const db = openSync(freshPath("transact-null-options"));
    expectCode(() => db.transact(() => (runs += 1), bad<{ retries: number }>(null)), "INVALID_ARGUMENT");
    expectCode(() => db.transact(() => (runs += 1), bad<{ retries: number }>("fast")), "INVALID_ARGUMENT");
    db.close();
    const adb = await open(freshPath("transact-null-options-async"));
    await expectRejects(
      adb.transact(async () => (runs += 1), bad<{ retries: number }>(null)),
      "INVALID_ARGUMENT",
    );
    await adb.close();
    expect(runs).toBe(0);
  });

  // `{ retries: NaN }` retried a conflicting body forever (`attempt >= NaN` is never true).
  it("transact with retries that is not a non-negative integer (NaN, -1, 1.5, Infinity, '3') is INVALID_ARGUMENT before the body runs", async () => {
    let runs = 0;
    const conflict = (): never => {
      runs += 1;
      throw Object.assign(new Error("a conflict"), { code: "CONFLICT" });
    };
    const db = openSync(freshPath("transact-retries"));
    const adb = await open(freshPath("transact-retries-async"));
    for (const retries of [NaN, -1, 1.5, Infinity, "3", null]) {
      expectCode(() => db.transact(conflict, { retries: bad<number>(retries) }), "INVALID_ARGUMENT");
      await expectRejects(
        adb.transact(async () => conflict(), { retries: bad<number>(retries) }),
        "INVALID_ARGUMENT",
      );
    }
    expect(runs).toBe(0);
    // retries: 0 is valid: one attempt, no retry.
    expect(thrown(() => db.transact(conflict, { retries: 0 }))).toMatchObject({ code: "CONFLICT" });
    expect(runs).toBe(1);
    await adb.close();
    db.close();
  });

  it("compact(null) is INVALID_ARGUMENT, in either API; compact() and compact({}) compact everything", async () => {
    const db = openSync(freshPath("compact-null"));
    db.put("a", "1");
    expectCode(() => db.compact(bad<object>(null)), "INVALID_ARGUMENT");
    expectCode(() => db.compact(bad<object>("a")), "INVALID_ARGUMENT");
    db.compact();
    db.compact({});
    expect(db.get("a")).toBe("1");
    db.close();
    const adb = await open(db.location);
    await expectRejects(adb.compact(bad<object>(null)), "INVALID_ARGUMENT");
    await adb.compact();
    await adb.close();
  });

  it("an array batch operation with a bad keyspace field (null, a name, a fake, another database's) is INVALID_ARGUMENT and writes nothing", async () => {
    const { dir, db, before } = seeded("batch-keyspace-field");
    const other = openSync(freshPath("batch-keyspace-field-other"));
    for (const keyspace of [null, "ks", 7, { name: "ks" }, other.keyspace("ks")]) {
      expectCode(
        () =>
          db.batch([
            { type: "put", key: "k1", value: "changed" },
            bad<{ type: "put"; key: string; value: string }>({ type: "put", key: "k2", value: "x", keyspace }),
          ]),
        "INVALID_ARGUMENT",
      );
    }
    other.close();
    db.close();
    const adb = await open(dir);
    await expectRejects(
      adb.batch([bad<{ type: "delete"; key: string }>({ type: "delete", key: "k1", keyspace: null })]),
      "INVALID_ARGUMENT",
    );
    await adb.close();
    const again = openSync(dir);
    expectIntact(dir, again, again.keyspace("ks"), before);
  });

  it("keyEncoding: null and valueEncoding: null are INVALID_ARGUMENT, for open and for keyspace", async () => {
    const dir = freshPath("encoding-null");
    expectCode(() => openSync(dir, bad<object>({ keyEncoding: null })), "INVALID_ARGUMENT");
    expectCode(() => openSync(dir, bad<object>({ valueEncoding: null })), "INVALID_ARGUMENT");
    await expectRejects(open(dir, bad<object>({ keyEncoding: null })), "INVALID_ARGUMENT");
    const db = openSync(dir);
    expectCode(() => db.keyspace("x", bad<object>({ keyEncoding: null })), "INVALID_ARGUMENT");
    expectCode(() => db.keyspace("x", bad<object>({ valueEncoding: null })), "INVALID_ARGUMENT");
    db.close();
  });

  // "\uD800" and "\uDC00" both encoded to U+FFFD's bytes: two strings, one key.
  it("utf8 keys that are not well-formed UTF-16 (lone surrogates) are INVALID_ARGUMENT, so they can no longer collide", async () => {
    const { dir, db, ks, before } = seeded("lone-surrogate-keys");
    for (const k of ["\uD800", "\uDC00", "a\uD83D", "\uDE00b", "x\uDC00\uD800y"]) {
      expectCode(() => db.put(k, "x"), "INVALID_ARGUMENT");
      expectCode(() => ks.put(k, "x"), "INVALID_ARGUMENT");
      expectCode(() => db.get(k), "INVALID_ARGUMENT");
      expectCode(() => db.has(k), "INVALID_ARGUMENT");
      expectCode(() => db.delete(k), "INVALID_ARGUMENT");
      expectCode(() => db.deleteRange({ gte: "a", lt: k }), "INVALID_ARGUMENT");
      expectCode(() => db.iterator({ gte: k }), "INVALID_ARGUMENT");
      expectCode(() => db.batch([{ type: "put", key: k, value: "x" }]), "INVALID_ARGUMENT");
      expectCode(() => db.batch().put(k, "x"), "INVALID_ARGUMENT");
      const tx = db.transaction();
      expectCode(() => tx.put(k, "x"), "INVALID_ARGUMENT");
      tx.rollback();
    }
    // A well-formed pair is one character, and fine.
    db.put("\uD83D\uDE00", "emoji");
    expect(db.get("\uD83D\uDE00")).toBe("emoji");
    db.delete("\uD83D\uDE00");
    db.close();
    const adb = await open(dir);
    await expectRejects(adb.put("\uD800", "x"), "INVALID_ARGUMENT");
    await expectRejects(adb.get("\uDC00"), "INVALID_ARGUMENT");
    await adb.close();
    const again = openSync(dir);
    expectIntact(dir, again, again.keyspace("ks"), before);
  });

  it("utf8 values that are not well-formed UTF-16 are INVALID_ARGUMENT (they would not read back as written)", () => {
    const { dir, db, ks, before } = seeded("lone-surrogate-values");
    expectCode(() => db.put("k1", "\uD800"), "INVALID_ARGUMENT");
    expectCode(() => ks.put("k1", "broken \uDFFF"), "INVALID_ARGUMENT");
    expectCode(() => db.batch([{ type: "put", key: "k1", value: "\uD800" }]), "INVALID_ARGUMENT");
    const tx = db.transaction();
    expectCode(() => tx.put("k1", "\uDC00"), "INVALID_ARGUMENT");
    tx.rollback();
    expectIntact(dir, db, ks, before);
  });

  it("keyspace names, locations and checkpoint destinations that are not well-formed UTF-16 are INVALID_ARGUMENT", async () => {
    const base = tempDir("lone-surrogate-paths");
    expectCode(() => openSync(join(base, "db\uD800")), "INVALID_ARGUMENT");
    await expectRejects(open(join(base, "db\uDC00")), "INVALID_ARGUMENT");
    const db = openSync(join(base, "db"));
    expectCode(() => db.keyspace("ks\uD800"), "INVALID_ARGUMENT");
    expectCode(() => db.checkpoint(join(base, "copy\uD800")), "INVALID_ARGUMENT");
    db.close();
    expect(filesMatching(base, /./)).toEqual(["db"]);
  });

  // A number where the binding expects a string trapped the WebAssembly instance: every handle
  // of every database then failed with PANIC.
  it("recordioRoundTrip with a compression or format that is not a string is INVALID_ARGUMENT, not a PANIC", () => {
    const db = openSync(freshPath("recordio-args"));
    db.put("a", "1");
    expectCode(() => recordioRoundTrip([], bad<{ compression: "none" }>({ compression: 5 })), "INVALID_ARGUMENT");
    expectCode(() => recordioRoundTrip([], bad<{ format: "shale" }>({ format: 5 })), "INVALID_ARGUMENT");
    expectCode(() => recordioRoundTrip(bad<[]>(null)), "INVALID_ARGUMENT");
    expectCode(() => recordioRoundTrip([], bad<object>(null)), "INVALID_ARGUMENT");
    expectCode(() => recordioRoundTrip([], { compression: bad<"none">("bogus") }), "INVALID_ARGUMENT");
    expect(db.get("a")).toBe("1"); // the instance lives on
    expect(recordioRoundTrip([bytes(1), null], { compression: "snappy" })).toEqual([bytes(1), null]);
    db.close();
  });

  it("options that are not objects (null, a string, an array) are INVALID_ARGUMENT for reads, writes, iterators and batches", async () => {
    const { dir, db, ks, before } = seeded("options-not-objects");
    for (const options of [null, "sync", [true]]) {
      const o = bad<undefined>(options);
      expectCode(() => db.get("k1", o), "INVALID_ARGUMENT");
      expectCode(() => db.getMany(["k1"], o), "INVALID_ARGUMENT");
      expectCode(() => db.has("k1", o), "INVALID_ARGUMENT");
      expectCode(() => db.put("k1", "x", o), "INVALID_ARGUMENT");
      expectCode(() => ks.delete("k1", o), "INVALID_ARGUMENT");
      expectCode(() => db.deleteRange({ gte: "k1", lt: "k2" }, o), "INVALID_ARGUMENT");
      expectCode(() => db.iterator(o), "INVALID_ARGUMENT");
      expectCode(() => db.keys(o), "INVALID_ARGUMENT");
      expectCode(() => ks.values(o), "INVALID_ARGUMENT");
      expectCode(() => db.count(o), "INVALID_ARGUMENT");
      expectCode(() => db.batch([{ type: "put", key: "k1", value: "x" }], o), "INVALID_ARGUMENT");
      expectCode(() => db.batch().put("k1", "x").write(o), "INVALID_ARGUMENT");
      const tx = db.transaction();
      tx.put("k1", "x");
      expectCode(() => tx.commit(o), "INVALID_ARGUMENT");
      tx.rollback();
    }
    db.close();
    const adb = await open(dir);
    await expectRejects(adb.get("k1", bad<undefined>(null)), "INVALID_ARGUMENT");
    await expectRejects(adb.put("k1", "x", bad<undefined>(null)), "INVALID_ARGUMENT");
    await adb.close();
    const again = openSync(dir);
    expectIntact(dir, again, again.keyspace("ks"), before);
  });

  it("an empty array batch still checks its options, and that the database is open", async () => {
    const db = openSync(freshPath("empty-batch"));
    expectCode(() => db.batch([], bad<{ sync: boolean }>({ sync: "yes" })), "INVALID_ARGUMENT");
    expectCode(() => db.batch().write(bad<{ sync: boolean }>({ sync: 1 })), "INVALID_ARGUMENT");
    db.batch([], { sync: true });
    db.close();
    expectCode(() => db.batch([]), "CLOSED");
    const adb = await open(db.location);
    const empty = adb.batch();
    await adb.close();
    await expectRejects(empty.write(), "CLOSED");
    await expectRejects(adb.batch([]), "CLOSED");
  });
});

// Every method of the public API has a bad-input case here, through both APIs; a method that
// takes no argument has its misuse instead (use after close, or a second close, which is a
// no-op). The tables are checked against the methods the objects really have, so a method added
// without a case fails the "covers every method" tests.

/** Methods of the implementation that are not part of the public API. */
const INTERNAL_METHODS = new Set([
  "encodeKey",
  "encodeValue",
  "packKey",
  "packValue",
  "getPacked",
  "hasPacked",
  "putPacked",
  "deletePacked",
  "countAll",
  "countAllInSlices",
  // Queues: what the server and batches use (not in the public types).
  "pushed",
  "pushEncoded",
  "readPacked",
  "readItems",
  "ackPairs",
  "nextWake",
  "groupHandle",
  "ackLease",
  // Topics: likewise.
  "appended",
  "packRecord",
  "appendEncoded",
  "latestPacked",
  "resolve",
  "commitChecked",
  "commitOffsetChecked",
]);

/** The public method names of `object` (own and inherited, up to Object), sorted. */
function methodNames(object: object): string[] {
  const names = new Set<string>();
  for (let p: object | null = Object.getPrototypeOf(object) as object | null; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p)) {
      const descriptor = Object.getOwnPropertyDescriptor(p, name);
      if (name !== "constructor" && typeof descriptor?.value === "function" && !INTERNAL_METHODS.has(name)) {
        names.add(name);
      }
    }
  }
  return [...names].sort();
}

const INVALID = "INVALID_ARGUMENT";

interface SyncWorld {
  db: SyncDatabase<string, string>;
  ks: SyncKeyspace<string, string>;
  q: SyncQueue<string>;
  t: SyncTopic<string>;
}

function syncWorld(): SyncWorld {
  const db = openSync(freshPath("methods"));
  const ks = db.keyspace("ks");
  db.put("k1", "v1");
  ks.put("k1", "w1");
  return { db, ks, q: db.queue("q"), t: db.topic("t") };
}

type Cases<W> = Record<string, (world: W) => unknown>;

/** The store methods (database and keyspace alike) of the synchronous API. */
function syncStoreCases(pick: (w: SyncWorld) => SyncKeyspace<string, string> | SyncDatabase<string, string>): Cases<SyncWorld> {
  return {
    get: (w) => {
      expectCode(() => pick(w).get(bad<string>(5)), INVALID);
      expectCode(() => pick(w).get("k1", { snapshot: bad<Snapshot>({}) }), INVALID);
    },
    getMany: (w) => expectCode(() => pick(w).getMany(bad<string[]>(null)), INVALID),
    has: (w) => expectCode(() => pick(w).has("k1", bad<undefined>(null)), INVALID),
    put: (w) => expectCode(() => pick(w).put("k1", bad<string>(1)), INVALID),
    delete: (w) => expectCode(() => pick(w).delete(bad<string>(null)), INVALID),
    deleteRange: (w) => expectCode(() => pick(w).deleteRange(bad<{ gte: string; lt: string }>(undefined)), INVALID),
    iterator: (w) => expectCode(() => pick(w).iterator({ limit: bad<number>("all") }), INVALID),
    keys: (w) => expectCode(() => pick(w).keys({ gt: bad<string>(1) }), INVALID),
    values: (w) => expectCode(() => pick(w).values({ reverse: bad<boolean>(1) }), INVALID),
    count: (w) => expectCode(() => pick(w).count(bad<undefined>("k")), INVALID),
    watch: (w) => expectCode(() => pick(w).watch({ gt: bad<string>(1) }), INVALID),
    liveQuery: (w) => expectCode(() => pick(w).liveQuery({}, bad<() => number>(null)), INVALID),
  };
}

/** The queue methods of the synchronous API (`queue-bad-input.test.ts` has many more cases). */
const syncQueueCases: Cases<SyncWorld> = {
  push: (w) => expectCode(() => w.q.push(bad<string>(null)), INVALID),
  pushMany: (w) => expectCode(() => w.q.pushMany(bad<string[]>("abc")), INVALID),
  take: (w) => expectCode(() => w.q.take({ waitMs: 5 }), INVALID),
  takeMany: (w) => expectCode(() => w.q.takeMany(0), INVALID),
  peek: (w) => {
    w.db.close();
    expectCode(() => w.q.peek(), "CLOSED");
  },
  peekMany: (w) => expectCode(() => w.q.peekMany(bad<number>("2")), INVALID),
  reserve: (w) => expectCode(() => w.q.reserve({ leaseMs: 0 }), INVALID),
  reserveMany: (w) => expectCode(() => w.q.reserveMany(bad<number>("1")), INVALID),
  ack: (w) => expectCode(() => w.q.ack(bad<Lease>(null)), INVALID),
  ackMany: (w) => expectCode(() => w.q.ackMany(bad<Lease[]>({ id: 1, delivery: 1 })), INVALID),
  release: (w) => expectCode(() => w.q.release({ id: 1, delivery: 1 }, { delayMs: -1 }), INVALID),
  extend: (w) => expectCode(() => w.q.extend({ id: 1, delivery: 1 }, 0), INVALID),
  group: (w) => expectCode(() => w.q.group(""), INVALID),
  groups: (w) => {
    w.db.close();
    expectCode(() => w.q.groups(), "CLOSED");
  },
  removeGroup: (w) => expectCode(() => w.q.removeGroup(bad<string>(undefined)), INVALID),
  stats: (w) => {
    w.db.close();
    expectCode(() => w.q.stats(), "CLOSED");
  },
  clear: (w) => {
    w.db.close();
    expectCode(() => w.q.clear(), "CLOSED");
  },
};

/** The topic methods of the synchronous API (`topic-bad-input.test.ts` has more cases). */
const syncTopicCases: Cases<SyncWorld> = {
  append: (w) => {
    expectCode(() => w.t.append(bad<string>(null)), INVALID);
    expectCode(() => w.t.append("v", { headers: bad<Record<string, string>>({ h: 1 }) }), INVALID);
  },
  appendMany: (w) => expectCode(() => w.t.appendMany(bad<string[]>("abc")), INVALID),
  read: (w) => expectCode(() => w.t.read({ from: bad<TopicFrom>("middle") }), INVALID),
  latest: (w) => expectCode(() => w.t.latest(-1), INVALID),
  subscribe: (w) => expectCode(() => w.t.subscribe({ chunk: 0 }), INVALID),
  commit: (w) => expectCode(() => w.t.commit("g", 0.5), INVALID),
  committed: (w) => expectCode(() => w.t.committed(""), INVALID),
  removeGroup: (w) => expectCode(() => w.t.removeGroup(bad<string>(undefined)), INVALID),
  applyRetention: (w) => {
    w.db.close();
    expectCode(() => w.t.applyRetention(), "CLOSED");
  },
  stats: (w) => {
    w.db.close();
    expectCode(() => w.t.stats(), "CLOSED");
  },
};

const syncDatabaseCases: Cases<SyncWorld> = {
  ...syncStoreCases((w) => w.db),
  topic: (w) => expectCode(() => w.db.topic("t", { maxRecords: -1 }), INVALID),
  topics: (w) => {
    w.db.close();
    expectCode(() => w.db.topics(), "CLOSED");
  },
  deleteTopic: (w) => expectCode(() => w.db.deleteTopic(bad<string>(null)), INVALID),
  queue: (w) => expectCode(() => w.db.queue("q", { maxItems: -1 }), INVALID),
  queues: (w) => {
    w.db.close();
    expectCode(() => w.db.queues(), "CLOSED");
  },
  deleteQueue: (w) => expectCode(() => w.db.deleteQueue(bad<string>(null)), INVALID),
  keyspace: (w) => expectCode(() => w.db.keyspace(bad<string>(null)), INVALID),
  batch: (w) => expectCode(() => w.db.batch(bad<[]>({ type: "put" })), INVALID),
  snapshot: (w) => {
    w.db.close();
    expectCode(() => w.db.snapshot(), "CLOSED");
  },
  transaction: (w) => {
    w.db.close();
    expectCode(() => w.db.transaction(), "CLOSED");
  },
  transact: (w) => expectCode(() => w.db.transact(() => 1, { retries: NaN }), INVALID),
  flush: (w) => {
    w.db.close();
    expectCode(() => w.db.flush(), "CLOSED");
  },
  compact: (w) => expectCode(() => w.db.compact({ end: bad<string>(null) }), INVALID),
  maintain: (w) => expectCode(() => w.db.maintain(NaN), INVALID),
  checkpoint: (w) => expectCode(() => w.db.checkpoint(bad<string>(undefined)), INVALID),
  changes: (w) => expectCode(() => w.db.changes({ since: -1 }), INVALID),
  sequence: (w) => {
    w.db.close();
    expectCode(() => w.db.sequence(), "CLOSED");
  },
  // Not opened readOnly.
  catchUp: (w) => expectCode(() => w.db.catchUp(), INVALID),
  ackChanges: (w) => expectCode(() => w.db.ackChanges("cursor", 1.5), INVALID),
  changeCursor: (w) => expectCode(() => w.db.changeCursor(bad<string>(null)), INVALID),
  removeChangeCursor: (w) => expectCode(() => w.db.removeChangeCursor(""), INVALID),
  applyChanges: (w) => expectCode(() => w.db.applyChanges(bad<Uint8Array>("bytes")), INVALID),
  stats: (w) => {
    w.db.close();
    expectCode(() => w.db.stats(), "CLOSED");
  },
  close: (w) => {
    w.db.close();
    w.db.close(); // idempotent
    expect(w.db.closed).toBe(true);
    expectCode(() => w.db.get("k1"), "CLOSED");
  },
};

const syncBatchCases: Cases<SyncWorld> = {
  put: (w) => expectCode(() => w.db.batch().put("k", "v", bad<KeyspaceRef<string, string>>(null)), INVALID),
  delete: (w) => expectCode(() => w.db.batch().delete(bad<string>(5)), INVALID),
  deleteRange: (w) => expectCode(() => w.db.batch().deleteRange(bad<{ gte: string; lt: string }>(null)), INVALID),
  write: (w) => expectCode(() => w.db.batch().put("k", "v").write(bad<{ sync: boolean }>({ sync: "yes" })), INVALID),
  clear: (w) => {
    const batch = w.db.batch().put("k2", "v");
    w.db.close();
    batch.clear(); // only the queue: fine on a closed database
    expect(batch.length).toBe(0);
    expectCode(() => batch.write(), "CLOSED");
  },
};

const syncTransactionCases: Cases<SyncWorld> = {
  append: (w) => {
    expectCode(() => w.db.transaction().append(w.t, bad<string>(5)), INVALID);
    expectCode(() => w.db.transaction().append(bad<SyncTopic<string>>("t"), "v"), INVALID);
  },
  commitOffset: (w) => expectCode(() => w.db.transaction().commitOffset(w.t, "g", -1), INVALID),
  push: (w) => {
    expectCode(() => w.db.transaction().push(w.q, bad<string>(5)), INVALID);
    expectCode(() => w.db.transaction().push(bad<SyncQueue<string>>("q"), "v"), INVALID);
  },
  ack: (w) => expectCode(() => w.db.transaction().ack(w.q, bad<Lease>({ id: -1, delivery: 1 })), INVALID),
  get: (w) => expectCode(() => w.db.transaction().get("k1", bad<KeyspaceRef<string, string>>("ks")), INVALID),
  put: (w) => expectCode(() => w.db.transaction().put("k1", bad<string>({})), INVALID),
  delete: (w) => expectCode(() => w.db.transaction().delete(bad<string>(true)), INVALID),
  commit: (w) => expectCode(() => w.db.transaction().commit(bad<undefined>(null)), INVALID),
  rollback: (w) => {
    const tx = w.db.transaction();
    tx.rollback();
    tx.rollback(); // idempotent
    expectCode(() => tx.get("k1"), "CLOSED");
  },
};

const snapshotCases: Cases<SyncWorld> = {
  close: (w) => {
    const snapshot = w.db.snapshot();
    snapshot.close();
    snapshot.close(); // idempotent
    expectCode(() => w.db.get("k1", { snapshot }), "CLOSED");
  },
};

const syncIteratorCases: Cases<SyncWorld> = {
  next: (w) => {
    const it = w.db.iterator();
    w.db.close();
    expectCode(() => it.next(), "CLOSED");
  },
  return: (w) => {
    const it = w.db.iterator();
    expect(it.return?.()).toEqual({ done: true, value: undefined });
    expect(it.next()).toEqual({ done: true, value: undefined });
  },
  close: (w) => {
    const it = w.db.iterator();
    it.close();
    it.close(); // idempotent
    expect(it.next().done).toBe(true);
  },
  seek: (w) => {
    const it = w.db.iterator();
    expectCode(() => it.seek(bad<string>(5)), "INVALID_ARGUMENT");
    expectCode(() => it.seek(bad<string>(undefined)), "INVALID_ARGUMENT");
    w.db.close();
    expectCode(() => it.seek("k1"), "CLOSED");
  },
};

interface AsyncWorld {
  db: Database<string, string>;
  ks: Keyspace<string, string>;
  q: Queue<string>;
  t: Topic<string>;
}

async function asyncWorld(): Promise<AsyncWorld> {
  const db = await open(freshPath("methods-async"));
  const ks = await db.keyspace("ks");
  await db.put("k1", "v1");
  return { db, ks, q: await db.queue("q"), t: await db.topic("t") };
}

function asyncStoreCases(pick: (w: AsyncWorld) => Keyspace<string, string> | Database<string, string>): Cases<AsyncWorld> {
  return {
    get: async (w) => {
      await expectRejects(pick(w).get(bad<string>(5)), INVALID);
    },
    getMany: async (w) => {
      await expectRejects(pick(w).getMany(["k1", bad<string>(null)]), INVALID);
    },
    has: async (w) => {
      await expectRejects(pick(w).has("k1", bad<undefined>("latest")), INVALID);
    },
    put: async (w) => {
      await expectRejects(pick(w).put("k1", "v", bad<undefined>(null)), INVALID);
    },
    delete: async (w) => {
      await expectRejects(pick(w).delete(bad<string>(undefined)), INVALID);
    },
    deleteRange: async (w) => {
      await expectRejects(pick(w).deleteRange(bad<{ gte: string; lt: string }>(null)), INVALID);
    },
    iterator: (w) => {
      expectCode(() => pick(w).iterator({ limit: 0.5 }), INVALID);
    },
    keys: (w) => {
      expectCode(() => pick(w).keys(bad<undefined>(null)), INVALID);
    },
    values: (w) => {
      expectCode(() => pick(w).values({ lte: bad<string>(3) }), INVALID);
    },
    count: async (w) => {
      await expectRejects(pick(w).count({ reverse: bad<boolean>("no") }), INVALID);
    },
    watch: (w) => {
      expectCode(() => pick(w).watch(bad<WatchRange<string>>(null)), INVALID);
    },
    liveQuery: (w) => {
      expectCode(() => pick(w).liveQuery({}, () => 1, bad<WatchOptions>({ coalesce: "often" })), INVALID);
    },
  };
}

/** The queue methods of the Promise API (`queue-bad-input.test.ts` has many more cases). */
const asyncQueueCases: Cases<AsyncWorld> = {
  push: (w) => expectRejects(w.q.push(bad<string>(null)), INVALID),
  pushMany: (w) => expectRejects(w.q.pushMany(bad<string[]>("abc")), INVALID),
  take: (w) => expectRejects(w.q.take({ waitMs: -5 }), INVALID),
  takeMany: (w) => expectRejects(w.q.takeMany(0), INVALID),
  peek: async (w) => {
    await w.db.close();
    await expectRejects(w.q.peek(), "CLOSED");
  },
  peekMany: (w) => expectRejects(w.q.peekMany(0), INVALID),
  reserve: (w) => expectRejects(w.q.reserve({ leaseMs: 0 }), INVALID),
  reserveMany: (w) => expectRejects(w.q.reserveMany(bad<number>("1")), INVALID),
  ack: (w) => expectRejects(w.q.ack(bad<Lease>(null)), INVALID),
  ackMany: (w) => expectRejects(w.q.ackMany(bad<Lease[]>({ id: 1, delivery: 1 })), INVALID),
  release: (w) => expectRejects(w.q.release({ id: 1, delivery: 1 }, { delayMs: -1 }), INVALID),
  extend: (w) => expectRejects(w.q.extend({ id: 1, delivery: 1 }, 0), INVALID),
  group: (w) => expectRejects(w.q.group(""), INVALID),
  groups: async (w) => {
    await w.db.close();
    await expectRejects(w.q.groups(), "CLOSED");
  },
  removeGroup: (w) => expectRejects(w.q.removeGroup(bad<string>(undefined)), INVALID),
  stats: async (w) => {
    await w.db.close();
    await expectRejects(w.q.stats(), "CLOSED");
  },
  clear: async (w) => {
    await w.db.close();
    await expectRejects(w.q.clear(), "CLOSED");
  },
  consume: (w) => expectRejects(w.q.consume({ concurrency: 0 }).next(), INVALID),
};

/** The topic methods of the Promise API. */
const asyncTopicCases: Cases<AsyncWorld> = {
  append: (w) => expectRejects(w.t.append("v", { key: bad<string>(5) }), INVALID),
  appendMany: (w) => expectRejects(w.t.appendMany([{ value: bad<string>(null) }]), INVALID),
  read: (w) => expectRejects(w.t.read({ limit: 0 }), INVALID),
  latest: (w) => expectRejects(w.t.latest(bad<number>("3")), INVALID),
  subscribe: async (w) => {
    await expectRejects(w.t.subscribe({ signal: bad<AbortSignal>({}) }).next(), INVALID);
    await expectRejects(w.t.subscribe({ from: { time: -1 } }).next(), INVALID);
  },
  commit: (w) => expectRejects(w.t.commit(bad<string>(null), 1), INVALID),
  committed: (w) => expectRejects(w.t.committed(bad<string>(1)), INVALID),
  removeGroup: (w) => expectRejects(w.t.removeGroup(""), INVALID),
  applyRetention: async (w) => {
    await w.db.close();
    await expectRejects(w.t.applyRetention(), "CLOSED");
  },
  stats: async (w) => {
    await w.db.close();
    await expectRejects(w.t.stats(), "CLOSED");
  },
};

const asyncDatabaseCases: Cases<AsyncWorld> = {
  ...asyncStoreCases((w) => w.db),
  topic: (w) => expectRejects(w.db.topic("t", { retentionPassesGroups: bad<boolean>("yes") }), INVALID),
  topics: async (w) => {
    await w.db.close();
    await expectRejects(w.db.topics(), "CLOSED");
  },
  deleteTopic: (w) => expectRejects(w.db.deleteTopic(""), INVALID),
  queue: (w) => expectRejects(w.db.queue("q", { whenFull: bad<"reject">("block") }), INVALID),
  queues: async (w) => {
    await w.db.close();
    await expectRejects(w.db.queues(), "CLOSED");
  },
  deleteQueue: (w) => expectRejects(w.db.deleteQueue(""), INVALID),
  keyspace: async (w) => {
    await expectRejects(w.db.keyspace("x", bad<object>({ valueEncoding: null })), INVALID);
  },
  batch: async (w) => {
    await expectRejects(w.db.batch(bad<[]>([{ type: "put", key: "k", value: "v", keyspace: null }])), INVALID);
  },
  snapshot: async (w) => {
    await w.db.close();
    await expectRejects(w.db.snapshot(), "CLOSED");
  },
  transaction: async (w) => {
    await w.db.close();
    await expectRejects(w.db.transaction(), "CLOSED");
  },
  transact: async (w) => {
    await expectRejects(w.db.transact(bad<() => Promise<void>>("body")), INVALID);
  },
  flush: async (w) => {
    await w.db.close();
    await expectRejects(w.db.flush(), "CLOSED");
  },
  compact: async (w) => {
    await expectRejects(w.db.compact(bad<object>(null)), INVALID);
  },
  maintain: async (w) => {
    await expectRejects(w.db.maintain(0), INVALID);
  },
  checkpoint: async (w) => {
    await expectRejects(w.db.checkpoint(""), INVALID);
  },
  changes: async (w) => {
    await expectRejects(w.db.changes({ limit: 0 }).next(), INVALID);
  },
  sequence: async (w) => {
    await w.db.close();
    await expectRejects(w.db.sequence(), "CLOSED");
  },
  // Not opened readOnly.
  catchUp: async (w) => {
    await expectRejects(w.db.catchUp(), INVALID);
  },
  export: async (w) => {
    await w.db.close();
    await expectRejects(w.db.export(), "CLOSED");
  },
  ackChanges: async (w) => {
    await expectRejects(w.db.ackChanges("cursor", -1), INVALID);
  },
  changeCursor: async (w) => {
    await expectRejects(w.db.changeCursor("a\u0000b"), INVALID);
  },
  removeChangeCursor: async (w) => {
    await expectRejects(w.db.removeChangeCursor(bad<string>(7)), INVALID);
  },
  applyChanges: async (w) => {
    await expectRejects(w.db.applyChanges(bad<Uint8Array>(null)), INVALID);
  },
  stats: async (w) => {
    await w.db.close();
    await expectRejects(w.db.stats(), "CLOSED");
  },
  close: async (w) => {
    await w.db.close();
    await w.db.close(); // idempotent
    await expectRejects(w.db.get("k1"), "CLOSED");
  },
};

const asyncBatchCases: Cases<AsyncWorld> = {
  put: (w) => {
    expectCode(() => w.db.batch().put("k", "v", bad<KeyspaceRef<string, string>>(0)), INVALID);
  },
  delete: (w) => {
    expectCode(() => w.db.batch().delete("k", bad<KeyspaceRef<string, string>>(null)), INVALID);
  },
  deleteRange: (w) => {
    expectCode(() => w.db.batch().deleteRange(bad<{ gte: string; lt: string }>("k")), INVALID);
  },
  write: async (w) => {
    await expectRejects(w.db.batch().put("k", "v").write(bad<undefined>(null)), INVALID);
  },
  clear: async (w) => {
    const batch = w.db.batch().put("k2", "v");
    await w.db.close();
    batch.clear();
    expect(batch.length).toBe(0);
    await expectRejects(batch.write(), "CLOSED");
  },
};

const asyncTransactionCases: Cases<AsyncWorld> = {
  append: async (w) => {
    const tx = await w.db.transaction();
    expectCode(() => tx.append(w.t, "v", { headers: bad<Record<string, string>>([]) }), INVALID);
  },
  commitOffset: async (w) => {
    const tx = await w.db.transaction();
    expectCode(() => tx.commitOffset(bad<Topic<string>>({ name: "t" }), "g", 1), INVALID);
  },
  push: async (w) => {
    const tx = await w.db.transaction();
    expectCode(() => tx.push(w.q, bad<string>(null)), INVALID);
    expectCode(() => tx.push(w.q, "v", { delayMs: -1 }), INVALID);
  },
  ack: async (w) => {
    const tx = await w.db.transaction();
    expectCode(() => tx.ack(bad<Queue<string>>({ name: "q" }), { id: 1, delivery: 1 }), INVALID);
  },
  get: async (w) => {
    await expectRejects((await w.db.transaction()).get(bad<string>(null)), INVALID);
  },
  put: async (w) => {
    const tx = await w.db.transaction();
    expectCode(() => tx.put("k", "v", bad<KeyspaceRef<string, string>>(null)), INVALID);
  },
  delete: async (w) => {
    const tx = await w.db.transaction();
    expectCode(() => tx.delete(bad<string>(5)), INVALID);
  },
  commit: async (w) => {
    await expectRejects((await w.db.transaction()).commit(bad<{ sync: boolean }>({ sync: 0 })), INVALID);
  },
  rollback: async (w) => {
    const tx = await w.db.transaction();
    await tx.rollback();
    await tx.rollback(); // idempotent
    await expectRejects(tx.get("k1"), "CLOSED");
  },
};

const asyncIteratorCases: Cases<AsyncWorld> = {
  next: async (w) => {
    const it = w.db.iterator();
    await w.db.close();
    await expectRejects(it.next(), "CLOSED");
  },
  return: async (w) => {
    const it = w.db.iterator();
    expect(await it.return?.()).toEqual({ done: true, value: undefined });
    expect((await it.next()).done).toBe(true);
  },
  close: async (w) => {
    const it = w.db.iterator();
    await it.close();
    await it.close(); // idempotent
    expect(await it.all()).toEqual([]);
  },
  all: async (w) => {
    const it = w.db.iterator();
    await w.db.close();
    await expectRejects(it.all(), "CLOSED");
  },
  seek: async (w) => {
    const it = w.db.iterator();
    expectCode(() => it.seek(bad<string>(5)), "INVALID_ARGUMENT");
    expectCode(() => it.seek(bad<string>(null)), "INVALID_ARGUMENT");
    it.seek("k1");
    await w.db.close();
    await expectRejects(it.next(), "CLOSED");
  },
};

/** The sync objects whose methods the tables cover. */
function syncObjects(w: SyncWorld): Record<string, [object, Cases<SyncWorld>]> {
  return {
    SyncDatabase: [w.db, syncDatabaseCases],
    SyncKeyspace: [w.ks, syncStoreCases((x) => x.ks)],
    SyncBatch: [w.db.batch(), syncBatchCases],
    SyncTransaction: [w.db.transaction(), syncTransactionCases],
    Snapshot: [w.db.snapshot(), snapshotCases],
    SyncEntryIterator: [w.db.iterator(), syncIteratorCases],
    SyncQueue: [w.q, syncQueueCases],
    SyncTopic: [w.t, syncTopicCases],
  };
}

async function asyncObjects(w: AsyncWorld): Promise<Record<string, [object, Cases<AsyncWorld>]>> {
  return {
    Database: [w.db, asyncDatabaseCases],
    Keyspace: [w.ks, asyncStoreCases((x) => x.ks)],
    Batch: [w.db.batch(), asyncBatchCases],
    Transaction: [await w.db.transaction(), asyncTransactionCases],
    AsyncEntryIterator: [w.db.iterator(), asyncIteratorCases],
    Queue: [w.q, asyncQueueCases],
    Topic: [w.t, asyncTopicCases],
  };
}

describe("every public method has a bad-input case (synchronous API)", () => {
  it("the tables cover every method of every object", () => {
    const w = syncWorld();
    for (const [name, [object, cases]] of Object.entries(syncObjects(w))) {
      expect(Object.keys(cases).sort(), name).toEqual(methodNames(object));
    }
    w.db.close();
  });

  const tables: [string, Cases<SyncWorld>][] = [
    ["SyncDatabase", syncDatabaseCases],
    ["SyncKeyspace", syncStoreCases((x) => x.ks)],
    ["SyncBatch", syncBatchCases],
    ["SyncTransaction", syncTransactionCases],
    ["Snapshot", snapshotCases],
    ["SyncEntryIterator", syncIteratorCases],
    ["SyncQueue", syncQueueCases],
    ["SyncTopic", syncTopicCases],
  ];
  for (const [type, cases] of tables) {
    for (const [method, check] of Object.entries(cases)) {
      it(`${type}.${method}`, async () => {
        const w = syncWorld();
        try {
          await check(w);
        } finally {
          w.db.close();
        }
        // Nothing a rejected call did reached the data.
        const again = openSync(w.db.location);
        expect([...again.iterator()]).toEqual([["k1", "v1"]]);
        expect([...again.keyspace("ks").iterator()]).toEqual([["k1", "w1"]]);
        again.close();
      });
    }
  }
});

describe("every public method has a bad-input case (Promise API)", () => {
  it("the tables cover every method of every object", async () => {
    const w = await asyncWorld();
    for (const [name, [object, cases]] of Object.entries(await asyncObjects(w))) {
      expect(Object.keys(cases).sort(), name).toEqual(methodNames(object));
    }
    await w.db.close();
  });

  const tables: [string, Cases<AsyncWorld>][] = [
    ["Database", asyncDatabaseCases],
    ["Keyspace", asyncStoreCases((x) => x.ks)],
    ["Batch", asyncBatchCases],
    ["Transaction", asyncTransactionCases],
    ["AsyncEntryIterator", asyncIteratorCases],
    ["Queue", asyncQueueCases],
    ["Topic", asyncTopicCases],
  ];
  for (const [type, cases] of tables) {
    for (const [method, check] of Object.entries(cases)) {
      it(`${type}.${method}`, async () => {
        const w = await asyncWorld();
        try {
          await check(w);
        } finally {
          await w.db.close();
        }
        const again = openSync(w.db.location);
        expect([...again.iterator()]).toEqual([["k1", "v1"]]);
        again.close();
      });
    }
  }
});
