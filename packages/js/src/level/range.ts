/**
 * Level's range options in ShaleDB's terms: one lower and one upper bound (the Level rule: `gte`
 * wins over `gt`, `lte` over `lt`), narrowed by a seek target.
 *
 * @module
 */
import { compareBytes } from "../encoding/bounds.js";

/** A bound: a key and whether it is included. */
export interface Bound {
  key: Uint8Array;
  inclusive: boolean;
}

/** A range in keys already encoded to bytes by abstract-level (format `view`). */
export interface ByteRange {
  lower: Bound | undefined;
  upper: Bound | undefined;
}

/** The range options abstract-level hands to the private API, encoded. */
export interface LevelRangeOptions {
  gt?: Uint8Array;
  gte?: Uint8Array;
  lt?: Uint8Array;
  lte?: Uint8Array;
}

/** `options`' bounds, one per side (`gte` over `gt`, `lte` over `lt`). */
export function levelRange(options: LevelRangeOptions): ByteRange {
  const lower =
    options.gte !== undefined
      ? { key: options.gte, inclusive: true }
      : options.gt !== undefined
        ? { key: options.gt, inclusive: false }
        : undefined;
  const upper =
    options.lte !== undefined
      ? { key: options.lte, inclusive: true }
      : options.lt !== undefined
        ? { key: options.lt, inclusive: false }
        : undefined;
  return { lower, upper };
}

/**
 * `range` after a seek to `target`: going forward, keys `>= target` (and in `range`); in
 * reverse, keys `<= target`. The tighter bound of each side is kept.
 */
export function seekRange(range: ByteRange, target: Uint8Array, reverse: boolean): ByteRange {
  const seek: Bound = { key: target, inclusive: true };
  if (reverse) {
    const u = range.upper;
    const keep = u !== undefined && (compareBytes(u.key, target) < 0 || (compareBytes(u.key, target) === 0 && !u.inclusive));
    return { lower: range.lower, upper: keep ? u : seek };
  }
  const l = range.lower;
  const keep = l !== undefined && (compareBytes(l.key, target) > 0 || (compareBytes(l.key, target) === 0 && !l.inclusive));
  return { lower: keep ? l : seek, upper: range.upper };
}

/** `range` as ShaleDB's iterator options. */
export function shaleBounds(range: ByteRange): { gt?: Uint8Array; gte?: Uint8Array; lt?: Uint8Array; lte?: Uint8Array } {
  const o: { gt?: Uint8Array; gte?: Uint8Array; lt?: Uint8Array; lte?: Uint8Array } = {};
  if (range.lower !== undefined) {
    o[range.lower.inclusive ? "gte" : "gt"] = range.lower.key;
  }
  if (range.upper !== undefined) {
    o[range.upper.inclusive ? "lte" : "lt"] = range.upper.key;
  }
  return o;
}

/** The key right after `key` in byte order (`key` + a zero byte): turns an inclusive end exclusive. */
export function successor(key: Uint8Array): Uint8Array {
  const next = new Uint8Array(key.length + 1);
  next.set(key);
  return next;
}
