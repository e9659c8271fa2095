// The Promise API (src/api/, the browser page's and Node's) checks its arguments with the same
// module as the synchronous API (src/arguments/checks.ts), before anything crosses to the
// server. Run here over a fake transport that records what would cross: a bad argument is
// INVALID_ARGUMENT and sends nothing; an array batch's `keyspace` field packs that keyspace's
// number.
import { describe, expect, it } from "vitest";

import { PromiseDatabase } from "../src/api/database.js";
import { PromiseStore } from "../src/api/store.js";
import type { Transport } from "../src/transport/transport.js";
import { keyCodec, valueCodec } from "../src/encoding/codec.js";
import { ShaleError } from "../src/errors.js";
import type { Database, Keyspace, KeyspaceRef } from "../src/types.js";

/** `value` typed as `T`: how these tests pass what the types forbid. */
function bad<T>(value: unknown): T {
  return value as T;
}

/** A connection that answers every request with `undefined` (ids 1 for opens, 7 for keyspaces) and records it. */
function fakeConnection(): { connection: Transport; sent: [string, unknown[]][] } {
  const sent: [string, unknown[]][] = [];
  const fake = {
    name: "fake",
    closed: false,
    request(op: string, args: unknown[]): Promise<unknown> {
      sent.push([op, args]);
      return Promise.resolve(op === "keyspace" ? 7 : undefined);
    },
    requestServed(op: string, args: unknown[]): Promise<[unknown, string]> {
      sent.push([op, args]);
      return Promise.resolve([1, "owner"]);
    },
    /** The page numbers its keyspaces itself; this fake gives every one number 7. */
    openKeyspace(name: string): Promise<number> {
      sent.push(["keyspace", [name]]);
      return Promise.resolve(7);
    },
  };
  return { connection: fake as unknown as Transport, sent };
}

function page(): { db: Database<string, string>; sent: [string, unknown[]][] } {
  const { connection, sent } = fakeConnection();
  const db = new PromiseDatabase(connection, keyCodec("utf8"), valueCodec("utf8"));
  return { db: db as unknown as Database<string, string>, sent };
}

function expectInvalid(f: () => unknown): void {
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ShaleError);
  expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
}

async function expectRejectsInvalid(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ShaleError);
  expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
}

describe("the page API rejects bad arguments before anything crosses to the worker", () => {
  it("null keyspace arguments of batch and transaction methods, batch().deleteRange(null), compact(null)", async () => {
    const { db, sent } = page();
    const none = bad<KeyspaceRef<string, string>>(null);
    expectInvalid(() => db.batch().put("k", "v", none));
    expectInvalid(() => db.batch().delete("k", none));
    expectInvalid(() => db.batch().deleteRange({ gte: "a", lt: "b" }, none));
    expectInvalid(() => db.batch().deleteRange(bad<{ gte: string; lt: string }>(null)));
    const tx = await db.transaction();
    sent.length = 0;
    await expectRejectsInvalid(tx.get("k", none));
    expectInvalid(() => tx.put("k", "v", none));
    expectInvalid(() => tx.delete("k", none));
    await expectRejectsInvalid(db.compact(bad<object>(null)));
    expect(sent).toEqual([]);
  });

  it("transact(42), transact(fn, null) and retries: NaN reject without beginning a transaction", async () => {
    const { db, sent } = page();
    await expectRejectsInvalid(db.transact(bad<() => Promise<void>>(42)));
    await expectRejectsInvalid(db.transact(async () => undefined, bad<{ retries: number }>(null)));
    await expectRejectsInvalid(db.transact(async () => undefined, { retries: NaN }));
    expect(sent).toEqual([]);
  });

  it("options that are not objects, lone surrogates, a bad budget or checkpoint name", async () => {
    const { db, sent } = page();
    await expectRejectsInvalid(db.get("k", bad<undefined>(null)));
    await expectRejectsInvalid(db.has("k", bad<undefined>("latest")));
    await expectRejectsInvalid(db.getMany(["k"], bad<undefined>(null)));
    await expectRejectsInvalid(db.put("k", "v", bad<undefined>(null)));
    expectInvalid(() => db.iterator(bad<undefined>(null)));
    await expectRejectsInvalid(db.count(bad<undefined>(null)));
    await expectRejectsInvalid(db.put("\uD800", "v"));
    await expectRejectsInvalid(db.put("k", "\uDC00"));
    await expectRejectsInvalid(db.keyspace("ks\uD800"));
    await expectRejectsInvalid(db.keyspace("ks", bad<object>({ keyEncoding: null })));
    await expectRejectsInvalid(db.maintain(NaN));
    await expectRejectsInvalid(db.checkpoint(bad<string>(null)));
    await expectRejectsInvalid(db.batch([], bad<{ sync: boolean }>({ sync: "yes" })));
    expect(sent).toEqual([]);
  });

  it("an array batch operation's keyspace field packs that keyspace's number; a bad one is INVALID_ARGUMENT", async () => {
    const { db, sent } = page();
    const ks = (await db.keyspace("events")) as Keyspace<string, string>;
    expect(ks).toBeInstanceOf(PromiseStore);
    sent.length = 0;
    await db.batch([
      { type: "put", key: "a", value: "1", keyspace: ks },
      { type: "delete", key: "b" },
    ]);
    expect(sent.map(([op]) => op)).toEqual(["write"]);
    const bytes = (sent[0]?.[1] as [Uint8Array, boolean])[0];
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // Operation 1: op byte 0 (put), keyspace u32 LE; then key and value fields.
    expect([bytes[0], view.getUint32(1, true)]).toEqual([0, 7]);
    const second = 5 + 4 + 1 + 4 + 1; // after "a" and "1"
    expect([bytes[second], view.getUint32(second + 1, true)]).toEqual([1, 0]);
    sent.length = 0;
    for (const keyspace of [null, "events", {}]) {
      await expectRejectsInvalid(
        db.batch([bad<{ type: "put"; key: string; value: string }>({ type: "put", key: "a", value: "1", keyspace })]),
      );
    }
    expect(sent).toEqual([]);
  });
});
