// `readOnly` opens (a secondary of a database another process or thread holds open, caught up
// on request or on an interval), and a worker thread stopped without closing its database.
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";

import { describe, expect, it } from "vitest";

import { open, openSync } from "shaledb";

import { expectCode, expectRejects, freshPath } from "./helpers.js";
import { Child, fixture } from "./fixtures/processes.js";

/** The next message of `worker`. */
function nextMessage(worker: Worker): Promise<unknown> {
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

describe("readOnly", () => {
  it("a read-only open of a database held open in this thread sees its writes after catchUp", () => {
    const path = freshPath("ro");
    const writer = openSync(path);
    try {
      writer.put("k", "one");
      const reader = openSync(path, { readOnly: true });
      try {
        expect(reader.get("k")).toBe("one");
        writer.put("k", "two");
        writer.put("other", "x");
        expect(reader.get("k")).toBe("one");
        reader.catchUp();
        expect(reader.get("k")).toBe("two");
        expect(reader.get("other")).toBe("x");
        writer.flush();
        writer.compact();
        writer.put("k", "three");
        reader.catchUp();
        expect(reader.get("k")).toBe("three");
        expect([...reader.keys()]).toEqual(["k", "other"]);
      } finally {
        reader.close();
      }
      // The reader took no lock and wrote nothing: the writer goes on.
      writer.put("k", "four");
    } finally {
      writer.close();
    }
  });

  it("every write on a read-only database is READ_ONLY", () => {
    const path = freshPath("ro");
    const writer = openSync(path);
    writer.keyspace("existing").put("a", "1");
    writer.put("a", "1");
    writer.close();
    const db = openSync(path, { readOnly: true });
    try {
      expectCode(() => db.put("a", "2"), "READ_ONLY");
      expectCode(() => db.delete("a"), "READ_ONLY");
      expectCode(() => db.deleteRange({ gte: "a", lt: "z" }), "READ_ONLY");
      expectCode(() => db.batch([{ type: "put", key: "b", value: "1" }]), "READ_ONLY");
      expectCode(() => db.flush(), "READ_ONLY");
      expectCode(() => db.compact(), "READ_ONLY");
      expectCode(() => db.maintain(), "READ_ONLY");
      expectCode(() => db.keyspace("missing"), "READ_ONLY");
      const existing = db.keyspace("existing");
      expect(existing.get("a")).toBe("1");
      expectCode(() => existing.put("a", "2"), "READ_ONLY");
      expect(db.get("a")).toBe("1");
    } finally {
      db.close();
    }
  });

  it("a read-only open of a missing database is NOT_FOUND and creates nothing", () => {
    const path = freshPath("ro");
    expectCode(() => openSync(path, { readOnly: true }), "NOT_FOUND");
    expect(existsSync(path)).toBe(false);
  });

  it("a second process opens read-only a database this one holds open and sees its writes after catchUp", async () => {
    const path = freshPath("ro");
    const writer = openSync(path);
    writer.put("k", "one");
    const child = new Child(process.execPath, [fixture("read-only-reader.mjs"), path]);
    try {
      expect(await child.waitForLines(2)).toEqual(["READ_ONLY", "one"]);
      writer.put("k", "two");
      child.process.stdin?.write("catch up\n");
      expect((await child.waitForLines(3))[2]).toBe("two");
      writer.flush();
      writer.put("k", "three");
      child.process.stdin?.write("catch up\n");
      expect((await child.waitForLines(4))[3]).toBe("three");
      child.closeStdin();
      expect((await child.exited()).status).toBe(0);
    } finally {
      await child.kill();
      writer.close();
    }
  });

  it("a worker thread opens read-only a database the main thread holds open and catches up on its interval", async () => {
    const path = freshPath("ro");
    const writer = openSync(path);
    writer.put("k", "one");
    const worker = new Worker(fixture("read-only-worker.mjs"), { workerData: { dir: path } });
    try {
      expect(await nextMessage(worker)).toBe("READ_ONLY");
      const seen = nextMessage(worker);
      worker.postMessage("one");
      expect(await seen).toBe("one");
      writer.put("k", "two");
      const seenTwo = nextMessage(worker);
      worker.postMessage("two");
      expect(await seenTwo).toBe("two");
      worker.postMessage("close");
    } finally {
      await worker.terminate();
      writer.close();
    }
  });

  it("the Promise API opens read-only, catches up on request, and refuses writes", async () => {
    const path = freshPath("ro");
    const writer = openSync(path);
    writer.put("k", "one");
    try {
      for (const engineThread of ["own", "caller"] as const) {
        const db = await open(path, { readOnly: true, engineThread });
        try {
          expect(await db.get("k")).toBe("one");
          writer.put("k", `two ${engineThread}`);
          await db.catchUp();
          expect(await db.get("k")).toBe(`two ${engineThread}`);
          await expectRejects(db.put("k", "x"), "READ_ONLY");
          await expectRejects(db.batch([{ type: "delete", key: "k" }]), "READ_ONLY");
        } finally {
          await db.close();
        }
        writer.put("k", "one");
      }
      const timed = await open(path, { readOnly: true, catchUpIntervalMs: 10 });
      try {
        writer.put("k", "by the timer");
        const deadline = Date.now() + 10_000;
        while ((await timed.get("k")) !== "by the timer" && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(await timed.get("k")).toBe("by the timer");
      } finally {
        await timed.close();
      }
    } finally {
      writer.close();
    }
  });

  it("catchUp on a database not opened read-only is INVALID_ARGUMENT", async () => {
    const db = openSync(freshPath("ro"));
    try {
      expectCode(() => db.catchUp(), "INVALID_ARGUMENT");
    } finally {
      db.close();
    }
    const promised = await open(freshPath("ro"), { engineThread: "caller" });
    try {
      await expectRejects(promised.catchUp(), "INVALID_ARGUMENT");
    } finally {
      await promised.close();
    }
    expectCode(() => db.catchUp(), "CLOSED");
  });

  it("bad readOnly and catchUpIntervalMs options are INVALID_ARGUMENT", async () => {
    const path = freshPath("ro");
    openSync(path).close();
    const bad: Record<string, unknown>[] = [
      { readOnly: "yes" },
      { readOnly: 1 },
      { readOnly: true, catchUpIntervalMs: -1 },
      { readOnly: true, catchUpIntervalMs: 1.5 },
      { readOnly: true, catchUpIntervalMs: "10" },
      { readOnly: true, catchUpIntervalMs: Number.NaN },
      { readOnly: true, catchUpIntervalMs: 1e12 },
      { catchUpIntervalMs: 10 },
      { readOnly: true, follower: true },
      { readOnly: true, errorIfExists: true },
    ];
    for (const options of bad) {
      expectCode(() => openSync(path, options), "INVALID_ARGUMENT");
      await expectRejects(open(path, options), "INVALID_ARGUMENT");
    }
  });
});

describe("unknown open options", () => {
  it("an unknown open option is INVALID_ARGUMENT, for openSync and open", async () => {
    const path = freshPath("opts");
    for (const options of [{ readonly: true }, { readOnlyy: true }, { exclusive: true }, { cacheSize: 1 }]) {
      const error = expectCode(() => openSync(path, options as never), "INVALID_ARGUMENT");
      expect(error.message).toContain(Object.keys(options)[0]);
      await expectRejects(open(path, options as never), "INVALID_ARGUMENT");
    }
    expect(existsSync(path)).toBe(false);
  });
});

describe("worker threads", () => {
  it("a worker thread stopped with terminate() before close() does not keep the lock", async () => {
    const path = freshPath("terminate");
    const worker = new Worker(fixture("open-in-worker.mjs"), { workerData: { dir: path } });
    expect(await nextMessage(worker)).toBe("opened");
    expectCode(() => openSync(path), "LOCKED");
    await worker.terminate();
    const db = openSync(path);
    try {
      expect(db.get("k")).toBe("written in the worker");
    } finally {
      db.close();
    }
  });
});

describe("values that do not decode", () => {
  it("a stored value that is not JSON read as json is DECODE", async () => {
    const path = freshPath("decode");
    // Written as raw bytes (so no encodings are recorded: as another program would), then read
    // as json. (Written as utf8, the json open would be ENCODING_MISMATCH: keyspace-encodings.test.ts.)
    const db = openSync(path, { valueEncoding: "binary" });
    db.put("k", new TextEncoder().encode("plain text, not JSON"));
    db.close();
    const json = openSync(path, { valueEncoding: "json" });
    try {
      const error = expectCode(() => json.get("k"), "DECODE");
      expect(error.message).toContain("valueEncoding");
      expectCode(() => [...json.values()], "DECODE");
    } finally {
      json.close();
    }
    const promised = await open(path, { valueEncoding: "json", engineThread: "caller" });
    try {
      await expectRejects(promised.get("k"), "DECODE");
    } finally {
      await promised.close();
    }
  });
});
