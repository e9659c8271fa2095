// db.watch() and db.liveQuery() on the synchronous API (openSync): deliveries after the writes of
// this thread (in a microtask, never inside the write call), an iterator that falls behind
// reading what the change feed still holds and saying `overflow` when it no longer does, and
// the end at close.
import { describe, expect, it } from "vitest";

import { openSync, type WatchEvent } from "shaledb";

import { freshPath } from "./helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("watch (synchronous API)", () => {
  it("delivers after the write call returns, with the keyspace's encodings", async () => {
    const db = openSync<{ n: number }>(freshPath("watch-sync"), { valueEncoding: "json" });
    const events: WatchEvent<string, { n: number }>[] = [];
    let inWrite = false;
    const unsubscribe = db.watch({ gte: "a", lte: "c" }, (event) => {
      expect(inWrite).toBe(false);
      events.push(event);
    }, { values: true });
    inWrite = true;
    db.put("b", { n: 1 });
    db.put("d", { n: 2 });
    inWrite = false;
    await sleep(10);
    expect(events.flatMap((e) => e.changes)).toEqual([{ type: "put", key: "b", value: { n: 1 } }]);
    unsubscribe();
    db.close();
  });

  it("an iterator that fell behind past a flush says overflow, then goes on from the present", async () => {
    const db = openSync(freshPath("watch-overflow"), { memtableSize: 64 << 10 });
    const watcher = db.watch({ prefix: "k" });
    for (let i = 0; i < 2000; i++) db.put(`k${i}`, "x".repeat(100));
    db.flush();
    db.compact();
    const first = (await watcher.next()).value as WatchEvent<string, string>;
    expect(first.overflow).toBe(true);
    db.put("k-new", "1");
    const second = (await watcher.next()).value as WatchEvent<string, string>;
    expect(second.changes.at(-1)).toEqual({ type: "put", key: "k-new" });
    watcher.close();
    db.close();
  });

  it("ten watches woken by the same commits each hear their own prefix, whole and in order", async () => {
    const db = openSync(freshPath("watch-ten"));
    const heard: string[][] = Array.from({ length: 10 }, () => []);
    const stops = heard.map((keys, w) =>
      db.watch({ prefix: `w${w}:` }, (event) => {
        for (const change of event.changes) if (change.type === "put") keys.push(change.key);
      }),
    );
    for (let i = 0; i < 50; i++) {
      db.put(`w${i % 10}:${i}`, "v");
      db.put(`other:${i}`, "v");
      if (i % 7 === 0) await sleep(1); // some commits read together, some one by one
    }
    await sleep(20);
    heard.forEach((keys, w) => expect(keys).toEqual(Array.from({ length: 5 }, (_, j) => `w${w}:${w + 10 * j}`)));
    for (const stop of stops) stop();
    db.close();
  });

  it("ends its iterators and listeners when the database closes", async () => {
    const db = openSync(freshPath("watch-close"));
    const watcher = db.watch();
    const pending = watcher.next();
    db.close();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it("liveQuery takes a synchronous read", async () => {
    const db = openSync(freshPath("watch-live"));
    const seen: number[] = [];
    const subscription = db.liveQuery({ prefix: "n" }, () => db.count({ prefix: "n" }), { coalesce: "tick" })
      .subscribe((n) => seen.push(n));
    await sleep(10);
    db.put("n1", "1");
    db.put("n2", "1");
    await sleep(30);
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(2);
    subscription.unsubscribe();
    db.close();
  });
});
