/**
 * The arguments of the change feed (`changes`), change cursors (`ackChanges`, `changeCursor`,
 * `removeChangeCursor`), followers (`applyChanges`), a batch's `meta` and the `follower` and
 * `changes` open options, checked once for every environment.
 *
 * @module
 */
import { OPTION_NAMES, describe, optionsObject, syncOf, wellFormedString } from "./checks.js";
import { queueName, wholeNumber } from "./queue-options.js";
import { invalidArgument } from "../errors.js";

/** The largest `meta` of a batch, in bytes (`MAX_META_SIZE` of the core). */
export const MAX_META_BYTES = 64 << 10;
/** The most changes one read of the feed returns. */
export const CHANGES_CHUNK = 256;
/** About the most bytes one read of the feed returns (at least one change). */
export const CHANGES_CHUNK_BYTES = 4 << 20;

const encoder = new TextEncoder();

/** A sequence number argument: a whole number from 0 to 2^53 - 1. */
export function seqArgument(value: unknown, what: string): number {
  return wholeNumber(value, what, 0);
}

/** A change cursor's name: 1 to 200 bytes of UTF-8, no NUL. */
export function cursorName(name: unknown): string {
  return queueName(name, "a change cursor name");
}

/** The checked options of `changes()`. */
export interface CheckedChangesOptions {
  since: number;
  /** `Infinity`: no limit. */
  limit: number;
  follow: boolean;
  signal: AbortSignal | undefined;
}

/** The options of `changes()`; `canFollow`: the Promise API (it takes `follow` and `signal`). */
export function changesOptions(options: unknown, canFollow: boolean): CheckedChangesOptions {
  const o = optionsObject(options, ["since", "limit", "follow", "signal"]);
  const since = o["since"] === undefined ? 1 : seqArgument(o["since"], "options.since");
  const limit = o["limit"] === undefined ? Infinity : wholeNumber(o["limit"], "options.limit", 1);
  const follow = o["follow"];
  const signal = o["signal"];
  if (!canFollow && (follow !== undefined || signal !== undefined)) {
    throw invalidArgument("the synchronous API's changes() never waits: it takes no follow or signal option");
  }
  if (follow !== undefined && typeof follow !== "boolean") {
    throw invalidArgument(`options.follow must be a boolean, got ${describe(follow)}`);
  }
  if (signal !== undefined && !(typeof AbortSignal === "function" && signal instanceof AbortSignal)) {
    throw invalidArgument(`options.signal must be an AbortSignal, got ${describe(signal)}`);
  }
  return { since, limit, follow: follow === true, signal: signal as AbortSignal | undefined };
}

/** The options of an array batch: `sync`, and `meta` as bytes (strings UTF-8 encoded; `undefined` for none). */
export function batchOptions(options: unknown): { sync: boolean; meta: Uint8Array | undefined } {
  const o = optionsObject(options, OPTION_NAMES.batch);
  return { sync: syncOf(o), meta: metaBytes(o["meta"]) };
}

/** A batch's `meta` as bytes, or `undefined` for none. */
function metaBytes(meta: unknown): Uint8Array | undefined {
  if (meta === undefined) {
    return undefined;
  }
  const bytes =
    meta instanceof Uint8Array
      ? meta
      : typeof meta === "string"
        ? encoder.encode(wellFormedString(meta, "options.meta"))
        : undefined;
  if (bytes === undefined) {
    throw invalidArgument(`options.meta must be a string or a Uint8Array, got ${describe(meta)}`);
  }
  if (bytes.length > MAX_META_BYTES) {
    throw invalidArgument(`options.meta is ${bytes.length} bytes, over the limit of ${MAX_META_BYTES}`);
  }
  return bytes.length === 0 ? undefined : bytes;
}

/** The arguments of `applyChanges(change, options)`: the change's bytes and the expected seq (-1: any). */
export function applyChangeArguments(change: unknown, options: unknown): { bytes: Uint8Array; expected: number } {
  let bytes: unknown = change;
  if (typeof change === "object" && change !== null && !(change instanceof Uint8Array) && !Array.isArray(change)) {
    bytes = (change as { bytes?: unknown }).bytes;
  }
  if (!(bytes instanceof Uint8Array)) {
    throw invalidArgument(`applyChanges needs a change or its bytes (a Uint8Array), got ${describe(change)}`);
  }
  const o = optionsObject(options, ["expectedSeq"]);
  const expected = o["expectedSeq"] === undefined ? -1 : wholeNumber(o["expectedSeq"], "options.expectedSeq", 1);
  return { bytes, expected };
}

/** The checked `changes` open option: whether given, and its limits (-1: none). */
export interface CheckedRetention {
  retain: boolean;
  retainMs: number;
  retainBytes: number;
}

/** The `changes` open option. */
export function retentionOption(value: unknown): CheckedRetention {
  if (value === undefined) {
    return { retain: false, retainMs: -1, retainBytes: -1 };
  }
  const o = optionsObject(value, ["retainMs", "retainBytes"], "options.changes");
  const ms = o["retainMs"];
  const bytes = o["retainBytes"];
  return {
    retain: true,
    retainMs: ms === undefined ? -1 : wholeNumber(ms, "options.changes.retainMs", 0),
    retainBytes: bytes === undefined ? -1 : wholeNumber(bytes, "options.changes.retainBytes", 0),
  };
}

/** A `changesRead` request's arguments (from a client of the server). */
export function changesReadArguments(
  since: unknown,
  limit: unknown,
  maxBytes: unknown,
): { since: number; limit: number; maxBytes: number } {
  return {
    since: seqArgument(since, "since"),
    limit: wholeNumber(limit, "limit", 1, CHANGES_CHUNK),
    maxBytes: wholeNumber(maxBytes, "maxBytes", 1),
  };
}
