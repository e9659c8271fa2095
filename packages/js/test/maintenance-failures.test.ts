// A failed flush after a committed write, through the package (issue "no acknowledged write lost",
// failures 3 and 9): a write's result is its commit's. When the bindings' inline maintenance step
// that follows it (crates/wasm/src/database.rs, every 256 KiB of writes) or an idle-time step
// (database-handle.ts) fails, the write stays acknowledged and visible; the failure poisons the
// database, and the next write reports the cause (QUOTA for a full disk, POISONED otherwise)
// without being applied. Table files fail on a test host (fixtures/faulty-host) while the
// write-ahead log keeps working.
import { describe, expect, it } from "vitest";

import { ShaleError, type ShaleErrorCode } from "../src/errors.js";
import type { SyncDatabase } from "../src/types.js";
import { FaultyHost } from "./fixtures/faulty-host.js";
import { openOnHost, scanAll } from "./fixtures/host-database.js";

type Db = SyncDatabase<string, string>;

/** The bindings' debt bound: a write that brings writes since the last step to it does one. */
const INLINE_STEP_EVERY = 256 << 10;
const TABLES = /\.sst$/;

function expectCode(fn: () => unknown, code: ShaleErrorCode): void {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error, "expected the call to throw").toBeInstanceOf(ShaleError);
  expect((error as ShaleError).code, (error as ShaleError).message).toBe(code);
}

/**
 * A database whose next write fills its memtable's successor and brings the bindings' debt to
 * the bound: one put of `INLINE_STEP_EVERY - 1` bytes (key and value) into a 64 KiB memtable.
 * The next write switches the memtable (a new log) and then does the inline step, a flush.
 */
function atTheDebtBound(host: FaultyHost, autoMaintenance = false): Db {
  const db = openOnHost(host, { memtableSize: 64 << 10, autoMaintenance });
  db.put("big", "b".repeat(INLINE_STEP_EVERY - 1 - "big".length));
  return db;
}

/** Writes whose commit is followed by the inline step, and what each leaves. */
const writes: {
  name: string;
  write(db: Db): void;
  check(state: Map<string, string>): void;
}[] = [
  {
    name: "a put",
    write: (db) => db.put("acked", "yes"),
    check: (s) => expect(s.get("acked")).toBe("yes"),
  },
  {
    name: "a delete",
    write: (db) => db.delete("big"),
    check: (s) => expect(s.has("big")).toBe(false),
  },
  {
    name: "a batch",
    write: (db) =>
      db.batch([
        { type: "put", key: "acked", value: "yes" },
        { type: "delete", key: "big" },
      ]),
    check: (s) => {
      expect(s.get("acked")).toBe("yes");
      expect(s.has("big")).toBe(false);
    },
  },
];

describe("a failed inline maintenance step after a committed write", () => {
  for (const { name, write, check } of writes) {
    it(`${name} whose inline maintenance fails is acknowledged, and the next write reports QUOTA`, () => {
      const host = new FaultyHost();
      const db = atTheDebtBound(host);
      host.failNth(1, "ENOSPC", TABLES);
      expect(() => write(db)).not.toThrow();
      // The step ran after the commit and failed creating its table.
      expect(host.firedAt).toMatchObject({ op: "open", name: expect.stringMatching(TABLES) });
      check(scanAll(db));
      expectCode(() => db.put("after", "no"), "QUOTA");
      expectCode(() => db.delete("acked"), "QUOTA");
      db.close();
      // Recovery (after a restart, on a healthy host) replays the acknowledged write.
      const reopened = openOnHost(host.fork());
      check(scanAll(reopened));
      reopened.close();
    });
  }

  it("a write reports QUOTA only if it was not applied, now and after a restart (failure 9)", () => {
    const host = new FaultyHost();
    const db = atTheDebtBound(host);
    const applied = new Map([["big", db.get("big") ?? "missing"]]);
    host.failNth(1, "ENOSPC", TABLES);
    const refused: string[] = [];
    for (const [key, value] of [
      ["acked", "yes"],
      ["refused", "no"],
      ["big", "overwritten"],
    ] as const) {
      try {
        db.put(key, value, { sync: true });
        applied.set(key, value);
      } catch (error) {
        expect((error as ShaleError).code).toBe("QUOTA");
        refused.push(key);
      }
      const outcome = refused.includes(key) ? "threw" : "returned";
      expect(scanAll(db), `after the put of ${key} ${outcome}`).toEqual(applied);
    }
    expect(refused).toEqual(["refused", "big"]);
    db.close();
    const reopened = openOnHost(host.fork());
    expect(scanAll(reopened)).toEqual(applied);
    reopened.close();
  });

  it("a failed step that is not a full disk makes the next write report POISONED", () => {
    const host = new FaultyHost();
    const db = atTheDebtBound(host);
    host.failNth(1, "EIO", TABLES);
    db.put("acked", "yes");
    expect(host.firedAt).toMatchObject({ name: expect.stringMatching(TABLES) });
    expect(db.get("acked")).toBe("yes");
    expectCode(() => db.put("after", "no"), "POISONED");
    db.close();
  });
});

const idle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("a failed idle-time maintenance step", () => {
  it("is not swallowed: it poisons the database, later writes report QUOTA; no retry loop", async () => {
    const host = new FaultyHost();
    const db = openOnHost(host, { memtableSize: 64 << 10 });
    // A full memtable, then a write that switches it: a flush is pending, the debt is far from
    // the inline bound, so only the idle-time turn scheduled by the writes can run it.
    db.put("big", "b".repeat(100 << 10));
    host.failNth(1, "ENOSPC", TABLES);
    db.put("acked", "yes");
    expect(host.firedAt).toBeUndefined();
    await idle();
    await idle();
    expect(host.firedAt).toMatchObject({ op: "open", name: expect.stringMatching(TABLES) });
    const calls = host.calls;
    await idle();
    await idle();
    expect(host.calls, "the failed step is not retried in a loop").toBe(calls);
    expect(db.get("acked")).toBe("yes");
    expectCode(() => db.put("after", "no"), "QUOTA");
    expectCode(() => db.maintain(), "QUOTA");
    expect(db.get("after")).toBeUndefined();
    db.close();
    const reopened = openOnHost(host.fork());
    expect(reopened.get("acked")).toBe("yes");
    expect(reopened.get("big")?.length).toBe(100 << 10);
    reopened.close();
  });
});
