/**
 * Checks of the arguments of requests as they arrive at a server (`./row.ts`): each one a
 * function that returns its value typed, or throws `INVALID_ARGUMENT` naming it. The Promise API
 * checked the caller's arguments before sending (`../../arguments/`); these keep a malformed
 * message (a bug, another package release) from reaching the engine as anything but a typed
 * error. Each request's argument types are derived from its checks.
 *
 * @module
 */
import { isWellFormed } from "../../arguments/checks.js";
import { invalidArgument, type ShaleErrorCode } from "../../errors.js";
import type { RangeBytes } from "../../encoding/bounds.js";
import type { IterationMode } from "../../encoding/entry-batch.js";
import { READ_PEEK, type ReadMode } from "../../encoding/wire.js";
import type { WireQueueOptions } from "../../arguments/queue-options.js";
import type { WireFrom, WireTopicOptions } from "../../arguments/topic-options.js";

/** A check of one argument: the value typed, or `INVALID_ARGUMENT` naming `what`. */
export type Check<T> = (value: unknown, what: string) => T;

function fail(what: string, expected: string): never {
  throw invalidArgument(`${what} must be ${expected}`);
}

/** A whole number, possibly negative (`-1` often means "none"). */
export const int: Check<number> = (v, what) => (Number.isSafeInteger(v) ? (v as number) : fail(what, "a whole number"));

/** A whole number from 0. */
export const count: Check<number> = (v, what) =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fail(what, "a whole number from 0");

/** Any number but NaN. */
export const num: Check<number> = (v, what) =>
  typeof v === "number" && !Number.isNaN(v) ? v : fail(what, "a number");

export const bool: Check<boolean> = (v, what) => (typeof v === "boolean" ? v : fail(what, "a boolean"));

export const str: Check<string> = (v, what) => (typeof v === "string" ? v : fail(what, "a string"));

export const bytes: Check<Uint8Array> = (v, what) => (v instanceof Uint8Array ? v : fail(what, "a Uint8Array"));

/**
 * A key or value as the Promise API sends it: bytes, or the UTF-8 text a text codec checked
 * (`packedForm`), which the server writes straight into the engine's memory.
 */
export const bytesOrText: Check<Uint8Array | string> = (v, what) =>
  v instanceof Uint8Array || (typeof v === "string" && isWellFormed(v))
    ? v
    : fail(what, "a Uint8Array or well-formed text");

export const floats: Check<Float64Array> = (v, what) =>
  v instanceof Float64Array ? v : fail(what, "a Float64Array");

/** `check`, or `undefined`. */
export function optional<T>(check: Check<T>): Check<T | undefined> {
  return (v, what) => (v === undefined ? undefined : check(v, what));
}

/** An array of `check`s. */
export function list<T>(check: Check<T>): Check<T[]> {
  return (v, what) => {
    if (!Array.isArray(v)) fail(what, "an array");
    return (v as unknown[]).map((item, i) => check(item, `${what}[${i}]`));
  };
}

const MODES: ReadonlySet<string> = new Set(["entries", "keys", "values", "count"]);

export const iterationMode: Check<IterationMode> = (v, what) =>
  typeof v === "string" && MODES.has(v) ? (v as IterationMode) : fail(what, "an iteration mode");

export const readMode: Check<ReadMode> = (v, what) =>
  v === 0 || v === 1 || v === READ_PEEK ? v : fail(what, "a read mode");

/** A plain object (its fields are checked where it is used). */
function record(v: unknown, what: string): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : fail(what, "an object");
}

/** Range, direction, limit and snapshot of an iteration, keys encoded. */
export interface WireRange {
  gt?: Uint8Array;
  gte?: Uint8Array;
  lt?: Uint8Array;
  lte?: Uint8Array;
  prefix?: Uint8Array;
  reverse?: boolean;
  limit?: number;
  /** A snapshot id of the server; 0 or absent: the latest state. */
  snapshot?: number;
}

const BOUNDS = ["gt", "gte", "lt", "lte", "prefix"] as const;

export const range: Check<WireRange> = (v, what) => {
  const o = record(v, what);
  for (const bound of BOUNDS) optional(bytes)(o[bound], `${what}.${bound}`);
  optional(bool)(o["reverse"], `${what}.reverse`);
  optional(num)(o["limit"], `${what}.limit`);
  optional(count)(o["snapshot"], `${what}.snapshot`);
  return o as WireRange;
};

/** A watched range: bounds only, keys encoded. */
export const bounds: Check<RangeBytes> = (v, what) => {
  const o = record(v, what);
  for (const bound of BOUNDS) optional(bytes)(o[bound], `${what}.${bound}`);
  return o as RangeBytes;
};

/** Watched ranges (one or more). */
export const boundsList: Check<RangeBytes[]> = list(bounds);

export const from: Check<WireFrom> = (v, what) => {
  if (!Array.isArray(v) || v.length !== 3) fail(what, "a [kind, value, group] triple");
  const [kind, value, group] = v as unknown[];
  return [count(kind, `${what}[0]`), num(value, `${what}[1]`), optional(str)(group, `${what}[2]`)];
};

/** Stored settings (checked by the engine as it stores them): an array, or none. */
export const queueSettings: Check<WireQueueOptions | undefined> = (v, what) =>
  v === undefined || Array.isArray(v) ? (v as WireQueueOptions | undefined) : fail(what, "an array of settings");

export const topicSettings: Check<WireTopicOptions | undefined> = (v, what) =>
  v === undefined || Array.isArray(v) ? (v as WireTopicOptions | undefined) : fail(what, "an array of settings");

/** The queues of a packed batch, each `[name, group]`. */
export const queueTargets: Check<[name: string, group: string][]> = list((v, what) => {
  if (!Array.isArray(v) || v.length !== 2) fail(what, "a [name, group] pair");
  return [str(v[0], `${what}[0]`), str(v[1], `${what}[1]`)] as [string, string];
});

export const errorCode: Check<ShaleErrorCode> = (v, what) => str(v, what) as ShaleErrorCode;

// Combined checks, named (a generic call written inside a row's `args` would not infer its type).
export const bytesList = list(bytes);
export const strList = list(str);
export const optionalCount = optional(count);
export const optionalBytes = optional(bytes);
export const optionalStrList = optional(strList);
