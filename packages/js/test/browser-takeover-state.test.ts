// The pure parts of the browser backend's takeover handling, in Node: keyspace numbers (a page's
// own, remapped by each owner), the applied-write records that make writes exactly-once, and
// the POOL marker that switches an import in one atomic step.
import { describe, expect, it } from "vitest";

import { ShaleError } from "../src/errors.js";
import { PackedOps } from "../src/encoding/packed-ops.js";
import { OP_DELETE, OP_DELETE_RANGE, OP_PUT } from "../src/encoding/wire.js";
import { keyspaceName } from "../src/arguments/checks.js";
import { decodeAppliedRecord, encodeAppliedRecord } from "../src/server/applied-writes.js";
import { ClientKeyspaces } from "../src/server/client-keyspaces.js";
import { KeyspaceNumbers } from "../src/transport/keyspace-numbers.js";
import { MARKER_SIZE, decodeMarker, markerWrite, markerWrites } from "../src/browser/opfs/pool-marker.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function packed(...ops: [op: number, ks: number, key: string, value?: string][]): Uint8Array {
  const out = new PackedOps();
  for (const [op, ks, key, value] of ops) out.add(op, ks, bytes(key), value === undefined ? undefined : bytes(value));
  return out.bytes().slice();
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return (error as ShaleError).code;
  }
}

describe("keyspace numbers", () => {
  it("a page numbers keyspaces by first use and declares them once to each new owner", () => {
    const page = new KeyspaceNumbers();
    expect([page.numberOf("a"), page.numberOf("b"), page.numberOf("a")]).toEqual([1, 2, 1]);
    page.opened("a", "owner-1");
    expect(page.declarationsFor("owner-1")).toEqual([[1, "a"]]);
    expect(page.declarationsFor("owner-1")).toBeUndefined();
    page.opened("b", "owner-1"); // bound by that owner's own keyspace request
    expect(page.declarationsFor("owner-1")).toBeUndefined();
    expect(page.declarationsFor("owner-2")).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    expect(page.declarationsFor("owner-2")).toBeUndefined();
  });

  it("an owner maps a client's numbers to its engine's, in packed batches too, without touching the input", () => {
    const client = new ClientKeyspaces();
    client.bind(1, 2);
    client.bind(2, 1);
    const input = packed([OP_PUT, 1, "k", "v"], [OP_DELETE, 2, "d"], [OP_DELETE_RANGE, 0, "a", "z"]);
    const copy = input.slice();
    const out = client.remap(input);
    expect(input).toEqual(copy);
    expect(out).toEqual(packed([OP_PUT, 2, "k", "v"], [OP_DELETE, 1, "d"], [OP_DELETE_RANGE, 0, "a", "z"]));
    expect([client.engine(0), client.engine(1), client.engine(2)]).toEqual([0, 2, 1]);
  });

  it("identical numbers need no copy; unknown numbers, ops and truncated batches are INVALID_ARGUMENT", () => {
    const identity = new ClientKeyspaces();
    identity.bind(1, 1);
    const input = packed([OP_PUT, 1, "k", "v"]);
    expect(identity.remap(input)).toBe(input);
    const client = new ClientKeyspaces();
    client.bind(1, 3);
    expect(codeOf(() => client.remap(packed([OP_PUT, 7, "k", "v"])))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => client.remap(packed([9, 1, "k"])))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => client.remap(packed([OP_PUT, 1, "k", "v"]).subarray(0, 12)))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => client.engine(5))).toBe("INVALID_ARGUMENT");
    client.fail(4, new ShaleError("POISONED", "no"));
    expect(codeOf(() => client.engine(4))).toBe("POISONED");
  });

  it("names starting with NUL are reserved", () => {
    expect(codeOf(() => keyspaceName("\u0000shaledb:applied-writes"))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => keyspaceName("a\u0000"))).toBeUndefined();
  });
});

describe("applied-write records", () => {
  it("round-trip, and anything else decodes as no record", () => {
    const record = { applied: 2 ** 40 + 3, rejected: [5, 2 ** 35] };
    const encoded = encodeAppliedRecord(record);
    expect(encoded.length).toBe(13 + 16);
    expect(encoded[0]).toBe(1);
    expect(decodeAppliedRecord(encoded)).toEqual(record);
    expect(decodeAppliedRecord(encodeAppliedRecord({ applied: 7, rejected: [] }))).toEqual({ applied: 7, rejected: [] });
    expect(decodeAppliedRecord(encoded.subarray(0, 20))).toBeUndefined();
    expect(decodeAppliedRecord(new Uint8Array([2, ...encoded.subarray(1)]))).toBeUndefined();
  });
});

describe("the POOL marker", () => {
  /** Applies `markerWrites` to `file` (a marker's bytes). */
  function write(file: Uint8Array, next: number): Uint8Array {
    const out = new Uint8Array(Math.max(file.length, MARKER_SIZE));
    out.set(file);
    for (const { at, bytes: copy } of markerWrites(decodeMarker(file), next)) out.set(copy, at);
    return out;
  }

  it("names pool 0 when absent or unreadable, and the newest valid copy after writes", () => {
    expect(decodeMarker(new Uint8Array()).live).toBe(0);
    expect(decodeMarker(new Uint8Array(MARKER_SIZE).fill(7)).live).toBe(0);
    let file = write(new Uint8Array(), 1);
    expect(decodeMarker(file)).toEqual({ copies: [1, 1], live: 1 }); // the first write fills both
    file = write(file, 2);
    expect(decodeMarker(file)).toEqual({ copies: [2, 1], live: 2 });
    file = write(file, 3);
    expect(decodeMarker(file)).toEqual({ copies: [2, 3], live: 3 });
  });

  it("a torn write leaves the previous pool live; damage to one copy of the first write loses nothing", () => {
    const first = write(new Uint8Array(), 1);
    const rotten = first.slice();
    rotten[5] = (rotten[5] as number) ^ 1;
    expect(decodeMarker(rotten).live).toBe(1);
    const file = write(first, 2); // copies [2, 1]
    const { at, bytes: copy } = markerWrite(decodeMarker(file), 3);
    expect(at).toBe(32); // the copy not holding the live pool
    const torn = file.slice();
    torn.set(copy.subarray(0, 20), at); // cut short
    expect(decodeMarker(torn).live).toBe(2);
    const firstTorn = new Uint8Array(MARKER_SIZE);
    firstTorn.set((markerWrites(decodeMarker(new Uint8Array()), 1)[0] as { bytes: Uint8Array }).bytes.subarray(0, 20), 0);
    expect(decodeMarker(firstTorn).live).toBe(0); // the first switch never happened
  });

  it("refuses to go back to an older pool", () => {
    expect(() => markerWrite(decodeMarker(write(new Uint8Array(), 4)), 4)).toThrow(RangeError);
  });
});
