// Round-trips records through the real WebAssembly build of the core, loaded the way a Node user
// loads it: through the package's exports map (`shaledb` -> dist/node.js -> wasm/).
import { beforeAll, describe, expect, it } from "vitest";

import { ShaleError, init, version } from "shaledb";
import {
  type Compression,
  type RecordValue,
  type RecordioFormat,
  recordioCompressions,
  recordioRoundTrip,
} from "shaledb/testing";

// gzip is an optional codec of the core, which the package's module leaves out; the native tests
// (crates/core) cover it. Every codec the module reports round-trips; the others are
// UNSUPPORTED_COMPRESSION (below).
const compressions: Compression[] = ["none", "snappy", "gzip"];
const formats: RecordioFormat[] = ["shale", "go-v4"];

function bytes(...values: number[]): Uint8Array {
  return Uint8Array.from(values);
}

/** Deterministic pseudo-random bytes (xorshift32), so failures are reproducible. */
function noise(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** The first index where `a` and `b` differ, or -1 if they are equal. (Much faster than a deep
 * `toEqual` on large arrays, and it still says where they differ.) */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) {
      return i;
    }
  }
  return a.length === b.length ? -1 : n;
}

const records: RecordValue[] = [
  new TextEncoder().encode("hello, shale"),
  null,
  new Uint8Array(0),
  bytes(0, 1, 2, 0xfe, 0xff),
  Uint8Array.from({ length: 256 }, (_, i) => i),
  null,
  new Uint8Array(10_000).fill(0x61), // compresses well
  noise(70_000, 42), // does not; larger than one 64 KiB block
  new Uint8Array(0),
];

beforeAll(async () => {
  await init();
});

describe("recordio round trip through the wasm core", () => {
  it("reports the core's version", () => {
    expect(version()).toMatch(/^\d+\.\d+\.\d+/);
  });

  for (const format of formats) {
    for (const compression of compressions) {
      // (Node loads the module on first use, so the list is known while the tests are collected.)
      const missing = !recordioCompressions().includes(compression);
      it.skipIf(missing)(`keeps nil, empty and binary records (${format}, ${compression})`, () => {
        const out = recordioRoundTrip(records, { compression, format });
        expect(out).toHaveLength(records.length);
        out.forEach((record, i) => {
          const expected = records[i];
          if (expected === null || expected === undefined) {
            expect(record, `record ${i}`).toBeNull();
          } else {
            expect(record, `record ${i}`).toBeInstanceOf(Uint8Array);
            expect(firstDifference(record as Uint8Array, expected), `record ${i}`).toBe(-1);
          }
        });
      });
    }
  }

  it("reports the codecs it has: none and snappy always, gzip left out of the package's build", () => {
    expect(recordioCompressions()).toEqual(["none", "snappy"]);
  });

  it("round-trips an empty file", () => {
    expect(recordioRoundTrip([])).toEqual([]);
  });

  it("defaults to the shale format without compression", () => {
    expect(recordioRoundTrip([bytes(7), null])).toEqual([bytes(7), null]);
  });
});

describe("errors", () => {
  function thrown(call: () => unknown): unknown {
    try {
      call();
    } catch (error) {
      return error;
    }
    throw new Error("expected the call to throw");
  }

  it("an unknown compression is a ShaleError with code INVALID_ARGUMENT", () => {
    const error = thrown(() =>
      recordioRoundTrip([bytes(1)], { compression: "zstd" as Compression }),
    );
    expect(error).toBeInstanceOf(ShaleError);
    expect(error).toBeInstanceOf(Error);
    expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
    expect((error as ShaleError).message).toContain("zstd");
    expect((error as ShaleError).name).toBe("ShaleError");
  });

  it("an unknown format is a ShaleError with code INVALID_ARGUMENT", () => {
    const error = thrown(() =>
      recordioRoundTrip([bytes(1)], { format: "go-v9" as RecordioFormat }),
    );
    expect(error).toBeInstanceOf(ShaleError);
    expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
  });

  it("a record that is not bytes is a ShaleError with code INVALID_ARGUMENT", () => {
    const error = thrown(() =>
      recordioRoundTrip(["text" as unknown as Uint8Array]),
    );
    expect(error).toBeInstanceOf(ShaleError);
    expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
  });

  for (const format of formats) {
    it(`a compression the module lacks is a ShaleError with code UNSUPPORTED_COMPRESSION (${format})`, () => {
      const lacking = compressions.filter((c) => !recordioCompressions().includes(c));
      expect(lacking).toEqual(["gzip"]);
      for (const compression of lacking) {
        const error = thrown(() => recordioRoundTrip([bytes(1)], { compression, format }));
        expect(error).toBeInstanceOf(ShaleError);
        expect((error as ShaleError).code).toBe("UNSUPPORTED_COMPRESSION");
        expect((error as ShaleError).message).toContain(compression);
      }
    });
  }

  it("the module keeps working after an error", () => {
    expect(recordioRoundTrip([bytes(3)])).toEqual([bytes(3)]);
  });
});
