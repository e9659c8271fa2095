/**
 * The arguments of `watch()` and `liveQuery()`, checked once for both APIs: the ranges (their
 * bounds encoded by the keyspace's key codec), the listener or read function, and the options.
 *
 * @module
 */
import { byteBounds, type ByteBounds, type RangeBytes } from "../encoding/bounds.js";
import type { Codec } from "../encoding/codec.js";
import { invalidArgument } from "../errors.js";
import type { WatchEvent } from "../types/watch.js";
import { describe, optionsObject } from "./checks.js";

const RANGE_BOUNDS = ["gt", "gte", "lt", "lte", "prefix"] as const;

/** What `watch()` was asked, checked. */
export interface CheckedWatch {
  /** The ranges' bounds as bytes, as they cross to a server. */
  ranges: RangeBytes[];
  listener: ((event: WatchEvent<unknown, unknown>) => void) | undefined;
  values: boolean;
  coalesce: "frame" | "tick" | undefined;
  signal: AbortSignal | undefined;
}

/** `watch(ranges, options)` or `watch(ranges, listener, options)`, checked. */
export function watchArguments(keys: Codec<unknown>, ranges: unknown, second: unknown, third: unknown): CheckedWatch {
  const listener = typeof second === "function" ? (second as CheckedWatch["listener"]) : undefined;
  if (listener === undefined && third !== undefined) {
    throw invalidArgument(`watch()'s listener must be a function, got ${describe(second)}`);
  }
  const o = optionsObject(listener === undefined ? second : third, ["values", "coalesce", "signal"], "watch options");
  return { ranges: watchRanges(keys, ranges), listener, values: booleanOption(o, "values"), ...timing(o) };
}

/** What `liveQuery()` was asked, checked. */
export interface CheckedLiveQuery<T> {
  ranges: RangeBytes[];
  read: () => T | Promise<T>;
  coalesce: "frame" | "tick" | undefined;
  signal: AbortSignal | undefined;
}

/** `liveQuery(ranges, read, options)`, checked; `coalesce` defaults to `"frame"`. */
export function liveQueryArguments<T>(keys: Codec<unknown>, ranges: unknown, read: unknown, options: unknown): CheckedLiveQuery<T> {
  if (typeof read !== "function") {
    throw invalidArgument(`liveQuery()'s read must be a function, got ${describe(read)}`);
  }
  const o = optionsObject(options, ["coalesce", "signal"], "liveQuery options");
  const { coalesce, signal } = timing(o);
  return { ranges: watchRanges(keys, ranges), read: read as () => T, coalesce: coalesce ?? "frame", signal };
}

/** The bounds of `ranges` in bytes (absent: one range, every key). */
function watchRanges(keys: Codec<unknown>, ranges: unknown): RangeBytes[] {
  if (ranges === undefined) {
    return [{}];
  }
  const list: unknown[] = Array.isArray(ranges) ? ranges : [ranges];
  if (list.length === 0) {
    throw invalidArgument("watch ranges must hold at least one range ({} for every key)");
  }
  return list.map((range, i) => {
    const what = Array.isArray(ranges) ? `ranges[${i}]` : "range";
    if (range === undefined) {
      throw invalidArgument(`${what} must be an object, got undefined`);
    }
    const o = optionsObject(range, RANGE_BOUNDS, what);
    const out: RangeBytes = {};
    for (const bound of RANGE_BOUNDS) {
      if (o[bound] !== undefined) out[bound] = keys.encode(o[bound], `${what}.${bound}`).slice();
    }
    return out;
  });
}

/** The bounds of checked ranges, for matching. */
export function rangeBounds(ranges: readonly RangeBytes[]): ByteBounds[] {
  return ranges.map(byteBounds);
}

function booleanOption(o: Readonly<Record<string, unknown>>, name: string): boolean {
  const v = o[name];
  if (v !== undefined && typeof v !== "boolean") {
    throw invalidArgument(`options.${name} must be a boolean, got ${describe(v)}`);
  }
  return v === true;
}

function timing(o: Readonly<Record<string, unknown>>): Pick<CheckedWatch, "coalesce" | "signal"> {
  const coalesce = o["coalesce"];
  if (coalesce !== undefined && coalesce !== "frame" && coalesce !== "tick") {
    throw invalidArgument(`options.coalesce must be "frame" or "tick", got ${describe(coalesce)}`);
  }
  const signal = o["signal"];
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw invalidArgument(`options.signal must be an AbortSignal, got ${describe(signal)}`);
  }
  return { coalesce, signal };
}
