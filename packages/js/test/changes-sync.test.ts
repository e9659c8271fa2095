// The change feed through the synchronous API (openSync): every committed batch in order with
// keyspace names, meta and time; change cursors that survive a reopen; followers that apply a
// leader's changes; CHANGES_TRUNCATED once the logs of old batches are gone.
import { describe, expect, it } from "vitest";

import { openSync, type Change } from "shaledb";

import { expectCode, freshPath } from "./helpers.js";

const text = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder().decode(bytes));

/** A change as plain text: its ops' type, keyspace, key and value (or end). */
function ops(change: Change): string[] {
  return change.ops.map((op) =>
    op.type === "put"
      ? `put ${op.keyspace} ${text(op.key)}=${text(op.value)}`
      : op.type === "delete"
        ? `delete ${op.keyspace} ${text(op.key)}`
        : `deleteRange ${op.keyspace} ${text(op.start)}..${text(op.end)}`,
  );
}

describe("change feed (synchronous API)", () => {
  it("yields every committed batch in order with keyspace names, meta and time", () => {
    const db = openSync(freshPath("changes"), { changes: {} });
    try {
      const users = db.keyspace("users");
      const before = Date.now();
      db.put("a", "1");
      users.put("u1", "ann");
      db.batch(
        [
          { type: "put", key: "b", value: "2" },
          { type: "delete", key: "a" },
          { type: "put", key: "u2", value: "bob", keyspace: users },
        ],
        { meta: "origin-1" },
      );
      db.batch([{ type: "put", key: "c", value: "3" }], { meta: new Uint8Array([1, 2, 3]) });
      db.deleteRange({ gte: "a", lt: "z" });
      const all = [...db.changes()];
      expect(all.map(ops)).toEqual([
        ["put default a=1"],
        ["put users u1=ann"],
        ["put default b=2", "delete default a", "put users u2=bob"],
        ["put default c=3"],
        ["deleteRange default a..z"],
      ]);
      // Dense sequence numbers (a batch's annotation, its time and meta, takes one too).
      expect(all.map((c) => [c.seq, c.lastSeq])).toEqual([
        [1, 2],
        [3, 4],
        [5, 8],
        [9, 10],
        [11, 12],
      ]);
      expect(text(all[2]?.meta ?? null)).toBe("origin-1");
      expect(all[3]?.meta).toEqual(new Uint8Array([1, 2, 3]));
      expect(all[0]?.meta).toBeNull();
      for (const c of all) {
        expect(c.time).toBeGreaterThanOrEqual(before - 1000);
        expect(c.time).toBeLessThanOrEqual(Date.now() + 1000);
        expect(c.bytes).toBeInstanceOf(Uint8Array);
      }
      expect(db.sequence()).toBe(12);
      // From a sequence number on (a batch starting at or after it), and with a limit.
      expect([...db.changes({ since: 5 })].map((c) => c.seq)).toEqual([5, 9, 11]);
      expect([...db.changes({ since: 6 })].map((c) => c.seq)).toEqual([9, 11]);
      expect([...db.changes({ since: 3, limit: 2 })].map((c) => c.seq)).toEqual([3, 5]);
      expect([...db.changes({ since: 13 })]).toEqual([]);
    } finally {
      db.close();
    }
  });

  it("carries no time when the database was opened without the changes option", () => {
    const db = openSync(freshPath("changes"));
    try {
      db.put("k", "v");
      const [change] = [...db.changes()];
      expect(change?.time).toBeNull();
      expect(ops(change as Change)).toEqual(["put default k=v"]);
    } finally {
      db.close();
    }
  });


  it("decodes a change's ops when first read, and spreading, JSON and structured clones still see them", () => {
    const db = openSync(freshPath("changes"));
    try {
      db.batch([
        { type: "put", key: "a", value: "1" },
        { type: "delete", key: "b" },
      ]);
      db.deleteRange({ gte: "c", lt: "d" });
      const [first, second] = [...db.changes()] as [Change, Change];
      // Not decoded yet: an accessor, replaced by the ops on first read.
      expect(typeof Object.getOwnPropertyDescriptor(first, "ops")?.get).toBe("function");
      expect(ops({ ...first })).toEqual(["put default a=1", "delete default b"]);
      expect(Object.getOwnPropertyDescriptor(first, "ops")?.value).toBe(first.ops);
      expect(JSON.parse(JSON.stringify(second)).ops).toEqual([{ type: "deleteRange", keyspace: "default", start: { 0: 99 }, end: { 0: 100 } }]);
      expect(ops(structuredClone(second))).toEqual(["deleteRange default c..d"]);
      // Assignable like any property of a plain object.
      second.ops = [];
      expect(second.ops).toEqual([]);
      expect(Object.keys(second)).toEqual(["seq", "lastSeq", "time", "meta", "bytes", "ops"]);
    } finally {
      db.close();
    }
  });
  it("reads many batches in chunks, lazily", () => {
    const db = openSync(freshPath("changes"));
    try {
      for (let i = 0; i < 700; i++) db.put(`k${i}`, "v".repeat(100));
      const iterator = db.changes();
      expect(iterator.next().value?.seq).toBe(1);
      const seqs = [...db.changes()].map((c) => c.seq);
      expect(seqs.length).toBe(700);
      expect(seqs.every((s, i) => s === i + 1)).toBe(true);
    } finally {
      db.close();
    }
  });

  it("keeps change cursors across a reopen", () => {
    const path = freshPath("changes");
    let db = openSync(path);
    db.put("a", "1");
    db.put("b", "2");
    expect(db.changeCursor("nats")).toBeUndefined();
    db.ackChanges("nats", 1);
    db.ackChanges("other", 2);
    expect(db.changeCursor("nats")).toBe(1);
    db.close();
    db = openSync(path);
    try {
      expect(db.changeCursor("nats")).toBe(1);
      expect(db.changeCursor("other")).toBe(2);
      expect(db.removeChangeCursor("other")).toBe(true);
      expect(db.removeChangeCursor("other")).toBe(false);
      expect(db.changeCursor("other")).toBeUndefined();
      // A cursor past the database's sequence number is refused.
      expectCode(() => db.ackChanges("nats", 99), "INVALID_ARGUMENT");
    } finally {
      db.close();
    }
  });

  it("a follower applies a leader's changes, skips a re-applied one, refuses a gap and writes", () => {
    const leader = openSync(freshPath("leader"));
    const follower = openSync(freshPath("follower"), { follower: true });
    try {
      const ks = leader.keyspace("items");
      leader.put("a", "1");
      ks.put("x", "y");
      leader.batch([
        { type: "put", key: "b", value: "2" },
        { type: "delete", key: "a" },
      ]);
      const changes = [...leader.changes()];
      // By bytes, then by Change object.
      expect(follower.applyChanges(changes[0]?.bytes as Uint8Array)).toEqual({ applied: true, lastSeq: 1 });
      expect(follower.applyChanges(changes[1] as Change, { expectedSeq: 2 })).toEqual({ applied: true, lastSeq: 2 });
      expect(follower.applyChanges(changes[1] as Change)).toEqual({ applied: false, lastSeq: 2 });
      expect(follower.get("a")).toBe("1");
      expect(follower.keyspace("items").get("x")).toBe("y");
      const gap = expectCode(() => follower.applyChanges(new Uint8Array(changes[2]?.bytes ?? []), { expectedSeq: 9 }), "CHANGE_GAP");
      expect(gap.details).toMatchObject({ expected: 9 });
      follower.applyChanges(changes[2] as Change);
      expect(follower.get("a")).toBeUndefined();
      expect(follower.get("b")).toBe("2");
      expect(follower.sequence()).toBe(leader.sequence());
      // Issue 22: a change applied before resolves with the follower's sequence number (where
      // it stands), not the change's last, as the type and README say.
      expect(follower.applyChanges(changes[0] as Change)).toEqual({ applied: false, lastSeq: follower.sequence() });
      expect(follower.sequence()).toBeGreaterThan(changes[0]?.lastSeq as number);
      // Writes other than applyChanges are refused.
      expectCode(() => follower.put("c", "3"), "READ_ONLY");
      expectCode(() => follower.batch([{ type: "put", key: "c", value: "3" }]), "READ_ONLY");
      // A change that skips one is a gap.
      leader.put("d", "4");
      leader.put("e", "5");
      const [, last] = [...leader.changes({ since: 5 })];
      const error = expectCode(() => follower.applyChanges(last as Change), "CHANGE_GAP");
      expect(error.details).toMatchObject({ expected: 5, got: 6 });
      // A leader is not a follower.
      expectCode(() => leader.applyChanges(changes[0] as Change), "INVALID_ARGUMENT");
    } finally {
      leader.close();
      follower.close();
    }
  });

  it("a follower opened from a checkpoint continues from its sequence number", () => {
    const leader = openSync(freshPath("leader"));
    try {
      leader.put("a", "1");
      leader.put("b", "2");
      const copy = freshPath("checkpoint");
      const { seq } = leader.checkpoint(copy);
      expect(seq).toBe(2);
      leader.put("c", "3");
      const follower = openSync(copy, { follower: true });
      try {
        expect(follower.sequence()).toBe(2);
        for (const change of leader.changes({ since: seq + 1 })) follower.applyChanges(change);
        expect(follower.get("c")).toBe("3");
        expect(follower.sequence()).toBe(3);
      } finally {
        follower.close();
      }
    } finally {
      leader.close();
    }
  });

  it("is CHANGES_TRUNCATED below the oldest batch kept", () => {
    const db = openSync(freshPath("changes"), { memtableSize: 64 * 1024, autoMaintenance: false });
    try {
      for (let i = 0; i < 200; i++) db.put(`k${i}`, "v".repeat(1000));
      db.flush();
      while (db.maintain()) {
        // Flush everything, so the old logs go.
      }
      db.put("last", "x");
      const error = expectCode(() => [...db.changes({ since: 1 })], "CHANGES_TRUNCATED");
      expect(error.details?.["oldest"]).toBeGreaterThan(1);
      // From the oldest batch kept on, the feed works.
      const oldest = error.details?.["oldest"] as number;
      expect([...db.changes({ since: oldest })].at(-1)?.lastSeq).toBe(db.sequence());
    } finally {
      db.close();
    }
  });

  it("a change cursor keeps the logs its reader still needs", () => {
    const db = openSync(freshPath("changes"), { memtableSize: 64 * 1024, autoMaintenance: false });
    try {
      db.put("first", "x");
      db.ackChanges("reader", 0);
      for (let i = 0; i < 200; i++) db.put(`k${i}`, "v".repeat(1000));
      db.flush();
      while (db.maintain()) {
        // Flush everything.
      }
      expect([...db.changes({ since: 1 })].length).toBe(201);
      db.removeChangeCursor("reader");
      db.flush();
      expectCode(() => [...db.changes({ since: 1 })], "CHANGES_TRUNCATED");
    } finally {
      db.close();
    }
  });

  it("retention by age keeps every batch through reopens, flushes and compactions", () => {
    // Issue 22: with an hour's retention, the fifth open found the first rounds' logs deleted
    // (the WebAssembly clock was set after the open, whose deletion pass measured from 0).
    const path = freshPath("changes");
    for (let round = 0; round < 6; round++) {
      const db = openSync(path, { changes: { retainMs: 3_600_000 }, autoMaintenance: false });
      try {
        for (let i = 0; i < 5; i++) db.put(`k${i}`, `v${round}`);
        db.flush();
        while (db.maintain()) {
          // Flush and compact everything, as idle maintenance does.
        }
        const puts = [...db.changes({ since: 1 })].flatMap((c) => c.ops).length;
        expect(puts).toBe(5 * (round + 1));
      } finally {
        db.close();
      }
    }
  });
});
