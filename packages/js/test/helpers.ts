// Shared helpers of the API tests: temporary directories, typed-error assertions, a seeded PRNG,
// byte helpers and file damage.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, expect } from "vitest";

import { ShaleError, type ShaleErrorCode } from "shaledb";

const created: string[] = [];

afterAll(() => {
  for (const dir of created.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh directory under the OS temp folder, removed after the test file. */
export function tempDir(label = "db"): string {
  const dir = mkdtempSync(join(tmpdir(), `shaledb-${label}-`));
  created.push(dir);
  return dir;
}

/** A path inside a fresh temp directory that does not exist yet. */
export function freshPath(label = "db"): string {
  return join(tempDir(label), "db");
}

/** The error `fn` throws (fails the test if it returns). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  expect.fail("expected the call to throw");
}

/** Asserts that `fn` throws a ShaleError with `code`; returns it. */
export function expectCode(fn: () => unknown, code: ShaleErrorCode): ShaleError {
  const error = thrown(fn);
  expect(error, String(error)).toBeInstanceOf(ShaleError);
  expect((error as ShaleError).code, (error as ShaleError).message).toBe(code);
  return error as ShaleError;
}

/** Asserts that `promise` rejects with a ShaleError with `code`; returns it. */
export async function expectRejects(
  promise: Promise<unknown>,
  code: ShaleErrorCode,
): Promise<ShaleError> {
  let error: unknown;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  expect(error, "expected the promise to reject").toBeDefined();
  expect(error, String(error)).toBeInstanceOf(ShaleError);
  expect((error as ShaleError).code, (error as ShaleError).message).toBe(code);
  return error as ShaleError;
}

/** A small seeded PRNG (mulberry32): the same seed gives the same run. */
export class Rng {
  #state: number;

  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) {
      throw new Error("pick from an empty array");
    }
    return item;
  }

  /** `n` random bytes. */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = this.int(0, 255);
    }
    return out;
  }
}

const encoder = new TextEncoder();

/** The UTF-8 bytes of `s`. */
export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}

/** Byte order: negative, 0 or positive. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) {
      return d;
    }
  }
  return a.length - b.length;
}

/** Bytes as lowercase hex (readable in failure messages). */
export function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) {
    s += b.toString(16).padStart(2, "0");
  }
  return s;
}

/** Bytes from a string of numbers (`bytes(1, 2, 3)`). */
export function bytes(...values: number[]): Uint8Array {
  return Uint8Array.from(values);
}

/** The names in `dir` matching `pattern`, sorted. */
export function filesMatching(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir)
    .filter((name) => pattern.test(name))
    .sort();
}

/** Inverts the byte at `offset` of file `path` (negative: from the end). */
export function flipByte(path: string, offset: number): void {
  const data = readFileSync(path);
  const at = offset < 0 ? data.length + offset : offset;
  if (at < 0 || at >= data.length) {
    throw new Error(`offset ${offset} is outside ${path} (${data.length} bytes)`);
  }
  data[at] = (data[at] ?? 0) ^ 0xff;
  writeFileSync(path, data);
}

/** Symbol.dispose / Symbol.asyncDispose, where this Node version has them. */
export const disposeSymbol: symbol | undefined = (Symbol as { dispose?: symbol }).dispose;
export const asyncDisposeSymbol: symbol | undefined = (Symbol as { asyncDispose?: symbol })
  .asyncDispose;
