// One database, one owner: a second process (Node or native ShaleDB) that opens a directory
// another one holds gets a `LOCKED` ShaleError saying what to do, and can open it once the
// holder closed it. Holders are child processes that keep the database open until their
// standard input closes: fixtures/hold.mjs (Node) and examples/rust/src/bin/lock_holder.rs
// (native), which print `locked` once they hold it, or the error code if they could not.
import { readdirSync } from "node:fs";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { ShaleError, open, openSync } from "shaledb";

import { BUILD_TIMEOUT_MS, Child, buildNative, fixture, tempDir } from "./fixtures/processes.js";

const temp = tempDir("two-processes");
let lockHolder = "";

beforeAll(() => {
  lockHolder = buildNative("lock_holder").lock_holder ?? "";
}, BUILD_TIMEOUT_MS);

afterAll(() => {
  temp.cleanup();
});

/** A Node process that holds (or tries to hold) the database in `dir`. */
function nodeHolder(dir: string): Child {
  return new Child(process.execPath, [fixture("hold.mjs"), dir]);
}

/** A native process that holds (or tries to hold) the database in `dir`. */
function nativeHolder(dir: string): Child {
  return new Child(lockHolder, [dir]);
}

/** The error `fn` throws (it must throw). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, got none");
}

/** `error` is a `LOCKED` ShaleError whose message says what to do (and, if known, who). */
function expectLocked(error: unknown, holderPid?: number): void {
  expect(error).toBeInstanceOf(ShaleError);
  const { code, message } = error as ShaleError;
  expect(code).toBe("LOCKED");
  expect(message).toMatch(/close the other handle or process/);
  if (holderPid !== undefined) {
    expect(message).toContain(`pid ${holderPid}`);
  }
}

/** Ends a holder by closing its standard input; it must close the database and exit with 0. */
async function release(holder: Child): Promise<void> {
  holder.closeStdin();
  const end = await holder.exited();
  expect(end.stderr).toBe("");
  expect(end.status).toBe(0);
}

/** A holder that could not open: it printed `LOCKED`, said why, and exited with 1. */
async function expectRefused(holder: Child): Promise<void> {
  expect(await holder.firstLine()).toBe("LOCKED");
  const end = await holder.exited();
  expect(end.status).toBe(1);
  expect(end.stderr).toMatch(/close the other handle or process/);
}

describe("a second process opening the same directory gets LOCKED", () => {
  it("while a Node process holds the database, openSync and open here fail with LOCKED; once it closed, they work", async () => {
    const dir = join(temp.path, "node-holds");
    const holder = nodeHolder(dir);
    try {
      expect(await holder.firstLine(), holder.stderr).toBe("locked");
      expectLocked(thrownBy(() => openSync(dir)), holder.process.pid);
      await expect(open(dir)).rejects.toSatisfy((error: unknown) => {
        expectLocked(error, holder.process.pid);
        return true;
      });
      // Still locked after the failed attempts: they took nothing over.
      expectLocked(thrownBy(() => openSync(dir)));
    } finally {
      await release(holder);
    }
    const db = openSync(dir);
    expect(db.get("held-by")).toBe(`node ${holder.process.pid}`);
    db.close();
  }, 30_000);

  it("while this process holds the database, a Node child gets LOCKED; once this process closed it, the child opens it", async () => {
    const dir = join(temp.path, "parent-holds");
    const db = openSync(dir);
    try {
      db.put("written-by", "parent", { sync: true });
      await expectRefused(nodeHolder(dir));
    } finally {
      db.close();
    }
    const holder = nodeHolder(dir);
    expect(await holder.firstLine(), holder.stderr).toBe("locked");
    await release(holder);
    const again = openSync(dir);
    expect(again.get("written-by")).toBe("parent");
    again.close();
  }, 30_000);

  it("a second open of the same directory in one process gets LOCKED, however the path is spelled, until the first closes", async () => {
    const dir = join(temp.path, "same-process");
    const first = openSync(dir);
    try {
      first.put("k", "v");
      expectLocked(thrownBy(() => openSync(dir)), process.pid);
      expectLocked(thrownBy(() => openSync(join(dir, "."))));
      expectLocked(thrownBy(() => openSync(`${dir}/../same-process/`)));
      await expect(open(dir)).rejects.toBeInstanceOf(ShaleError);
      // The first handle is unaffected by the refused opens.
      expect(first.get("k")).toBe("v");
      first.put("k2", "v2");
    } finally {
      first.close();
    }
    const second = await open(dir);
    expect(await second.get("k2")).toBe("v2");
    await second.close();
  });
});

// Regression: the Node lock bridge's message is already the whole sentence; the bindings once
// wrapped it again in the core's `Error::Locked` display ("is locked by ... is locked by ...").
it("the LOCKED message names the lock file, the holder and what to do once each", () => {
  const dir = join(temp.path, "message");
  const first = openSync(dir);
  try {
    const { message } = thrownBy(() => openSync(dir)) as ShaleError;
    expect(message.split("close the other handle or process first").length - 1).toBe(1);
    expect(message.split("is locked by").length - 1).toBe(1);
  } finally {
    first.close();
  }
});

describe("native ShaleDB and Node racing for one directory", () => {
  // The lock file is written aside and hard-linked into place by both implementations: of
  // processes started at once, exactly one gets the lock, and no temporary file is left.
  it("of native and Node processes started at the same time on one directory, exactly one holds it", async () => {
    for (let round = 0; round < 3; round++) {
      const dir = join(temp.path, `race-${round}`);
      const holders = [nativeHolder(dir), nodeHolder(dir), nativeHolder(dir), nodeHolder(dir)];
      const lines = await Promise.all(holders.map((holder) => holder.firstLine()));
      expect(lines.filter((line) => line === "locked"), lines.join(",")).toHaveLength(1);
      expect(lines.filter((line) => line === "LOCKED")).toHaveLength(holders.length - 1);
      for (const [i, holder] of holders.entries()) {
        if (lines[i] === "locked") {
          await release(holder);
        } else {
          expect((await holder.exited()).status).toBe(1);
        }
      }
      expect(readdirSync(dir).filter((name) => name.startsWith("LOCK"))).toEqual([]);
    }
  }, 60_000);
});

describe("native ShaleDB and Node honour each other's lock", () => {
  it("while a native process holds the database, Node gets LOCKED; once it closed, Node opens it", async () => {
    const dir = join(temp.path, "native-holds");
    const holder = nativeHolder(dir);
    try {
      expect(await holder.firstLine(), holder.stderr).toBe("locked");
      expectLocked(thrownBy(() => openSync(dir)), holder.process.pid);
    } finally {
      await release(holder);
    }
    const db = openSync(dir);
    db.put("node", "after native", { sync: true });
    db.close();
  }, 30_000);

  it("while Node holds the database, a native process gets LOCKED; once Node closed it, the native process opens it", async () => {
    const dir = join(temp.path, "node-holds-native");
    const db = openSync(dir);
    try {
      db.put("node", "first", { sync: true });
      await expectRefused(nativeHolder(dir));
    } finally {
      db.close();
    }
    const holder = nativeHolder(dir);
    expect(await holder.firstLine(), holder.stderr).toBe("locked");
    await release(holder);
  }, 30_000);
});
