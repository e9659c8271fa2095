/**
 * Range options in bytes: the bounds an iterator or count walks. Used by the engine-side
 * iterators and by the browser page, which encodes ranges before they cross to its worker.
 *
 * @module
 */
import type { Codec } from "./codec.js";
import type { IteratorOptions } from "../types.js";

// The worker's executor checks `reverse` of ranges from other tabs with the public check.
export { checkLimit, checkReverse } from "../arguments/checks.js";

/**
 * A range in bytes, plus a prefix. When both `gt` and `gte` are given `gte` wins, and `lte` wins
 * over `lt` (the Level rule: the inclusive bound replaces the exclusive one, whichever is tighter).
 */
export interface ByteBounds {
  lower: Uint8Array | undefined;
  lowerInclusive: boolean;
  upper: Uint8Array | undefined;
  upperInclusive: boolean;
  prefix: Uint8Array | undefined;
}

/** The bounds of `options` in bytes; a key of the wrong type is `INVALID_ARGUMENT`. */
export function encodeBounds(options: IteratorOptions<unknown>, keys: Codec<unknown>): ByteBounds {
  const enc = (value: unknown, name: string): Uint8Array | undefined =>
    value === undefined ? undefined : keys.encode(value, `options.${name}`);
  const gt = enc(options.gt, "gt");
  const gte = enc(options.gte, "gte");
  const lt = enc(options.lt, "lt");
  const lte = enc(options.lte, "lte");
  const lowerInclusive = gte !== undefined || gt === undefined;
  const lower = lowerInclusive ? gte : gt;
  const upperInclusive = lte !== undefined || lt === undefined;
  const upper = upperInclusive ? lte : lt;
  return { lower, lowerInclusive, upper, upperInclusive, prefix: enc(options.prefix, "prefix") };
}

/** Whether the encoded range `[gte, lt)` holds no key: `deleteRange` of it is a no-op. */
export function isEmptyRange(gte: Uint8Array, lt: Uint8Array): boolean {
  return compareBytes(gte, lt) >= 0;
}

/** Byte order, the order of keys. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) {
      return d;
    }
  }
  return a.length - b.length;
}
