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

/** Range bounds already in bytes (a watch's ranges as they cross). */
export interface RangeBytes {
  gt?: Uint8Array | undefined;
  gte?: Uint8Array | undefined;
  lt?: Uint8Array | undefined;
  lte?: Uint8Array | undefined;
  prefix?: Uint8Array | undefined;
}

/** The bounds of `options` in bytes; a key of the wrong type is `INVALID_ARGUMENT`. */
export function encodeBounds(options: IteratorOptions<unknown>, keys: Codec<unknown>): ByteBounds {
  const enc = (value: unknown, name: string): Uint8Array | undefined =>
    value === undefined ? undefined : keys.encode(value, `options.${name}`);
  return byteBounds({
    gt: enc(options.gt, "gt"),
    gte: enc(options.gte, "gte"),
    lt: enc(options.lt, "lt"),
    lte: enc(options.lte, "lte"),
    prefix: enc(options.prefix, "prefix"),
  });
}

/** {@link ByteBounds} of bounds in bytes (the inclusive bound wins, module notes). */
export function byteBounds(range: RangeBytes): ByteBounds {
  const { gt, gte, lt, lte, prefix } = range;
  const lowerInclusive = gte !== undefined || gt === undefined;
  const lower = lowerInclusive ? gte : gt;
  const upperInclusive = lte !== undefined || lt === undefined;
  const upper = upperInclusive ? lte : lt;
  return { lower, lowerInclusive, upper, upperInclusive, prefix };
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

/** Whether `key` lies within `bounds`. */
export function keyInBounds(key: Uint8Array, bounds: ByteBounds): boolean {
  const { lower, upper, prefix } = bounds;
  if (lower !== undefined) {
    const c = compareBytes(key, lower);
    if (c < 0 || (c === 0 && !bounds.lowerInclusive)) return false;
  }
  if (upper !== undefined) {
    const c = compareBytes(key, upper);
    if (c > 0 || (c === 0 && !bounds.upperInclusive)) return false;
  }
  return prefix === undefined || hasPrefix(key, prefix);
}

/**
 * Whether the keys `[start, end)` (an empty `end`: to the keyspace's end) may meet `bounds`.
 * Never `false` when they do; `true` for a few empty meetings (`start` just past an exclusive
 * lower bound with no key between), which only costs a watcher a needless wake-up.
 */
export function rangeMeetsBounds(start: Uint8Array, end: Uint8Array, bounds: ByteBounds): boolean {
  let { lower, lowerInclusive, upper, upperInclusive } = bounds;
  const { prefix } = bounds;
  if (prefix !== undefined) {
    if (lower === undefined || compareBytes(prefix, lower) > 0) {
      lower = prefix;
      lowerInclusive = true;
    }
    const past = prefixEnd(prefix);
    if (past !== undefined && (upper === undefined || compareBytes(past, upper) <= 0)) {
      upper = past;
      upperInclusive = false;
    }
  }
  // Some key k with start <= k < end, lower <= k (or <), k <= upper (or <).
  if (upper !== undefined) {
    const c = compareBytes(start, upper);
    if (c > 0 || (c === 0 && !upperInclusive)) return false;
  }
  if (end.length > 0 && lower !== undefined) {
    const c = compareBytes(lower, end);
    if (c >= 0) return false;
  }
  if (lower !== undefined && upper !== undefined) {
    const c = compareBytes(lower, upper);
    if (c > 0 || (c === 0 && !(lowerInclusive && upperInclusive))) return false;
  }
  return true;
}

/** Whether `key` starts with `prefix`. */
export function hasPrefix(key: Uint8Array, prefix: Uint8Array): boolean {
  if (key.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (key[i] !== prefix[i]) return false;
  }
  return true;
}

/** The least key past every key starting with `prefix`; `undefined`: none (all `0xff`). */
export function prefixEnd(prefix: Uint8Array): Uint8Array | undefined {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] !== 0xff) {
      const end = prefix.slice(0, i + 1);
      end[i] = (end[i] as number) + 1;
      return end;
    }
  }
  return undefined;
}
