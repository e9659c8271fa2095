// Values and entries across the WebAssembly boundary of the synchronous API: gets decode straight
// from the instance's memory (utf8, json) or copy out once (binary), iterators copy each batch out
// of a reused output buffer. Each test is named after the behaviour it holds the implementation to.
// The first test must stay first: it reads output before anything used the scratch buffer.
import { describe, expect, it } from "vitest";

import { openSync } from "shaledb";

import { expectCode, freshPath } from "./helpers.js";

/** Key `i` as 8 big-endian bytes (key order is number order). */
function key(i: number): Uint8Array {
  const k = new Uint8Array(8);
  new DataView(k.buffer).setUint32(4, i);
  return k;
}

/** A value of `n` bytes, every byte derived from `seed`. */
function value(seed: number, n: number): Uint8Array {
  const v = new Uint8Array(n);
  for (let i = 0; i < n; i++) v[i] = (seed * 31 + i * 7) & 255;
  return v;
}

describe("iterator batches", () => {
  it("an iterator's first batch, before any get or put of the instance, is read whole", () => {
    const db = openSync(freshPath(), { keyEncoding: "binary", valueEncoding: "binary" });
    db.batch(Array.from({ length: 50 }, (_, i) => ({ type: "put" as const, key: key(i), value: value(i, 40) })));
    const entries = [...db.iterator()];
    expect(entries.length).toBe(50);
    entries.forEach(([k, v], i) => {
      expect(k).toEqual(key(i));
      expect(v).toEqual(value(i, 40));
    });
    db.close();
  });

  it("with any limit an iterator yields exactly that many entries in order, across batch sizes", () => {
    const db = openSync(freshPath(), { keyEncoding: "binary", valueEncoding: "binary" });
    const n = 5000;
    for (let start = 0; start < n; start += 1000) {
      const batch = db.batch();
      for (let i = start; i < start + 1000; i++) batch.put(key(i), value(i, 24));
      batch.write();
    }
    for (const limit of [1, 15, 16, 17, 1000, 1023, 1024, 1025, 4096, n + 1]) {
      let i = 0;
      for (const [k, v] of db.iterator({ limit })) {
        expect(k).toEqual(key(i));
        expect(v).toEqual(value(i, 24));
        i++;
      }
      expect(i).toBe(Math.min(limit, n));
      expect([...db.keys({ gte: key(100), limit })].length).toBe(Math.min(limit, n - 100));
    }
    db.close();
  });

  it("entries of one iterator stay intact while another iterator reads its batches", () => {
    const db = openSync(freshPath(), { keyEncoding: "binary", valueEncoding: "binary" });
    const batch = db.batch();
    for (let i = 0; i < 3000; i++) batch.put(key(i), value(i, 100));
    batch.write();
    const a = db.iterator({ lt: key(1500) });
    const b = db.iterator({ gte: key(1500) });
    const kept: [Uint8Array, Uint8Array][] = [];
    for (let i = 0; i < 1500; i++) {
      const ea = a.next();
      const eb = b.next();
      expect(ea.done).toBe(false);
      expect(eb.done).toBe(false);
      kept.push(ea.value as [Uint8Array, Uint8Array], eb.value as [Uint8Array, Uint8Array]);
    }
    a.close();
    b.close();
    kept.forEach(([k, v], j) => {
      const i = j % 2 === 0 ? j / 2 : 1500 + (j - 1) / 2;
      expect(k).toEqual(key(i));
      expect(v).toEqual(value(i, 100));
    });
    db.close();
  });
});

describe("gets", () => {
  it("a binary value read by get is a copy: later gets, puts and scans leave it as it was", () => {
    const db = openSync(freshPath(), { keyEncoding: "binary", valueEncoding: "binary" });
    db.put(key(1), value(1, 100));
    db.put(key(2), value(2, 100));
    const first = db.get(key(1));
    db.get(key(2));
    db.put(key(3), value(3, 5000));
    [...db.iterator()];
    expect(first).toEqual(value(1, 100));
    expect(first?.length).toBe(100);
    db.close();
  });

  it("utf8 and json values decoded from WebAssembly memory are right after the memory grew", () => {
    const path = freshPath();
    const text = openSync(path);
    text.put("small", "héllo wörld ✓");
    const grown = "x".repeat(24 << 20);
    text.put("large", grown);
    expect(text.get("small")).toBe("héllo wörld ✓");
    expect(text.get("large")).toBe(grown);
    expect(text.get("small")).toBe("héllo wörld ✓");
    const json = text.keyspace("json", { valueEncoding: "json" });
    json.put("doc", { a: [1, 2, { b: "ç" }], n: null });
    json.put("big", { s: "y".repeat(30 << 20) });
    expect(json.get("doc")).toEqual({ a: [1, 2, { b: "ç" }], n: null });
    expect((json.get("big") as { s: string }).s.length).toBe(30 << 20);
    expect(text.get("absent")).toBeUndefined();
    expect(text.has("small")).toBe(true);
    text.close();
  });
});

describe("memory", () => {
  it("closing the last database lets a grown instance go: closed handles say CLOSED, the next open reads all", () => {
    const path = freshPath();
    const options = { keyEncoding: "binary", valueEncoding: "binary" } as const;
    const db = openSync(path, options);
    // 80 MiB: the instance's memory grows well past the size above which it is let go.
    const big = new Uint8Array(80 << 20);
    big[0] = 1;
    big[big.length - 1] = 2;
    db.put(key(1), big);
    db.put(key(2), value(2, 10));
    const it = db.iterator();
    db.close();
    expectCode(() => db.get(key(2)), "CLOSED");
    expectCode(() => it.next(), "CLOSED");
    const again = openSync(path, options);
    expect(again.get(key(2))).toEqual(value(2, 10));
    const read = again.get(key(1));
    expect(read?.length).toBe(80 << 20);
    expect([read?.[0], read?.[read.length - 1]]).toEqual([1, 2]);
    expect([...again.keys()]).toEqual([key(1), key(2)]);
    again.close();
    expectCode(() => again.put(key(3), value(3, 3)), "CLOSED");
  });
});
