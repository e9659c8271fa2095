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
  type KeyspaceRef,
  type Snapshot,
  type SyncDatabase,
  type SyncKeyspace,
} from "shaledb";

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
  // silently (packages/js/src/store.ts reads `options?.sync === true`, iterator.ts
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

describe("deleteRange needs gte < lt", () => {
  it("gte == lt and gte > lt are INVALID_ARGUMENT in every form, and delete nothing", async () => {
    const { dir, db, ks, before } = seeded("range");
    for (const [gte, lt] of [
      ["k1", "k1"],
      ["k5", "k1"],
      ["z", "a"],
    ] as const) {
      expectCode(() => db.deleteRange({ gte, lt }), "INVALID_ARGUMENT");
      expectCode(() => ks.deleteRange({ gte, lt }), "INVALID_ARGUMENT");
      expectCode(() => db.batch().put("k1", "changed").deleteRange({ gte, lt }).write(), "INVALID_ARGUMENT");
      expectCode(() => db.batch().deleteRange({ gte, lt }, ks).write(), "INVALID_ARGUMENT");
    }
    const adb = await open(freshPath("range-async"));
    await adb.put("k1", "v");
    await expectRejects(adb.deleteRange({ gte: "k2", lt: "k1" }), "INVALID_ARGUMENT");
    expect(await adb.get("k1")).toBe("v");
    await adb.close();
    expectIntact(dir, db, ks, before);
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
    truncateSync(newest, statSync(newest).size - 3);
    const db = openSync(dir);
    for (let i = 0; i < 100; i++) {
      expect(db.get(`t${String(i).padStart(3, "0")}`)).toBe(`table value ${i} `.repeat(4));
    }
    for (let i = 0; i < 49; i++) {
      expect(db.get(`w${String(i).padStart(3, "0")}`)).toBe(`wal value ${i}`);
    }
    // Only the write in the torn record is gone.
    expect(db.get("w049")).toBeUndefined();
    // The database goes on: new writes survive a reopen.
    db.put("after", "torn tail", { sync: true });
    db.close();
    const again = openSync(dir);
    expect(again.get("after")).toBe("torn tail");
    expect(again.count()).toBe(100 + 49 + 1);
    again.close();
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
