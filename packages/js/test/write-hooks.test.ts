// The write hooks of a database handle (engine/database-handle.ts), which the browser's
// synchronous API in a worker uses to refuse a write with BUSY when no OPFS file is ready: every
// call that may write or create files asks first, and a refusal writes nothing — a transaction
// refused at commit stays open, to commit once the hook allows it.
import { describe, expect, it } from "vitest";

import { ShaleError, openSync } from "shaledb";

import type { DatabaseHandle } from "../src/engine/database-handle.js";
import { expectCode, freshPath } from "./helpers.js";

/** The handle behind a database of the synchronous API (not public: for this test only). */
function handleOf(db: object): DatabaseHandle {
  return (db as { db: DatabaseHandle }).db;
}

describe("write hooks", () => {
  it("a refusal before a write writes nothing, and reads go on", () => {
    const db = openSync(freshPath("hooks"));
    db.put("kept", "1");
    const ks = db.keyspace("ks");
    let refuse = true;
    let after = 0;
    handleOf(db).hooks = {
      before: () => {
        if (refuse) throw new ShaleError("BUSY", "shaledb: not now");
      },
      after: () => {
        after++;
      },
    };
    expectCode(() => db.put("a", "1"), "BUSY");
    expectCode(() => db.delete("kept"), "BUSY");
    expectCode(() => db.batch([{ type: "put", key: "b", value: "2" }]), "BUSY");
    expectCode(() => db.batch().put("c", "3").write(), "BUSY");
    expectCode(() => db.deleteRange({ gte: "a", lt: "z" }), "BUSY");
    expectCode(() => ks.put("k", "v"), "BUSY");
    expectCode(() => db.keyspace("new"), "BUSY");
    expectCode(() => db.flush(), "BUSY");
    expectCode(() => db.compact(), "BUSY");
    expectCode(() => db.maintain(), "BUSY");
    expect([...db.keys()]).toEqual(["kept"]);
    expect(ks.count()).toBe(0);
    expect(after).toBe(0);

    const tx = db.transaction();
    tx.put("t", "1");
    expectCode(() => tx.commit(), "BUSY");
    refuse = false;
    tx.commit(); // still open after the refusal
    db.put("a", "1");
    expect([...db.keys()]).toEqual(["a", "kept", "t"]);
    expect(after).toBe(2);
    db.close();
  });
});
