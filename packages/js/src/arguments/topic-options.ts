/**
 * The checks of every topic argument (`db.topic`, the topic methods, topic batch operations),
 * for the synchronous API, the Promise API and browser pages alike (see `checks.ts` for the
 * shared rules). Numbers are whole, non-negative and exact (at most 2^53 - 1).
 *
 * @module
 */
import { invalidArgument } from "../errors.js";
import { FROM_EARLIEST, FROM_GROUP, FROM_LATEST, FROM_OFFSET, FROM_TIME } from "../encoding/wire.js";
import type { KeyEncoding, ValueEncoding } from "../types.js";
import { describe, encodingNames, optionsObject, syncOf, wellFormedString } from "./checks.js";
import { MAX_QUEUE_BATCH, queueName, wholeNumber } from "./queue-options.js";

/** Most records one `appendMany` or read handles. */
export const MAX_TOPIC_BATCH = MAX_QUEUE_BATCH;
/** Records a read returns by default. */
export const DEFAULT_READ_LIMIT = 1000;
/** Bytes a read returns by default (about; at least one record). */
export const DEFAULT_READ_BYTES = 4 << 20;
/** Records a subscription fetches per request by default. */
export const DEFAULT_CHUNK = 256;

/**
 * A topic's settings as they cross to the engine (`dbTopic` in `crates/wasm/src/topics.rs`):
 * maxAgeMs, maxBytes, maxRecords (-1: none), retentionPassesGroups.
 */
export type WireTopicOptions = [number, number, number, boolean];

const SETTINGS = ["maxAgeMs", "maxBytes", "maxRecords", "retentionPassesGroups"];

/** A topic name: 1 to 200 bytes of UTF-8, no NUL. */
export function topicName(name: unknown): string {
  return queueName(name, "a topic name");
}

/** A consumer group name of a topic: 1 to 200 bytes of UTF-8, no NUL. */
export function topicGroup(name: unknown): string {
  return queueName(name, "a group name");
}

function optionalNumber(o: Readonly<Record<string, unknown>>, name: string): number | undefined {
  const value = o[name];
  return value === undefined ? undefined : wholeNumber(value, `options.${name}`, 0);
}

/**
 * The arguments of `db.topic(name, options)`: the name, the encodings, and the settings to
 * store (`undefined`: keep the stored ones — the options name none).
 */
export function topicArguments(
  name: unknown,
  options: unknown,
): { name: string; keyEncoding: KeyEncoding; valueEncoding: ValueEncoding; settings: WireTopicOptions | undefined } {
  const checked = topicName(name);
  const o = optionsObject(options, ["keyEncoding", "valueEncoding", ...SETTINGS], "topic options");
  const { keyEncoding, valueEncoding } = encodingNames(o);
  if (!SETTINGS.some((s) => o[s] !== undefined)) {
    return { name: checked, keyEncoding, valueEncoding, settings: undefined };
  }
  const passes = o["retentionPassesGroups"] ?? false;
  if (typeof passes !== "boolean") {
    throw invalidArgument(`options.retentionPassesGroups must be a boolean, got ${describe(passes)}`);
  }
  const settings: WireTopicOptions = [
    optionalNumber(o, "maxAgeMs") ?? -1,
    optionalNumber(o, "maxBytes") ?? -1,
    optionalNumber(o, "maxRecords") ?? -1,
    passes,
  ];
  return { name: checked, keyEncoding, valueEncoding, settings };
}

/**
 * The options of an append: `sync` (not in a transaction, `inTransaction`, whose commit
 * decides), and the record's `key` and `headers` (checked by the record's encoder).
 */
export function appendOptions(
  options: unknown,
  inTransaction = false,
): { sync: boolean; key: unknown; headers: unknown } {
  const o = optionsObject(options, inTransaction ? ["key", "headers"] : ["sync", "key", "headers"]);
  return { sync: syncOf(o), key: o["key"], headers: o["headers"] };
}

/** A record's headers, checked: a plain object of names to strings or `Uint8Array`s. */
export function headersArgument(headers: unknown, what = "options.headers"): [string, Uint8Array][] {
  if (headers === undefined) return [];
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) {
    throw invalidArgument(`${what} must be an object of names to strings or Uint8Arrays, got ${describe(headers)}`);
  }
  const encoder = new TextEncoder();
  return Object.entries(headers as Record<string, unknown>).map(([name, value]) => {
    wellFormedString(name, `${what}'s name`);
    if (typeof value === "string") {
      return [name, encoder.encode(wellFormedString(value, `${what}.${name}`))];
    }
    if (value instanceof Uint8Array) {
      return [name, value];
    }
    throw invalidArgument(`${what}.${name} must be a string or a Uint8Array, got ${describe(value)}`);
  });
}

/** Where a read starts, as it crosses (`topicRead`): kind (`FROM_OFFSET`, ... of `../encoding/wire.ts`), the offset or time, the group. */
export type WireFrom = [kind: number, value: number, group: string | undefined];

/** A checked `from` (`fallback` when absent). */
export function fromArgument(from: unknown, fallback: "earliest" | "latest"): WireFrom {
  const f = from === undefined ? fallback : from;
  if (f === "earliest") return [FROM_EARLIEST, 0, undefined];
  if (f === "latest") return [FROM_LATEST, 0, undefined];
  if (typeof f === "number") return [FROM_OFFSET, wholeNumber(f, "options.from", 0), undefined];
  if (typeof f === "object" && f !== null && !Array.isArray(f)) {
    const o = f as Record<string, unknown>;
    if (o["time"] !== undefined && o["group"] === undefined) {
      return [FROM_TIME, wholeNumber(o["time"], "options.from.time", 0), undefined];
    }
    if (o["group"] !== undefined && o["time"] === undefined) {
      return [FROM_GROUP, 0, topicGroup(o["group"])];
    }
  }
  throw invalidArgument(
    `options.from must be an offset, "earliest", "latest", { time } or { group }, got ${describe(f)}`,
  );
}

/** The checked options of a read. */
export function readArguments(options: unknown): { from: WireFrom; limit: number; maxBytes: number } {
  const o = optionsObject(options, ["from", "limit", "maxBytes"]);
  const limit = o["limit"] === undefined ? DEFAULT_READ_LIMIT : wholeNumber(o["limit"], "options.limit", 1, MAX_TOPIC_BATCH);
  const maxBytes = o["maxBytes"] === undefined ? DEFAULT_READ_BYTES : wholeNumber(o["maxBytes"], "options.maxBytes", 1);
  return { from: fromArgument(o["from"], "earliest"), limit, maxBytes };
}

/** The checked options of a subscription (`canAbort`: the Promise API takes a `signal`). */
export function subscribeArguments(
  options: unknown,
  canAbort: boolean,
): { from: WireFrom; chunk: number; signal: AbortSignal | undefined } {
  const o = optionsObject(options, ["from", "chunk", "signal"]);
  const chunk = o["chunk"] === undefined ? DEFAULT_CHUNK : wholeNumber(o["chunk"], "options.chunk", 1, MAX_TOPIC_BATCH);
  const signal = o["signal"];
  if (signal !== undefined) {
    if (!canAbort) {
      throw invalidArgument("options.signal: the synchronous API's subscription never waits, so it takes no signal");
    }
    if (!(typeof AbortSignal === "function" && signal instanceof AbortSignal)) {
      throw invalidArgument(`options.signal must be an AbortSignal, got ${describe(signal)}`);
    }
  }
  return { from: fromArgument(o["from"], "latest"), chunk, signal: signal as AbortSignal | undefined };
}

/** The `n` of `latest(n)`. */
export function latestCount(n: unknown): number {
  return wholeNumber(n, "the number of records", 0, MAX_TOPIC_BATCH);
}

/** An offset argument (`commit`, `commitOffset`). */
export function offsetArgument(offset: unknown, what = "the offset"): number {
  return wholeNumber(offset, what, 0);
}

/** The values or records of `appendMany`: an array of at most {@link MAX_TOPIC_BATCH}. */
export function recordsArray(values: unknown): readonly unknown[] {
  if (!Array.isArray(values)) {
    throw invalidArgument(`appendMany needs an array of values or records, got ${describe(values)}`);
  }
  if (values.length > MAX_TOPIC_BATCH) {
    throw invalidArgument(`at most ${MAX_TOPIC_BATCH} records at once, got ${values.length}`);
  }
  return values;
}
