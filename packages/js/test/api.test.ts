// The behaviour of every call of the public API, through the synchronous API (openSync) and the
// Promise API (open). Each test is named after the behaviour it holds the implementation to.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import {
  ShaleError,
  open,
  openSync,
  type Database,
  type JsonValue,
  type SyncDatabase,
  type SyncTransaction,
} from "shaledb";

import {
  asyncDisposeSymbol,
  bytes,
  disposeSymbol,
  expectCode,
  expectRejects,
  freshPath,
  tempDir,
  thrown,
  utf8,
} from "./helpers.js";

/** Calls `obj[symbol]()` (Symbol.dispose / asyncDispose, which Node 20 may lack). */
function callSymbol(obj: object, symbol: symbol | undefined): unknown {
  if (symbol === undefined) {
    throw new Error("this Node version lacks the symbol");
  }
  const fn: unknown = Reflect.get(obj, symbol);
  expect(typeof fn).toBe("function");
  return (fn as () => unknown).call(obj);
}

/** Runs `fn` as a promise: a synchronous throw becomes a rejection. */
function later<T>(fn: () => T | Promise<T>): Promise<T> {
  return Promise.resolve().then(fn);
}

function fillLetters(db: SyncDatabase<string, string>): void {
  for (const k of ["a", "b", "c", "d", "e", "f", "g"]) {
    db.put(k, k.toUpperCase());
  }
}

describe("encodings", () => {
  it("utf8 keys and values (the default) are strings in and out", async () => {
    const db = openSync(freshPath("enc"));
    db.put("ключ", "значение ✓");
    db.put("", "empty key");
    db.put("empty value", "");
    expect(db.get("ключ")).toBe("значение ✓");
    expect(db.get("")).toBe("empty key");
    expect(db.get("empty value")).toBe("");
    expect(db.get("missing")).toBeUndefined();
    for (const [k, v] of db.iterator()) {
      expect(typeof k).toBe("string");
      expect(typeof v).toBe("string");
    }
    db.close();
    const adb = await open(db.location);
    expect(await adb.get("ключ")).toBe("значение ✓");
    expect(await adb.keys().all()).toEqual(["", "empty value", "ключ"]);
    await adb.close();
  });

  it("binary keys and values are Uint8Arrays in and out, copied both ways", () => {
    const db = openSync(freshPath("enc-bin"), { keyEncoding: "binary", valueEncoding: "binary" });
    const key = bytes(0, 255, 1);
    const value = bytes(9, 8, 7);
    db.put(key, value);
    // The database copied them: changing the caller's arrays changes nothing stored.
    key[0] = 42;
    value[0] = 42;
    const got = db.get(bytes(0, 255, 1));
    expect(got).toBeInstanceOf(Uint8Array);
    expect([...(got as Uint8Array)]).toEqual([9, 8, 7]);
    expect(db.get(key)).toBeUndefined();
    // A value read is the caller's: changing it, or reading and writing more, changes nothing.
    (got as Uint8Array)[1] = 0;
    db.put(bytes(5), bytes(5, 5, 5, 5, 5, 5, 5, 5));
    db.get(bytes(5));
    expect([...(db.get(bytes(0, 255, 1)) as Uint8Array)]).toEqual([9, 8, 7]);
    const [[k, v]] = [...db.iterator({ limit: 1 })] as [[Uint8Array, Uint8Array]];
    expect(k).toBeInstanceOf(Uint8Array);
    expect(v).toBeInstanceOf(Uint8Array);
    expect([...k]).toEqual([0, 255, 1]);
    db.close();
  });

  // Regression: the Promise API sends a request after the call returns (in a later turn, or
  // from a browser page to its worker in a microtask), and sent the caller's own Uint8Array, so
  // a key or value changed right after the call was written changed.
  it("a binary key or value changed right after a Promise-API call is used as it was at the call", async () => {
    const db = await open(freshPath("enc-bin-async"), { keyEncoding: "binary", valueEncoding: "binary" });
    const key = bytes(0, 255, 1);
    const value = bytes(9, 8, 7);
    const written = db.put(key, value);
    key[0] = 42;
    value[0] = 42;
    await written;
    expect([...((await db.get(bytes(0, 255, 1))) as Uint8Array)]).toEqual([9, 8, 7]);
    expect(await db.get(bytes(42, 255, 1))).toBeUndefined();
    const asked = bytes(0, 255, 1);
    const found = db.get(asked);
    const upper = bytes(1);
    const listed = db.keys({ lt: upper }).all();
    asked[0] = 42;
    upper[0] = 0;
    expect([...((await found) as Uint8Array)]).toEqual([9, 8, 7]);
    expect((await listed).map((k) => [...k])).toEqual([[0, 255, 1]]);
    const gone = bytes(0, 255, 1);
    const deleted = db.delete(gone);
    gone[0] = 42;
    await deleted;
    expect(await db.get(bytes(0, 255, 1))).toBeUndefined();
    // A Node Buffer too (its slice() is a view, not a copy), also one cut from a larger one.
    const pool = Buffer.alloc(64, 7);
    const bufferKey = Buffer.from([1, 2, 3]);
    const bufferValue = pool.subarray(8, 12);
    const stored = db.put(bufferKey, bufferValue);
    bufferKey[0] = 42;
    pool.fill(0);
    await stored;
    expect([...((await db.get(bytes(1, 2, 3))) as Uint8Array)]).toEqual([7, 7, 7, 7]);
    await db.close();
  });

  it("binary entries stay intact across iterator batches (thousands of entries)", () => {
    const db = openSync(freshPath("enc-batches"), { keyEncoding: "binary", valueEncoding: "binary" });
    const n = 3000;
    const batch = db.batch();
    for (let i = 0; i < n; i++) {
      const k = new Uint8Array([i >> 8, i & 255]);
      const v = new Uint8Array(i % 50).fill(i & 255);
      batch.put(k, v);
    }
    batch.write();
    const seen = [...db.iterator()];
    expect(seen.length).toBe(n);
    // Check after reading everything: earlier entries must not have been overwritten.
    seen.forEach(([k, v], i) => {
      expect([...k]).toEqual([i >> 8, i & 255]);
      expect(v.length).toBe(i % 50);
      expect(v.every((b) => b === (i & 255))).toBe(true);
    });
    expect([...db.values({ reverse: true, limit: 2 })].map((v) => v.length)).toEqual([
      (n - 1) % 50,
      (n - 2) % 50,
    ]);
    db.close();
  });

  it("values larger than an iterator batch's byte budget are read whole, by get and by iterators", () => {
    const db = openSync(freshPath("enc-large"), { valueEncoding: "binary" });
    const mib = new Uint8Array(1 << 20).fill(7);
    const big = new Uint8Array(8 << 20).fill(3);
    for (let i = 0; i < 3; i++) db.put(`m${i}`, mib);
    db.put("big", big);
    db.put("small", bytes(1));
    expect([...db.iterator()].map(([k, v]) => [k, v.length])).toEqual([
      ["big", 8 << 20],
      ["m0", 1 << 20],
      ["m1", 1 << 20],
      ["m2", 1 << 20],
      ["small", 1],
    ]);
    expect(db.count()).toBe(5);
    db.flush();
    const got = db.get("big") as Uint8Array;
    expect(got.length).toBe(8 << 20);
    expect(got.every((b) => b === 3)).toBe(true);
    expect([...db.values({ reverse: true })].map((v) => v.length)).toEqual([1, 1 << 20, 1 << 20, 1 << 20, 8 << 20]);
    db.close();
  });

  it("json values round-trip any JSON value; null is a value, not absence", async () => {
    const db = openSync(freshPath("enc-json"), { valueEncoding: "json" });
    const values: JsonValue[] = [
      { nested: { list: [1, 2.5, "three", true, null] } },
      [],
      "text",
      -0.125,
      false,
      null,
    ];
    values.forEach((v, i) => db.put(`k${i}`, v));
    values.forEach((v, i) => expect(db.get(`k${i}`)).toEqual(v));
    expect(db.has("k5")).toBe(true);
    expect(db.get("k5")).toBeNull();
    expect(db.get("missing")).toBeUndefined();
    expect([...db.values()]).toEqual(values);
    db.close();
    const adb = await open(db.location, { valueEncoding: "json" });
    expect(await adb.get("k0")).toEqual(values[0]);
    expect(await adb.values().all()).toEqual(values);
    await adb.close();
  });

  // json text escapes a lone surrogate ("\ud800"), so such strings round-trip, unlike utf8 ones
  // (which are INVALID_ARGUMENT: bad-input.test.ts).
  it("json values holding lone surrogates round-trip exactly", () => {
    const db = openSync(freshPath("enc-json-surrogates"), { valueEncoding: "json" });
    const value = { lone: "\uD800", low: "\uDC00x", [`key\uDBFF`]: ["\uDFFF"] };
    db.put("a", value);
    expect(db.get("a")).toEqual(value);
    expect((db.get("a") as { lone: string }).lone).not.toBe("\uFFFD");
    db.close();
  });

  it("encodings are views of the same bytes: a utf8 key read back as binary is its UTF-8", () => {
    const dir = freshPath("enc-views");
    const db = openSync(dir);
    db.keyspace("ks").put("é😀", "ü");
    db.close();
    const bin = openSync(dir, { keyEncoding: "binary", valueEncoding: "binary" });
    const ks = bin.keyspace("ks", { keyEncoding: "binary", valueEncoding: "binary" });
    const [[k, v]] = [...ks.iterator()] as [[Uint8Array, Uint8Array]];
    expect([...k]).toEqual([...utf8("é😀")]);
    expect([...v]).toEqual([...utf8("ü")]);
    bin.close();
  });

  it("utf8 keys sort by their UTF-8 bytes, not by JavaScript's UTF-16 order", () => {
    const db = openSync(freshPath("enc-order"));
    // JS: "\u{1F600}" < "\uFFFD" (surrogate 0xD83D < 0xFFFD); bytes: EF BF BD < F0 9F 98 80.
    for (const k of ["\u{1F600}", "\uFFFD", "z", "\u00e9", "\uE000"]) {
      db.put(k, "v");
    }
    expect([...db.keys()]).toEqual(["z", "\u00e9", "\uE000", "\uFFFD", "\u{1F600}"]);
    expect([...db.keys({ gt: "\uFFFD" })]).toEqual(["\u{1F600}"]);
    expect([...db.keys({ reverse: true, limit: 2 })]).toEqual(["\u{1F600}", "\uFFFD"]);
    db.close();
  });

  it("get, has and delete find a utf8 key whether it is ASCII (written straight into memory) or not", () => {
    const db = openSync(freshPath("enc-ascii"));
    const keys = ["", "plain key 0042", "\u007f", "caf\u00e9", "\u{1F600}x", "a".repeat(3000), `${"b".repeat(2000)}\u00e9`];
    keys.forEach((k, i) => db.put(k, `v${i}`));
    keys.forEach((k, i) => {
      expect(db.get(k)).toBe(`v${i}`);
      expect(db.has(k)).toBe(true);
    });
    // A key that differs only past the ASCII prefix is another key.
    expect(db.get("caf")).toBeUndefined();
    expect(db.get("caf\u00e8")).toBeUndefined();
    db.delete("plain key 0042");
    db.delete("caf\u00e9");
    expect(db.get("plain key 0042")).toBeUndefined();
    expect(db.has("caf\u00e9")).toBe(false);
    expect(db.get("\u{1F600}x")).toBe("v4");
    db.close();
  });

  it.each(["caller", "own"] as const)(
    "text keys and values sent as text by the Promise API (engine thread %s) read back as written",
    async (engineThread) => {
      const path = freshPath(`enc-text-promise-${engineThread}`);
      const db = await open(path, { engineThread });
      const docs = await db.keyspace("docs", { valueEncoding: "json" });
      const texts = ["", "ascii", "caf\u00e9 \u{1F600}", "x".repeat(40), `${"\u4e2d".repeat(16 * 1024)}z`];
      for (const [i, t] of texts.entries()) {
        await db.put(t, `${i}:${t}`);
        await docs.put(`doc${i}`, { t });
      }
      await Promise.all(texts.map((t, i) => db.put(`merged${i}${t}`, t))); // one turn: merged
      for (const [i, t] of texts.entries()) {
        expect(await db.get(t)).toBe(`${i}:${t}`);
        expect(await db.has(t)).toBe(true);
        expect(await db.get(`merged${i}${t}`)).toBe(t);
        expect(await docs.get(`doc${i}`)).toEqual({ t });
      }
      await db.delete(texts[2]!);
      expect(await db.has(texts[2]!)).toBe(false);
      await db.close();
      const raw = openSync(path, { keyEncoding: "binary", valueEncoding: "binary" });
      expect([...(raw.get(new TextEncoder().encode(texts[3]!)) as Uint8Array)]).toEqual([
        ...new TextEncoder().encode(`3:${texts[3]!}`),
      ]);
      raw.close();
    },
  );

  it("text keys and values written straight into memory or a packed batch read back as written", () => {
    const path = freshPath("enc-text");
    const db = openSync(path);
    const docs = db.keyspace("docs", { valueEncoding: "json" });
    const texts = [
      "",
      "ascii",
      "caf\u00e9 \u{1F600}",
      "x".repeat(33),
      `${"\u00e9".repeat(40)}\u{1F600}`,
      "y".repeat(16 * 1024),
      `${"\u4e2d".repeat(16 * 1024)}z`, // past 16 Ki code units: encoded the ordinary way
    ];
    texts.forEach((t, i) => {
      db.put(t, `${i}:${t}`);
      docs.put(`doc${i}`, { t, n: i, nested: [t] });
    });
    db.batch(texts.map((t, i) => ({ type: "put", key: `b${i}${t}`, value: t })));
    db.batch(texts.map((t, i) => ({ type: "put", keyspace: docs, key: `bdoc${i}`, value: { t } })));
    const chained = db.batch();
    texts.forEach((t, i) => chained.put(`c${i}${t}`, t).put(`cdoc${i}`, { t }, docs));
    chained.write();
    db.close();
    const again = openSync(path);
    const docsAgain = again.keyspace("docs", { valueEncoding: "json" });
    texts.forEach((t, i) => {
      expect(again.get(t)).toBe(`${i}:${t}`);
      expect(again.get(`b${i}${t}`)).toBe(t);
      expect(docsAgain.get(`doc${i}`)).toEqual({ t, n: i, nested: [t] });
      expect(docsAgain.get(`bdoc${i}`)).toEqual({ t });
      expect(again.get(`c${i}${t}`)).toBe(t);
      expect(docsAgain.get(`cdoc${i}`)).toEqual({ t });
    });
    again.close();
    const raw = openSync(path, { keyEncoding: "binary", valueEncoding: "binary" });
    const bytes = raw.get(new TextEncoder().encode(texts[2]!)) as Uint8Array;
    expect([...bytes]).toEqual([...new TextEncoder().encode(`2:${texts[2]!}`)]);
    raw.close();
  });
});

describe("keyspaces", () => {
  it("keyspaces are isolated from each other and from the default keyspace", () => {
    const dir = freshPath("ks");
    const db = openSync(dir);
    const a = db.keyspace("a");
    const b = db.keyspace("b");
    const upper = db.keyspace("A");
    expect(a.name).toBe("a");
    for (const [store, v] of [
      [db, "default"],
      [a, "in a"],
      [b, "in b"],
      [upper, "in A"],
    ] as const) {
      store.put("k1", v);
      store.put("k2", v);
    }
    expect([db.get("k1"), a.get("k1"), b.get("k1"), upper.get("k1")]).toEqual([
      "default",
      "in a",
      "in b",
      "in A",
    ]);
    a.delete("k1");
    b.deleteRange({ gte: "k", lt: "l" });
    db.batch().delete("k2").write();
    expect(db.get("k1")).toBe("default");
    expect(db.get("k2")).toBeUndefined();
    expect(a.get("k1")).toBeUndefined();
    expect(a.get("k2")).toBe("in a");
    expect(b.count()).toBe(0);
    expect([...upper.iterator()]).toEqual([
      ["k1", "in A"],
      ["k2", "in A"],
    ]);
    expect([...db.keys()]).toEqual(["k1"]);
    // Opening a keyspace again gives the same data; it survives a reopen.
    expect(db.keyspace("a").get("k2")).toBe("in a");
    db.close();
    const again = openSync(dir);
    expect(again.keyspace("a").get("k2")).toBe("in a");
    expect(again.keyspace("A").count()).toBe(2);
    expect(again.keyspace("never-written").count()).toBe(0);
    again.close();
  });

  it("each keyspace has its own encodings", () => {
    const db = openSync(freshPath("ks-enc"));
    const bin = db.keyspace("bin", { keyEncoding: "binary", valueEncoding: "json" });
    bin.put(bytes(1, 2), { x: 1 });
    expect(bin.get(bytes(1, 2))).toEqual({ x: 1 });
    db.put("plain", "text");
    expect(db.get("plain")).toBe("text");
    db.close();
  });

  // Regression (fixed): the name "default" opens the database's default keyspace itself (the bindings look
  // keyspaces up by name and the default one is named "default"), so "keyspace('default')" is
  // not isolated from the default keyspace — and may even read it with other encodings.
  // Expected: isolated like any other name, or rejected (INVALID_ARGUMENT) as reserved.
  it("a keyspace named 'default' is isolated from the default keyspace (or refused)", () => {
    const db = openSync(freshPath("ks-default"));
    try {
      db.put("k", "from the default keyspace");
      let named;
      try {
        named = db.keyspace("default");
      } catch (error) {
        expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
        return;
      }
      expect(named.get("k")).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it("keyspaces of the Promise API are isolated too", async () => {
    const db = await open(freshPath("ks-async"));
    const ks = await db.keyspace("x");
    await db.put("k", "default");
    await ks.put("k", "x");
    expect(await db.get("k")).toBe("default");
    expect(await ks.get("k")).toBe("x");
    expect(await ks.keys().all()).toEqual(["k"]);
    expect(ks.name).toBe("x");
    await db.close();
  });
});

describe("iterators", () => {
  it("gt/gte/lt/lte combine: gte wins over gt and lte over lt when both are given (the Level rule)", () => {
    const db = openSync(freshPath("it-bounds"));
    fillLetters(db);
    const keys = (o: Parameters<typeof db.keys>[0]): string[] => [...db.keys(o)];
    expect(keys({ gt: "b" })).toEqual(["c", "d", "e", "f", "g"]);
    expect(keys({ gte: "b" })).toEqual(["b", "c", "d", "e", "f", "g"]);
    expect(keys({ lt: "c" })).toEqual(["a", "b"]);
    expect(keys({ lte: "c" })).toEqual(["a", "b", "c"]);
    expect(keys({ gt: "b", lt: "e" })).toEqual(["c", "d"]);
    expect(keys({ gte: "b", lte: "e" })).toEqual(["b", "c", "d", "e"]);
    expect(keys({ gt: "b", gte: "a" })).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
    expect(keys({ gt: "b", gte: "d" })).toEqual(["d", "e", "f", "g"]);
    expect(keys({ gte: "c", gt: "c" })).toEqual(["c", "d", "e", "f", "g"]);
    expect(keys({ lt: "f", lte: "c" })).toEqual(["a", "b", "c"]);
    expect(keys({ lt: "c", lte: "f" })).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(keys({ lte: "c", lt: "c" })).toEqual(["a", "b", "c"]);
    expect(keys({ gt: "e", lt: "b" })).toEqual([]);
    expect(keys({ gte: "c", lte: "c" })).toEqual(["c"]);
    expect(keys({ gt: "bb", lt: "dd" })).toEqual(["c", "d"]);
    expect(keys({ gt: "b", lt: "e", reverse: true })).toEqual(["d", "c"]);
    expect(keys({ lte: "e", reverse: true, limit: 2 })).toEqual(["e", "d"]);
    db.close();
  });

  it("prefix selects keys starting with its bytes, combined with bounds, reverse and limit", () => {
    const db = openSync(freshPath("it-prefix"));
    for (const k of ["ap", "apple", "apricot", "apt", "b", "a", "aq", "\u00ff", "\u00ffa"]) {
      db.put(k, k);
    }
    const keys = (o: Parameters<typeof db.keys>[0]): string[] => [...db.keys(o)];
    expect(keys({ prefix: "ap" })).toEqual(["ap", "apple", "apricot", "apt"]);
    expect(keys({ prefix: "ap", reverse: true })).toEqual(["apt", "apricot", "apple", "ap"]);
    expect(keys({ prefix: "ap", gt: "ap", lt: "apt" })).toEqual(["apple", "apricot"]);
    expect(keys({ prefix: "ap", limit: 2 })).toEqual(["ap", "apple"]);
    expect(keys({ prefix: "ap", gte: "b" })).toEqual([]);
    expect(keys({ prefix: "" })).toHaveLength(9);
    expect(keys({ prefix: "x" })).toEqual([]);
    // The prefix "ÿ" is the bytes C3 BF: keys with those first bytes.
    expect(keys({ prefix: "\u00ff" })).toEqual(["\u00ff", "\u00ffa"]);
    expect(db.count({ prefix: "apr" })).toBe(1);
    db.close();
  });

  it("prefix of binary keys works at the top of the byte range (0xff)", () => {
    const db = openSync(freshPath("it-prefix-ff"), { keyEncoding: "binary" });
    db.put(bytes(0xff), "1");
    db.put(bytes(0xff, 0xff), "2");
    db.put(bytes(0xff, 0xff, 0x00), "3");
    db.put(bytes(0xfe, 0xff), "4");
    expect([...db.values({ prefix: bytes(0xff) })]).toEqual(["1", "2", "3"]);
    expect([...db.values({ prefix: bytes(0xff, 0xff) })]).toEqual(["2", "3"]);
    expect([...db.values({ prefix: bytes(0xff, 0xff), reverse: true })]).toEqual(["3", "2"]);
    db.close();
  });

  it("limit: at most that many; 0 gives nothing; a negative limit means none", () => {
    const db = openSync(freshPath("it-limit"));
    fillLetters(db);
    expect([...db.keys({ limit: 3 })]).toEqual(["a", "b", "c"]);
    expect([...db.keys({ limit: 0 })]).toEqual([]);
    expect([...db.keys({ limit: -1 })]).toHaveLength(7);
    expect([...db.keys({ limit: 100 })]).toHaveLength(7);
    expect(db.count({ limit: 2 })).toBe(2);
    expect(db.count({ gte: "c" })).toBe(5);
    db.close();
  });

  it("keys() and values() yield only keys or only values; iterator() yields [key, value]", () => {
    const db = openSync(freshPath("it-modes"));
    fillLetters(db);
    expect([...db.keys({ limit: 2 })]).toEqual(["a", "b"]);
    expect([...db.values({ limit: 2 })]).toEqual(["A", "B"]);
    expect([...db.iterator({ limit: 2 })]).toEqual([
      ["a", "A"],
      ["b", "B"],
    ]);
    db.close();
  });

  it("break out of for...of closes the iterator", () => {
    const db = openSync(freshPath("it-break"));
    fillLetters(db);
    const it = db.iterator();
    for (const [k] of it) {
      if (k === "b") break;
    }
    expect(it.next()).toEqual({ done: true, value: undefined });
    // close() after that is harmless (idempotent).
    it.close();
    it.close();
    db.close();
  });

  it("an iterator sees the snapshot taken when it was created", () => {
    const db = openSync(freshPath("it-snapshot"), { autoMaintenance: false });
    fillLetters(db);
    const it = db.iterator();
    const first = it.next();
    db.put("aa", "new");
    db.delete("c");
    db.deleteRange({ gte: "e", lt: "g" });
    db.put("z", "new");
    db.flush();
    db.compact();
    expect(first.value).toEqual(["a", "A"]);
    expect([...it].map(([k]) => k)).toEqual(["b", "c", "d", "e", "f", "g"]);
    // A new iterator sees the new state.
    expect([...db.keys()]).toEqual(["a", "aa", "b", "d", "g", "z"]);
    db.close();
  });

  it("an iterator opened before many writes still reads its own state after compactions", () => {
    const db = openSync(freshPath("it-pinned"), { autoMaintenance: false, memtableSize: 64 * 1024 });
    for (let i = 0; i < 2000; i++) db.put(`k${String(i).padStart(5, "0")}`, "old".repeat(20));
    db.flush();
    const it = db.iterator();
    it.next();
    for (let i = 0; i < 2000; i++) db.put(`k${String(i).padStart(5, "0")}`, "new");
    db.flush();
    db.compact();
    let n = 1;
    let stale = 0;
    for (const [, v] of it) {
      n++;
      if (v !== "old".repeat(20)) stale++;
    }
    expect(n).toBe(2000);
    expect(stale).toBe(0);
    db.close();
  });

  it("the Promise API iterates with for await, and break closes it", async () => {
    const db = await open(freshPath("it-async"));
    for (const k of ["a", "b", "c", "d"]) await db.put(k, k);
    const seen: string[] = [];
    for await (const [k, v] of db.iterator({ gte: "b" })) {
      expect(v).toBe(k);
      seen.push(k);
    }
    expect(seen).toEqual(["b", "c", "d"]);
    const it = db.keys();
    for await (const k of it) {
      if (k === "b") break;
    }
    expect(await it.next()).toEqual({ done: true, value: undefined });
    await it.close();
    expect(await db.values({ reverse: true }).all()).toEqual(["d", "c", "b", "a"]);
    expect(await db.count({ lt: "c" })).toBe(2);
    await db.close();
  });

  it(".all() returns the remaining entries up to the limit, then the iterator is done", async () => {
    const db = await open(freshPath("it-all"));
    for (const k of ["a", "b", "c", "d", "e"]) await db.put(k, k.toUpperCase());
    const it = db.iterator({ limit: 4 });
    expect(await it.next()).toEqual({ done: false, value: ["a", "A"] });
    expect(await it.all()).toEqual([
      ["b", "B"],
      ["c", "C"],
      ["d", "D"],
    ]);
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(await it.all()).toEqual([]);
    expect(await db.keys({ limit: 0 }).all()).toEqual([]);
    await db.close();
  });

  it("iterators and count of a snapshot option read that snapshot", () => {
    const db = openSync(freshPath("it-opt-snapshot"));
    fillLetters(db);
    const snapshot = db.snapshot();
    db.delete("a");
    db.put("h", "H");
    expect([...db.keys({ snapshot, limit: 1 })]).toEqual(["a"]);
    expect(db.count({ snapshot })).toBe(7);
    expect(db.count()).toBe(7);
    expect([...db.keys({ snapshot, gte: "g" })]).toEqual(["g"]);
    snapshot.close();
    db.close();
  });
});

describe("Symbol.dispose and Symbol.asyncDispose", () => {
  it.skipIf(disposeSymbol === undefined)(
    "[Symbol.dispose] closes databases, iterators and snapshots, and rolls transactions back",
    () => {
      const dir = freshPath("dispose");
      const db = openSync(dir);
      fillLetters(db);
      const it = db.iterator();
      it.next();
      callSymbol(it, disposeSymbol);
      expect(it.next().done).toBe(true);
      const snapshot = db.snapshot();
      callSymbol(snapshot, disposeSymbol);
      expect(snapshot.closed).toBe(true);
      const tx = db.transaction();
      tx.put("tx", "never");
      callSymbol(tx, disposeSymbol);
      expect(db.get("tx")).toBeUndefined();
      expectCode(() => tx.put("x", "y"), "CLOSED");
      callSymbol(db, disposeSymbol);
      expect(db.closed).toBe(true);
      // The lock is released: it opens again.
      openSync(dir).close();
    },
  );

  it.skipIf(asyncDisposeSymbol === undefined)(
    "[Symbol.asyncDispose] closes Promise-API databases and iterators, and rolls transactions back",
    async () => {
      const db = await open(freshPath("async-dispose"));
      await db.put("a", "1");
      const it = db.keys();
      await callSymbol(it, asyncDisposeSymbol);
      expect((await it.next()).done).toBe(true);
      const tx = await db.transaction();
      tx.put("b", "2");
      await callSymbol(tx, asyncDisposeSymbol);
      expect(await db.get("b")).toBeUndefined();
      await callSymbol(db, asyncDisposeSymbol);
      expect(db.closed).toBe(true);
    },
  );
});

describe("snapshots", () => {
  it("reads with { snapshot } see the state when it was taken, through flush and compaction", () => {
    const db = openSync(freshPath("snap"), { autoMaintenance: false });
    const ks = db.keyspace("ks");
    fillLetters(db);
    ks.put("x", "1");
    const snapshot = db.snapshot();
    expect(snapshot.closed).toBe(false);
    db.put("a", "changed");
    db.delete("b");
    db.deleteRange({ gte: "c", lt: "e" });
    db.batch().put("new", "N").put("x", "2", ks).write();
    db.flush();
    db.compact();
    expect(db.get("a", { snapshot })).toBe("A");
    expect(db.has("b", { snapshot })).toBe(true);
    expect(db.getMany(["c", "d", "new"], { snapshot })).toEqual(["C", "D", undefined]);
    expect(ks.get("x", { snapshot })).toBe("1");
    expect([...db.keys({ snapshot })]).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
    expect(db.count({ snapshot })).toBe(7);
    // The latest state is the new one.
    expect(db.get("a")).toBe("changed");
    expect(db.has("b")).toBe(false);
    expect(ks.get("x")).toBe("2");
    snapshot.close();
    db.close();
  });

  it("a closed snapshot is CLOSED for every read; close() is idempotent", async () => {
    const db = openSync(freshPath("snap-closed"));
    db.put("a", "1");
    const snapshot = db.snapshot();
    snapshot.close();
    snapshot.close();
    expect(snapshot.closed).toBe(true);
    expectCode(() => db.get("a", { snapshot }), "CLOSED");
    expectCode(() => db.has("a", { snapshot }), "CLOSED");
    expectCode(() => db.getMany(["a"], { snapshot }), "CLOSED");
    expectCode(() => db.iterator({ snapshot }), "CLOSED");
    expectCode(() => db.count({ snapshot }), "CLOSED");
    db.close();

    const adb = await open(freshPath("snap-closed-async"));
    await adb.put("a", "1");
    const s = await adb.snapshot();
    await adb.put("a", "2");
    expect(await adb.get("a", { snapshot: s })).toBe("1");
    s.close();
    await expectRejects(adb.get("a", { snapshot: s }), "CLOSED");
    await expectRejects(later(() => adb.keys({ snapshot: s }).all()), "CLOSED");
    await adb.close();
  });
});

describe("atomic batches", () => {
  it("a chained batch applies puts, deletes and range deletes in order, atomically, and empties", () => {
    const db = openSync(freshPath("batch"));
    fillLetters(db);
    const b = db.batch();
    expect(b.length).toBe(0);
    b.put("a", "1").delete("b").deleteRange({ gte: "c", lt: "e" }).put("c", "after the range");
    // Later operations win over earlier ones on the same key.
    b.put("f", "first").put("f", "second").put("g", "put").delete("g");
    expect(b.length).toBe(8);
    expect(db.get("a")).toBe("A");
    b.write();
    expect(b.length).toBe(0);
    expect([...db.iterator()]).toEqual([
      ["a", "1"],
      ["c", "after the range"],
      ["e", "E"],
      ["f", "second"],
    ]);
    // clear() drops queued operations; an empty batch writes nothing; a batch is reusable.
    b.put("x", "1").clear();
    expect(b.length).toBe(0);
    b.write();
    b.put("y", "again").write();
    expect(db.get("x")).toBeUndefined();
    expect(db.get("y")).toBe("again");
    db.close();
  });

  // Regression: the Promise API's Batch type derived its chained methods from SyncBatch, so
  // `db.batch().put(k, v).write()` was typed `void` (the type check of this file caught it).
  it("a chained batch of the Promise API returns a promise from write, typed as one", async () => {
    const db = await open(freshPath("batch-promise"));
    const written: Promise<void> = db.batch().put("a", "1").delete("b").put("c", "3").write();
    expect(written).toBeInstanceOf(Promise);
    await written;
    expect(await db.get("c")).toBe("3");
    await db.close();
  });

  it("a range delete after a put in the same batch deletes it", () => {
    const db = openSync(freshPath("batch-order"));
    db.batch().put("m", "1").deleteRange({ gte: "a", lt: "z" }).write();
    expect(db.get("m")).toBeUndefined();
    db.close();
  });

  it("an array batch applies puts and deletes of the default keyspace", async () => {
    const db = openSync(freshPath("batch-array"));
    db.put("gone", "x");
    db.batch([
      { type: "put", key: "a", value: "1" },
      { type: "delete", key: "gone" },
      { type: "put", key: "b", value: "2" },
    ]);
    expect([...db.iterator()]).toEqual([
      ["a", "1"],
      ["b", "2"],
    ]);
    db.batch([]);
    db.close();
    const adb = await open(db.location);
    await adb.batch([{ type: "delete", key: "a" }], { sync: true });
    await adb.batch().put("c", "3").delete("b").write();
    expect(await adb.iterator().all()).toEqual([["c", "3"]]);
    await adb.close();
  });

  // Regression: the `keyspace` field of an array batch's operations was ignored, so
  // `db.batch([{ type: "put", key, value, keyspace: ks }])` wrote into the default keyspace.
  it("an array batch operation's keyspace field writes into that keyspace, with its encodings, atomically", async () => {
    const db = openSync(freshPath("batch-array-ks"));
    const ks = db.keyspace("ks", { valueEncoding: "json" });
    const blobs = db.keyspace("blobs", { keyEncoding: "binary", valueEncoding: "binary" });
    db.put("gone", "x");
    ks.put("gone", 1);
    db.batch([
      { type: "put", key: "a", value: "default" },
      { type: "put", key: "a", value: { in: "ks" }, keyspace: ks },
      { type: "put", key: bytes(1), value: bytes(2), keyspace: blobs },
      { type: "delete", key: "gone", keyspace: ks },
      { type: "put", key: "b", value: "default", keyspace: undefined },
    ]);
    expect([...db.iterator()]).toEqual([
      ["a", "default"],
      ["b", "default"],
      ["gone", "x"],
    ]);
    expect([...ks.iterator()]).toEqual([["a", { in: "ks" }]]);
    expect([...blobs.iterator()].map(([k, v]) => [[...k], [...v]])).toEqual([[[1], [2]]]);
    db.close();
    // The Promise API, with keyspaces of the Promise API.
    const adb = await open(db.location);
    const aks = await adb.keyspace("ks", { valueEncoding: "json" });
    await adb.batch([{ type: "put", key: "c", value: [3], keyspace: aks }, { type: "delete", key: "a" }], { sync: true });
    expect(await aks.get("c")).toEqual([3]);
    expect(await adb.get("c")).toBeUndefined();
    expect(await adb.get("a")).toBeUndefined();
    await adb.close();
  });

  it("a batch across keyspaces is atomic: all of it, or (on a bad operation) nothing", async () => {
    const db = openSync(freshPath("batch-ks"));
    const ks = db.keyspace("ks", { valueEncoding: "json" });
    db.batch().put("a", "default").put("a", { in: "ks" }, ks).deleteRange({ gte: "x", lt: "y" }, ks).write();
    expect(db.get("a")).toBe("default");
    expect(ks.get("a")).toEqual({ in: "ks" });
    expectCode(
      // A key over the size limit fails the write (an inverted deleteRange is a no-op now).
      () => db.batch().put("b", "default").put("b", 1, ks).put("k".repeat(70 * 1024), 2, ks).write(),
      "INVALID_ARGUMENT",
    );
    expect(db.get("b")).toBeUndefined();
    expect(ks.get("b")).toBeUndefined();
    db.close();
    const adb = await open(db.location);
    const aks = await adb.keyspace("ks", { valueEncoding: "json" });
    await adb.batch().put("c", "default").put("c", [1], aks).write();
    expect(await aks.get("c")).toEqual([1]);
    expect(await adb.get("c")).toBe("default");
    await adb.close();
  });
});

describe("transactions", () => {
  it("reads see the transaction's own writes; others see nothing until commit", () => {
    const db = openSync(freshPath("tx"));
    db.put("a", "1");
    db.put("b", "2");
    const tx = db.transaction();
    expect(tx.get("a")).toBe("1");
    tx.put("a", "10");
    tx.delete("b");
    tx.put("c", "30");
    expect(tx.get("a")).toBe("10");
    expect(tx.get("b")).toBeUndefined();
    expect(tx.get("c")).toBe("30");
    expect([db.get("a"), db.get("b"), db.get("c")]).toEqual(["1", "2", undefined]);
    tx.commit();
    expect([db.get("a"), db.get("b"), db.get("c")]).toEqual(["10", undefined, "30"]);
    expectCode(() => tx.get("a"), "CLOSED");
    db.close();
  });

  it("a transaction reads the snapshot of its start, and rollback discards its writes", () => {
    const db = openSync(freshPath("tx-snapshot"));
    const tx = db.transaction();
    db.put("later", "x");
    expect(tx.get("later")).toBeUndefined();
    tx.put("mine", "1");
    tx.rollback();
    tx.rollback();
    expect(db.get("mine")).toBeUndefined();
    expectCode(() => tx.put("k", "v"), "CLOSED");
    expectCode(() => tx.commit(), "CLOSED");
    db.close();
  });

  it("commit is CONFLICT, writing nothing, when a key it read was changed after its start", () => {
    const db = openSync(freshPath("tx-conflict"));
    const ks = db.keyspace("ks");
    db.put("balance", "100");
    const changes: [string, () => void, (tx: SyncTransaction<string, string>) => void][] = [
      ["a put", () => db.put("balance", "150"), (tx) => tx.get("balance")],
      ["a delete", () => db.delete("balance"), (tx) => tx.get("balance")],
      ["a range delete", () => db.deleteRange({ gte: "a", lt: "c" }), (tx) => tx.get("balance")],
      ["a batch", () => db.batch([{ type: "put", key: "balance", value: "1" }]), (tx) => tx.get("balance")],
      ["a put of a key read as absent", () => db.put("absent", "now"), (tx) => tx.get("absent")],
      ["a put in a keyspace", () => ks.put("k", "changed"), (tx) => tx.get("k", ks)],
      [
        "another transaction's commit",
        () => {
          const other = db.transaction();
          other.put("balance", "from the other");
          other.commit();
        },
        (tx) => tx.get("balance"),
      ],
    ];
    for (const [name, change, read] of changes) {
      db.put("balance", "100");
      ks.put("k", "v");
      db.delete("absent");
      const tx = db.transaction();
      read(tx);
      tx.put("written", name);
      tx.put("k", name, ks);
      change();
      const error = expectCode(() => tx.commit(), "CONFLICT");
      expect(error.message, name).toBeTruthy();
      expect(db.get("written"), name).toBeUndefined();
      expect(ks.get("k") === name, name).toBe(false);
    }
    db.close();
  });

  it("writes a transaction did not read do not conflict (blind writes), and a keyspace write is atomic with the rest", () => {
    const db = openSync(freshPath("tx-blind"));
    const ks = db.keyspace("ks");
    const tx = db.transaction();
    tx.put("k", "from tx");
    tx.put("k", "ks from tx", ks);
    expect(tx.get("k", ks)).toBe("ks from tx");
    db.put("k", "meanwhile");
    tx.commit({ sync: true });
    expect(db.get("k")).toBe("from tx");
    expect(ks.get("k")).toBe("ks from tx");
    db.close();
  });

  it("transact retries the body on CONFLICT and returns its result", () => {
    const db = openSync(freshPath("transact"));
    db.put("counter", "0");
    let attempts = 0;
    const result = db.transact((tx) => {
      attempts++;
      const n = Number(tx.get("counter"));
      if (attempts === 1) {
        // Someone else increments in between: this attempt must conflict.
        db.put("counter", String(n + 100));
      }
      tx.put("counter", String(n + 1));
      return `attempt ${attempts}`;
    });
    expect(attempts).toBe(2);
    expect(result).toBe("attempt 2");
    expect(db.get("counter")).toBe("101");

    // retries: 0 gives up at the first CONFLICT.
    let calls = 0;
    expectCode(
      () =>
        db.transact(
          (tx) => {
            calls++;
            tx.get("counter");
            db.put("counter", "bump");
            tx.put("counter", "never");
          },
          { retries: 0 },
        ),
      "CONFLICT",
    );
    expect(calls).toBe(1);
    expect(db.get("counter")).toBe("bump");

    // Other errors are not retried, and nothing is written.
    calls = 0;
    const error = thrown(() =>
      db.transact((tx) => {
        calls++;
        tx.put("partial", "x");
        throw new Error("body failed");
      }),
    );
    expect((error as Error).message).toBe("body failed");
    expect(calls).toBe(1);
    expect(db.get("partial")).toBeUndefined();
    db.close();
  });

  it("transactions of the Promise API: read-your-writes, CONFLICT, transact retries", async () => {
    const db = await open(freshPath("tx-async"));
    await db.put("n", "1");
    const tx = await db.transaction();
    tx.put("n", "2");
    expect(await tx.get("n")).toBe("2");
    await tx.commit();
    expect(await db.get("n")).toBe("2");

    const t2 = await db.transaction();
    await t2.get("n");
    await db.put("n", "3");
    t2.put("n", "never");
    await expectRejects(t2.commit(), "CONFLICT");
    expect(await db.get("n")).toBe("3");

    let attempts = 0;
    const out = await db.transact(async (t) => {
      attempts++;
      const n = Number(await t.get("n"));
      if (attempts < 3) await db.put("n", String(n * 10));
      t.put("n", String(n + 1));
      return n + 1;
    });
    expect(attempts).toBe(3);
    expect(out).toBe(301);
    expect(await db.get("n")).toBe("301");
    await db.close();
  });
});

describe("deleteRange", () => {
  it("deletes [gte, lt) with one tombstone: lt itself and keys outside stay, in memtable and tables", () => {
    const dir = freshPath("range");
    const db = openSync(dir, { autoMaintenance: false });
    for (let i = 0; i < 50; i++) db.put(`k${String(i).padStart(2, "0")}`, "table");
    db.flush();
    for (let i = 0; i < 50; i += 2) db.put(`k${String(i).padStart(2, "0")}`, "memtable");
    const entriesBefore = db.stats().entries;
    db.deleteRange({ gte: "k10", lt: "k40" });
    // One tombstone, not a delete per key.
    expect(db.stats().entries - entriesBefore).toBeLessThanOrEqual(1);
    const expected = Array.from({ length: 50 }, (_, i) => `k${String(i).padStart(2, "0")}`).filter(
      (k) => k < "k10" || k >= "k40",
    );
    expect([...db.keys()]).toEqual(expected);
    expect(db.get("k10")).toBeUndefined();
    expect(db.get("k39")).toBeUndefined();
    expect(db.get("k40")).toBe("memtable");
    expect(db.get("k09")).toBe("table");
    // Later writes into the range are visible.
    db.put("k20", "after");
    expect(db.get("k20")).toBe("after");
    db.flush();
    db.compact();
    expect([...db.keys({ gte: "k10", lt: "k40" })]).toEqual(["k20"]);
    db.close();
    const again = openSync(dir);
    expect(again.count()).toBe(expected.length + 1);
    expect(again.get("k25")).toBeUndefined();
    again.close();
  });

  it("deleteRange of the Promise API and of a keyspace touches only its keyspace", async () => {
    const db = await open(freshPath("range-async"));
    const ks = await db.keyspace("ks");
    for (const k of ["a", "b", "c"]) {
      await db.put(k, k);
      await ks.put(k, k);
    }
    await ks.deleteRange({ gte: "a", lt: "c" }, { sync: true });
    expect(await ks.keys().all()).toEqual(["c"]);
    expect(await db.keys().all()).toEqual(["a", "b", "c"]);
    await db.close();
  });
});

describe("flush, compact, checkpoint, stats", () => {
  it("flush writes the memtable to an L0 table; compact moves tables below L0; data stays", async () => {
    const db = openSync(freshPath("flush"), { autoMaintenance: false });
    for (let i = 0; i < 500; i++) db.put(`k${i}`, `v${i}`);
    const before = db.stats();
    expect(before.memtableBytes).toBeGreaterThan(0);
    expect(before.levels[0]?.files).toBe(0);
    db.flush();
    const flushed = db.stats();
    expect(flushed.levels[0]?.files).toBe(1);
    expect(flushed.memtableBytes).toBeLessThan(before.memtableBytes);
    db.flush(); // nothing new: no empty table
    expect(db.stats().levels[0]?.files).toBe(1);
    for (let i = 0; i < 500; i++) db.put(`k${i}`, `w${i}`);
    db.flush();
    expect(db.stats().levels[0]?.files).toBe(2);
    db.compact();
    const compacted = db.stats();
    expect(compacted.levels[0]?.files).toBe(0);
    expect(compacted.levels.slice(1).some((l) => l.files > 0)).toBe(true);
    expect(db.get("k7")).toBe("w7");
    expect(db.count()).toBe(500);
    // A compaction of a key range, and through the Promise API.
    db.close();
    const adb = await open(db.location, { autoMaintenance: false });
    await adb.put("k1", "x");
    await adb.flush();
    await adb.compact({ start: "k0", end: "k2" });
    expect(await adb.get("k1")).toBe("x");
    await adb.close();
  });

  it("a checkpoint opens as its own database with the same contents, keyspaces included", async () => {
    const base = tempDir("checkpoint");
    const db = openSync(join(base, "db"), { autoMaintenance: false });
    const ks = db.keyspace("ks");
    for (let i = 0; i < 100; i++) db.put(`k${i}`, `v${i}`);
    db.flush();
    db.put("unflushed", "in the memtable");
    ks.put("ks-key", "ks-value");
    db.deleteRange({ gte: "k5", lt: "k6" });
    const copy = join(base, "copy");
    expect(existsSync(copy)).toBe(false);
    db.checkpoint(copy);
    const cp = openSync(copy);
    expect([...cp.iterator()]).toEqual([...db.iterator()]);
    expect([...cp.keyspace("ks").iterator()]).toEqual([["ks-key", "ks-value"]]);
    // Independent: writes to one do not show in the other.
    cp.put("only-in-copy", "1");
    db.put("only-in-original", "1");
    expect(db.get("only-in-copy")).toBeUndefined();
    expect(cp.get("only-in-original")).toBeUndefined();
    cp.close();
    db.close();

    const adb = await open(join(base, "db"));
    await adb.checkpoint(join(base, "copy2"));
    await adb.close();
    const cp2 = openSync(join(base, "copy2"));
    expect(cp2.get("only-in-original")).toBe("1");
    expect(cp2.get("unflushed")).toBe("in the memtable");
    cp2.close();
  });

  // The rule: a directory that does not exist or is empty (created if missing); one holding any
  // file is ALREADY_EXISTS (bad-input.test.ts). The native core follows the same rule.
  it("a checkpoint into an existing empty directory writes the copy there", async () => {
    const base = tempDir("checkpoint-empty");
    const db = openSync(join(base, "db"));
    db.put("a", "1");
    const empty = join(base, "empty");
    mkdirSync(empty);
    db.checkpoint(empty);
    db.put("b", "after");
    db.close();
    const cp = openSync(empty);
    expect([...cp.iterator()]).toEqual([["a", "1"]]);
    cp.close();
    const adb = await open(join(base, "db"));
    const emptyToo = join(base, "empty-too");
    mkdirSync(emptyToo);
    await adb.checkpoint(emptyToo);
    await adb.close();
    const cp2 = openSync(emptyToo);
    expect(cp2.get("b")).toBe("after");
    cp2.close();
  });

  it("stats fields are sane", async () => {
    const db = openSync(freshPath("stats"), { autoMaintenance: false, blockCacheSize: 1 << 20 });
    const empty = db.stats();
    expect(empty.entries).toBe(0);
    expect(empty.userBytesWritten).toBe(0);
    expect(empty.tableBytes).toBe(0);
    expect(empty.levels.length).toBeGreaterThan(1);
    let written = 0;
    for (let i = 0; i < 300; i++) {
      const k = `key${i}`;
      const v = "x".repeat(i % 40);
      db.put(k, v);
      written += k.length + v.length;
    }
    const s = db.stats();
    expect(s.entries).toBe(300);
    expect(s.userBytesWritten).toBeGreaterThanOrEqual(written);
    expect(s.memtableBytes).toBeGreaterThan(0);
    expect(Number.isFinite(s.writeAmplification)).toBe(true);
    expect(s.writeAmplification).toBeGreaterThanOrEqual(1);
    db.flush();
    for (let i = 0; i < 300; i++) db.get(`key${i}`);
    const t = db.stats();
    expect(t.tableBytes).toBeGreaterThan(0);
    expect(t.tableBytes).toBe(t.levels.reduce((sum, l) => sum + l.bytes, 0));
    for (const l of t.levels) {
      expect(Number.isInteger(l.files) && l.files >= 0).toBe(true);
      expect(l.bytes >= 0).toBe(true);
    }
    expect(t.cacheBytes).toBeGreaterThan(0);
    expect(t.cacheBytes).toBeLessThanOrEqual(1 << 20);
    expect(t.writeAmplification).toBeGreaterThan(1);
    db.delete("key1");
    expect(db.stats().entries).toBe(301); // a tombstone counts
    db.close();
    expect(t.directorySync).toBe("ok"); // this file system syncs directories
    const adb = await open(db.location);
    expect((await adb.stats()).levels.length).toBe(t.levels.length);
    expect((await adb.stats()).directorySync).toBe("ok");
    await adb.close();
  });

  // FINDING: userBytesWritten counts the encoded batch (a 12-byte header and per-operation
  // tags and lengths), not "bytes of keys and values" as the core documents (Stats in
  // crates/core/src/db/mod.rs): a put of "a" = "b" counts 18 bytes, so writeAmplification
  // is understated for small writes (the WAL counter adds the same figure: WAL-only writes
  // always show exactly 1.0).
  it.fails("userBytesWritten counts the bytes of keys and values", () => {
    const db = openSync(freshPath("stats-user"));
    try {
      db.put("a", "b");
      expect(db.stats().userBytesWritten).toBe(2);
    } finally {
      db.close();
    }
  });
});

describe("sync writes", () => {
  it("every write accepts { sync: true } and is there after a reopen", async () => {
    const dir = freshPath("sync");
    const db = openSync(dir);
    const ks = db.keyspace("ks");
    db.put("a", "1", { sync: true });
    db.put("gone", "x", { sync: true });
    db.delete("gone", { sync: true });
    ks.put("r1", "x", { sync: true });
    ks.deleteRange({ gte: "r", lt: "s" }, { sync: true });
    db.batch().put("b", "2").write({ sync: true });
    db.batch([{ type: "put", key: "c", value: "3" }], { sync: true });
    const tx = db.transaction();
    tx.put("d", "4");
    tx.commit({ sync: true });
    db.transact((t) => t.put("e", "5"), { sync: true });
    db.close();
    const adb = await open(dir);
    await adb.put("f", "6", { sync: true });
    await adb.close();
    const again = openSync(dir);
    expect([...again.iterator()]).toEqual([
      ["a", "1"],
      ["b", "2"],
      ["c", "3"],
      ["d", "4"],
      ["e", "5"],
      ["f", "6"],
    ]);
    expect(again.keyspace("ks").count()).toBe(0);
    again.close();
  });
});

describe("getMany", () => {
  it("returns values in the order of the keys, undefined for missing ones, from one snapshot", async () => {
    const db = openSync(freshPath("getmany"));
    const ks = db.keyspace("ks");
    db.put("a", "1");
    db.put("b", "2");
    ks.put("a", "ks");
    expect(db.getMany(["b", "missing", "a", "b"])).toEqual(["2", undefined, "1", "2"]);
    expect(db.getMany([])).toEqual([]);
    expect(ks.getMany(["a", "b"])).toEqual(["ks", undefined]);
    const snapshot = db.snapshot();
    db.put("a", "changed");
    expect(db.getMany(["a"], { snapshot })).toEqual(["1"]);
    expect(db.getMany(["a"])).toEqual(["changed"]);
    snapshot.close();
    db.close();
    const adb = await open(db.location);
    expect(await adb.getMany(["a", "zz"])).toEqual(["changed", undefined]);
    await adb.close();
  });
});

describe("close", () => {
  it("close is idempotent, and `closed` tells", async () => {
    const db = openSync(freshPath("close"));
    expect(db.closed).toBe(false);
    db.close();
    expect(db.closed).toBe(true);
    db.close();
    const adb = await open(freshPath("close-async"));
    expect(adb.closed).toBe(false);
    await adb.close();
    await adb.close();
    expect(adb.closed).toBe(true);
  });

  it("closing releases the lock: the database opens again, through either API", async () => {
    const dir = freshPath("close-lock");
    const db = openSync(dir);
    db.put("a", "1");
    db.close();
    const adb = await open(dir);
    expect(await adb.get("a")).toBe("1");
    await adb.close();
    const again = openSync(dir);
    again.close();
  });

  it("closing the database closes its open iterators, snapshots and transactions", () => {
    const db = openSync(freshPath("close-children"));
    fillLetters(db);
    const it = db.iterator();
    const snapshot = db.snapshot();
    const tx = db.transaction();
    tx.put("x", "never");
    db.close();
    expect(snapshot.closed).toBe(true);
    expectCode(() => it.next(), "CLOSED");
    expectCode(() => tx.commit(), "CLOSED");
  });

  it("use after close is CLOSED: database, keyspace, iterator, snapshot, transaction (sync API)", () => {
    const db = openSync(freshPath("closed-sync"));
    const ks = db.keyspace("ks");
    fillLetters(db);
    const snapshot = db.snapshot();
    const tx = db.transaction();
    const it = db.keys();
    const batch = db.batch().put("q", "1");
    db.close();
    const calls: [string, () => unknown][] = [
      ["get", () => db.get("a")],
      ["getMany", () => db.getMany(["a"])],
      ["has", () => db.has("a")],
      ["put", () => db.put("a", "1")],
      ["delete", () => db.delete("a")],
      ["deleteRange", () => db.deleteRange({ gte: "a", lt: "b" })],
      ["iterator", () => db.iterator()],
      ["keys", () => db.keys()],
      ["values", () => db.values()],
      ["count", () => db.count()],
      ["keyspace", () => db.keyspace("ks")],
      ["batch()", () => db.batch()],
      ["batch([])", () => db.batch([{ type: "put", key: "a", value: "1" }])],
      ["queued batch write", () => batch.write()],
      ["snapshot", () => db.snapshot()],
      ["transaction", () => db.transaction()],
      ["transact", () => db.transact(() => 1)],
      ["flush", () => db.flush()],
      ["compact", () => db.compact()],
      ["maintain", () => db.maintain()],
      ["checkpoint", () => db.checkpoint(freshPath("never"))],
      ["stats", () => db.stats()],
      ["keyspace get", () => ks.get("a")],
      ["keyspace put", () => ks.put("a", "1")],
      ["keyspace iterator", () => ks.iterator()],
      ["keyspace count", () => ks.count()],
      ["iterator next", () => it.next()],
      ["read with the snapshot", () => db.get("a", { snapshot })],
      ["transaction get", () => tx.get("a")],
      ["transaction put", () => tx.put("a", "1")],
      ["transaction commit", () => tx.commit()],
    ];
    for (const [name, call] of calls) {
      const error = thrown(call);
      expect(error, name).toBeInstanceOf(ShaleError);
      expect((error as ShaleError).code, `${name}: ${(error as ShaleError).message}`).toBe("CLOSED");
    }
    expect(snapshot.closed).toBe(true);
    // Closing what the database closed already is harmless.
    snapshot.close();
    it.close();
    tx.rollback();
  });

  it("use after close is CLOSED through the Promise API", async () => {
    const db: Database<string, string> = await open(freshPath("closed-async"));
    const ks = await db.keyspace("ks");
    await db.put("a", "1");
    const tx = await db.transaction();
    await db.close();
    const calls: [string, () => Promise<unknown>][] = [
      ["get", () => db.get("a")],
      ["getMany", () => db.getMany(["a"])],
      ["has", () => db.has("a")],
      ["put", () => db.put("a", "1")],
      ["delete", () => db.delete("a")],
      ["deleteRange", () => db.deleteRange({ gte: "a", lt: "b" })],
      ["iterator", () => later(() => db.iterator().all())],
      ["count", () => db.count()],
      ["keyspace", () => db.keyspace("ks")],
      ["batch", () => db.batch([{ type: "put", key: "a", value: "1" }])],
      ["chained batch", () => later(() => db.batch().put("a", "1").write())],
      ["snapshot", () => db.snapshot()],
      ["transaction", () => db.transaction()],
      ["transact", () => db.transact(() => Promise.resolve(1))],
      ["flush", () => db.flush()],
      ["compact", () => db.compact()],
      ["maintain", () => db.maintain()],
      ["checkpoint", () => db.checkpoint(freshPath("never"))],
      ["stats", () => db.stats()],
      ["keyspace get", () => ks.get("a")],
      ["keyspace put", () => ks.put("a", "1")],
      ["transaction get", () => tx.get("a")],
      ["transaction commit", () => tx.commit()],
    ];
    for (const [name, call] of calls) {
      const error = await expectRejects(later(call), "CLOSED").catch((e: unknown) => {
        throw new Error(`${name}: ${String(e)}`);
      });
      expect(error.code).toBe("CLOSED");
    }
  });

  // Regression (fixed): an iterator that already fetched a batch keeps yielding buffered entries after its
  // database was closed (packages/js/src/engine/iterator.ts only calls into the engine when its buffer
  // is empty), instead of failing with CLOSED like every other handle.
  it("an iterator part-way through a batch is CLOSED once its database is closed", () => {
    const db = openSync(freshPath("closed-mid-batch"));
    fillLetters(db);
    const it = db.keys();
    expect(it.next().value).toBe("a");
    db.close();
    expectCode(() => it.next(), "CLOSED");
  });
});
