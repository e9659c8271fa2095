// The Promise API with the engine in the caller's thread (`engineThread: "caller"`): a synced
// write's fsync runs in libuv's pool (`fs.fdatasync`), group-committed, never on the event
// loop; replies wait for their sync, and writes become visible in commit order.
import { fdatasync } from "node:fs";
import { resolve } from "node:path";

import { describe, expect, it } from "vitest";

import "../src/node.js"; // registers the module's loader (for the src modules)
import { PromiseDatabase } from "../src/api/database.js";
import { checkOpenOptions } from "../src/arguments/open-options.js";
import type { Environment } from "../src/engine/sync-database.js";
import { InThreadTransport } from "../src/node/in-thread-transport.js";
import { openNodeServer } from "../src/node/node-server.js";
import type { DatabaseServer } from "../src/server/database-server.js";
import { NodeFsStorage, type NodeFsStorageOptions } from "../src/node/node-storage.js";
import { freshPath } from "./helpers.js";

type FdatasyncFn = NonNullable<NodeFsStorageOptions["fdatasync"]>;

/** Opens `location` as `open(location, { engineThread: "caller" })` does, with `fdatasync`. */
function openCaller(location: string, fdatasyncFn: FdatasyncFn, memtableSize?: number): PromiseDatabase {
  return openCallerServer(location, fdatasyncFn, memtableSize).db;
}

/** {@link openCaller}, with its server (whose synchronous database reads what is visible). */
function openCallerServer(
  location: string,
  fdatasyncFn: FdatasyncFn,
  memtableSize?: number,
): { db: PromiseDatabase; server: DatabaseServer } {
  const environment: Environment = {
    resolve: (l) => resolve(l),
    storage: (l, create) => new NodeFsStorage(l, { create, fdatasync: fdatasyncFn }),
  };
  const options = {
    keyEncoding: "utf8",
    valueEncoding: "utf8",
    ...(memtableSize === undefined ? {} : { memtableSize }),
  } as const;
  const server = openNodeServer(location, options, { environment, asyncSync: true });
  const checked = checkOpenOptions(options);
  return { db: new PromiseDatabase(new InThreadTransport(server), checked.keys, checked.values), server };
}

const utf8 = new TextEncoder();
/** What the server's database shows readers of `key` now (the visible state), as a string. */
function visible(server: DatabaseServer, key: string): string | undefined {
  const value = server.db.get(utf8.encode(key)) as Uint8Array | undefined;
  return value === undefined ? undefined : new TextDecoder().decode(value);
}

/** An `fdatasync` that counts its calls and completes only when the test lets it. */
function heldFdatasync() {
  const waiting: (() => void)[] = [];
  let calls = 0;
  let failNext: NodeJS.ErrnoException | undefined;
  const fn: FdatasyncFn = (fd, callback) => {
    calls++;
    const failure = failNext;
    failNext = undefined;
    waiting.push(() => {
      if (failure !== undefined) {
        callback(failure);
      } else {
        fdatasync(fd, callback);
      }
    });
  };
  return {
    fn,
    get calls() {
      return calls;
    },
    get waiting() {
      return waiting.length;
    },
    /** Lets every waiting sync complete. */
    release() {
      for (const run of waiting.splice(0)) run();
    },
    /** The next sync fails with `EIO`. */
    failNextWith(code = "EIO") {
      failNext = Object.assign(new Error(`${code}: i/o error, fdatasync`), { code });
    },
  };
}

/** Turns of the event loop, so the server runs what was sent (and starts its sync). */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** Tracks whether `promise` settled. */
function track<T>(promise: Promise<T>): { settled: boolean; promise: Promise<T> } {
  const state = { settled: false, promise };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

describe("synced writes with the engine in the caller's thread", () => {
  it("a synced put resolves only after its fdatasync completed, and is readable after", async () => {
    const sync = heldFdatasync();
    const db = openCaller(freshPath("deferred"), sync.fn);
    const put = track(db.put("k", "v", { sync: true }));
    await turns();
    expect(sync.waiting).toBe(1);
    expect(put.settled).toBe(false);
    // The event loop runs meanwhile (this test does).
    sync.release();
    await put.promise;
    expect(await db.get("k")).toBe("v");
    await db.close();
  });

  it("concurrent synced puts share fdatasync calls: fewer syncs than puts", async () => {
    let calls = 0;
    const db = openCaller(freshPath("deferred"), (fd, callback) => {
      calls++;
      fdatasync(fd, callback);
    });
    const writers = 8;
    const each = 25;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < each; i++) {
          await db.put(`w${w}-${i}`, `v${i}`, { sync: true });
        }
      }),
    );
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThan((writers * each) / 2);
    for (let w = 0; w < writers; w++) {
      expect(await db.get(`w${w}-${each - 1}`)).toBe(`v${each - 1}`);
    }
    await db.close();
  });

  it("writes that arrive while a sync runs join the next one (one fdatasync for all of them)", async () => {
    const sync = heldFdatasync();
    const db = openCaller(freshPath("deferred"), sync.fn);
    const first = track(db.put("first", "1", { sync: true }));
    await turns();
    expect(sync.calls).toBe(1);
    const later = Array.from({ length: 10 }, (_, i) => track(db.put(`later${i}`, "2", { sync: true })));
    await turns();
    expect(sync.calls).toBe(1); // they wait behind the running sync
    sync.release();
    await first.promise;
    await turns();
    expect(sync.calls).toBe(2); // one more sync covers the ten
    expect(later.some((p) => p.settled)).toBe(false);
    sync.release();
    await Promise.all(later.map((p) => p.promise));
    await db.close();
  });

  it("an unsynced put issued after a pending synced put is neither visible nor acknowledged before it", async () => {
    const sync = heldFdatasync();
    const { db, server } = openCallerServer(freshPath("deferred"), sync.fn);
    const synced = track(db.put("a", "1", { sync: true }));
    const sameTurn = track(db.put("b", "2")); // committed with "a" (one message)
    await turns();
    expect(sync.waiting).toBe(1);
    const laterTurn = track(db.put("c", "3")); // arrives while the sync runs
    await turns();
    // Readers see none of them while "a"'s sync runs; no promise has resolved.
    expect([visible(server, "a"), visible(server, "b"), visible(server, "c")]).toEqual([undefined, undefined, undefined]);
    expect([synced.settled, sameTurn.settled, laterTurn.settled]).toEqual([false, false, false]);
    sync.release();
    await Promise.all([synced.promise, sameTurn.promise]);
    expect([visible(server, "a"), visible(server, "b")]).toEqual(["1", "2"]);
    await laterTurn.promise;
    expect(visible(server, "c")).toBe("3");
    await db.close();
  });

  it("a read issued after a synced put in the same turn sees it: it runs after the put's sync", async () => {
    const sync = heldFdatasync();
    const db = openCaller(freshPath("deferred"), sync.fn);
    const put = track(db.put("a", "1", { sync: true }));
    const read = track(db.get("a"));
    await turns();
    expect(sync.waiting).toBe(1);
    expect([put.settled, read.settled]).toEqual([false, false]);
    sync.release();
    expect(await read.promise).toBe("1");
    await put.promise;
    await db.close();
  });

  it("a read waiting on a queue gets an item whose synced push became visible only after its sync", async () => {
    const sync = heldFdatasync();
    const db = openCaller(freshPath("deferred"), sync.fn);
    const queue = await db.queue("jobs");
    const taken = track(queue.take({ waitMs: 10_000 }));
    await turns();
    const pushed = track(queue.push("job", { sync: true }));
    await turns();
    expect(sync.waiting).toBe(1);
    expect(taken.settled).toBe(false);
    sync.release();
    await pushed.promise;
    const item = await taken.promise;
    expect(item?.value).toBe("job");
    await db.close();
  });

  it("synced writes across memtable switches and maintenance all resolve, in order, and survive a reopen", async () => {
    let calls = 0;
    const location = freshPath("deferred");
    const db = openCaller(
      location,
      (fd, callback) => {
        calls++;
        fdatasync(fd, callback);
      },
      64 * 1024,
    );
    const value = "v".repeat(500);
    const writers = 4;
    const each = 150; // ~300 KiB: several memtable switches, flushes between messages
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < each; i++) {
          await db.put(`w${w}-${String(i).padStart(4, "0")}`, value, { sync: i % 2 === 0 });
        }
      }),
    );
    expect(calls).toBeGreaterThan(0);
    await db.close();
    const again = openCaller(location, (fd, callback) => fdatasync(fd, callback));
    for (let w = 0; w < writers; w++) {
      expect(await again.get(`w${w}-${String(each - 1).padStart(4, "0")}`)).toBe(value);
    }
    await again.close();
  });

  it("a synced queue push whose fdatasync fails is not acknowledged", async () => {
    const sync = heldFdatasync();
    const db = openCaller(freshPath("deferred"), sync.fn);
    const queue = await db.queue("jobs");
    sync.failNextWith("EIO");
    const pushed = queue.push("job", { sync: true });
    await turns();
    sync.release();
    await expect(pushed).rejects.toMatchObject({ code: "POISONED" });
    await db.close().catch(() => undefined);
  });

  it("a failed fdatasync fails the write with POISONED, and no later write is acknowledged", async () => {
    const sync = heldFdatasync();
    const db = openCaller(freshPath("deferred"), sync.fn);
    await (async () => {
      const ok = db.put("ok", "1", { sync: true });
      await turns();
      sync.release();
      await ok;
    })();
    sync.failNextWith("EIO");
    const failed = db.put("lost", "x", { sync: true });
    const behind = db.get("zzz").then(() => db.put("behind", "y"));
    await turns();
    sync.release();
    const error = await failed.then(
      () => expect.fail("the write was acknowledged"),
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error.code).toBe("POISONED");
    expect(error.message).toMatch(/EIO/);
    await expect(behind).rejects.toMatchObject({ code: "POISONED" });
    await expect(db.put("after", "z")).rejects.toMatchObject({ code: "POISONED" });
    await expect(db.put("after", "z", { sync: true })).rejects.toMatchObject({ code: "POISONED" });
    expect(await db.get("ok")).toBe("1");
    expect(await db.get("lost")).toBeUndefined(); // never visible past the failed sync
    expect(sync.calls).toBe(2); // nothing tried to sync again after the failure
    await db.close().catch(() => undefined);
  });
});
