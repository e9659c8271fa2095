/**
 * The checks of every queue argument (`db.queue`, the queue methods, queue batch operations),
 * for the synchronous API, the Promise API and browser pages alike (see `checks.ts` for the
 * shared rules). Numbers are whole, non-negative and exact (at most 2^53 - 1) unless said
 * otherwise; durations of a wait at most 2^31 - 1 ms (what a timer can wait).
 *
 * @module
 */
import { invalidArgument } from "../errors.js";
import type { ValueEncoding } from "../types.js";
import type { GroupOptions, Lease } from "../types.js";
import { describe, encodingNames, optionsObject, syncOf, wellFormedString } from "./checks.js";

/** Longest queue or group name, in UTF-8 bytes (the core's `MAX_NAME_LEN`). */
export const MAX_QUEUE_NAME_BYTES = 200;
/** Most items one `takeMany`, `reserveMany`, `pushMany` or `ackMany` handles. */
export const MAX_QUEUE_BATCH = 100_000;
/** Longest wait (a timer's limit). */
export const MAX_WAIT_MS = 0x7fff_ffff;

/**
 * A queue's settings as they cross to the engine (`dbQueue` in `crates/wasm/src/queues.rs`):
 * maxItems, maxBytes, discardOldest, maxDeliveries, deadLetter, leaseMs (0: default), ttlMs;
 * -1 means "none".
 */
export type WireQueueOptions = [number, number, boolean, number, string | undefined, number, number];

const SETTINGS = ["maxItems", "maxBytes", "whenFull", "maxDeliveries", "deadLetter", "leaseMs", "ttlMs"];

/** A whole number from `min` to `max`, named `what`. */
export function wholeNumber(value: unknown, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(`${what} must be a whole number from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

function optionalNumber(
  o: Readonly<Record<string, unknown>>,
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const value = o[name];
  return value === undefined ? undefined : wholeNumber(value, `options.${name}`, min, max);
}

/** A queue name (`what`: "a queue name") or a group name: 1 to 200 bytes of UTF-8, no NUL. */
export function queueName(name: unknown, what = "a queue name"): string {
  const text = wellFormedString(name, what);
  if (text === "" || text.includes("\u0000") || new TextEncoder().encode(text).length > MAX_QUEUE_NAME_BYTES) {
    throw invalidArgument(`${what} must be 1 to ${MAX_QUEUE_NAME_BYTES} bytes of UTF-8 with no NUL character`);
  }
  return text;
}

/**
 * The arguments of `db.queue(name, options)`: the name, the values' encoding, and the settings
 * to store (`undefined`: keep the stored ones — the options name none).
 */
export function queueArguments(
  name: unknown,
  options: unknown,
): { name: string; valueEncoding: ValueEncoding; settings: WireQueueOptions | undefined } {
  const checked = queueName(name);
  const o = optionsObject(options, ["valueEncoding", ...SETTINGS], "queue options");
  const { valueEncoding } = encodingNames(o);
  if (!SETTINGS.some((s) => o[s] !== undefined)) {
    return { name: checked, valueEncoding, settings: undefined };
  }
  const whenFull = o["whenFull"] ?? "reject";
  if (whenFull !== "reject" && whenFull !== "discardOldest") {
    throw invalidArgument(`options.whenFull must be "reject" or "discardOldest", got ${describe(whenFull)}`);
  }
  const maxDeliveries = optionalNumber(o, "maxDeliveries", 1, 0xffff_ffff);
  const deadLetter = o["deadLetter"] === undefined ? undefined : queueName(o["deadLetter"], "options.deadLetter");
  if (deadLetter !== undefined && maxDeliveries === undefined) {
    throw invalidArgument("options.deadLetter needs options.maxDeliveries");
  }
  if (deadLetter === checked) {
    throw invalidArgument("a queue cannot be its own dead-letter queue");
  }
  const settings: WireQueueOptions = [
    optionalNumber(o, "maxItems", 0) ?? -1,
    optionalNumber(o, "maxBytes", 0) ?? -1,
    whenFull === "discardOldest",
    maxDeliveries ?? -1,
    deadLetter,
    optionalNumber(o, "leaseMs", 1) ?? 0,
    optionalNumber(o, "ttlMs", 0) ?? -1,
  ];
  return { name: checked, valueEncoding, settings };
}

/** Checked push options: sync, and the delay and lifetime (-1: none). */
export interface PushArguments {
  sync: boolean;
  delayMs: number;
  ttlMs: number;
}

/** The options of a push (`sync`, `delayMs`, `ttlMs`). */
export function pushOptions(options: unknown): PushArguments {
  const o = optionsObject(options, ["sync", "delayMs", "ttlMs"]);
  return {
    sync: syncOf(o),
    delayMs: optionalNumber(o, "delayMs", 0) ?? -1,
    ttlMs: optionalNumber(o, "ttlMs", 0) ?? -1,
  };
}

/** The values of `pushMany`: an array of at most {@link MAX_QUEUE_BATCH}. */
export function valuesArray(values: unknown): readonly unknown[] {
  if (!Array.isArray(values)) {
    throw invalidArgument(`values must be an array, got ${describe(values)}`);
  }
  if (values.length > MAX_QUEUE_BATCH) {
    throw invalidArgument(`at most ${MAX_QUEUE_BATCH} values at once, got ${values.length}`);
  }
  return values;
}

/** The item count of `takeMany` / `reserveMany`. */
export function itemCount(n: unknown): number {
  return wholeNumber(n, "the number of items", 1, MAX_QUEUE_BATCH);
}

/**
 * The options of a read: `waitMs` (0 when absent) and, for a reservation, `leaseMs` (0: the
 * queue's default). `canWait`: whether this API can wait (the synchronous one cannot: any
 * `waitMs` above 0 is INVALID_ARGUMENT there).
 */
export function readOptions(options: unknown, reserve: boolean, canWait: boolean): { waitMs: number; leaseMs: number } {
  const o = optionsObject(options, reserve ? ["waitMs", "leaseMs"] : ["waitMs"]);
  const waitMs = optionalNumber(o, "waitMs", 0, MAX_WAIT_MS) ?? 0;
  if (waitMs > 0 && !canWait) {
    throw invalidArgument(
      "options.waitMs: the synchronous API cannot wait (it would block the thread); use the Promise API (open) to wait",
    );
  }
  const leaseMs = reserve ? (optionalNumber(o, "leaseMs", 1) ?? 0) : 0;
  return { waitMs, leaseMs };
}

/** The delay of a release (-1: none). */
export function releaseOptions(options: unknown): number {
  return optionalNumber(optionsObject(options, ["delayMs"]), "delayMs", 0) ?? -1;
}

/** The duration of `extend`. */
export function leaseDuration(leaseMs: unknown): number {
  return wholeNumber(leaseMs, "leaseMs", 1);
}

/** The options of `group`: whether it starts at the head. */
export function groupArguments(name: unknown, options: unknown): { name: string; head: boolean } {
  const checked = queueName(name, "a group name");
  const start = optionsObject(options as GroupOptions | undefined, ["start"])["start"] ?? "tail";
  if (start !== "tail" && start !== "head") {
    throw invalidArgument(`options.start must be "tail" or "head", got ${describe(start)}`);
  }
  return { name: checked, head: start === "head" };
}

/** An item or a lease, as the lease it names. */
export function leaseArgument(itemOrLease: unknown, what = "the item or lease"): Lease {
  if (typeof itemOrLease !== "object" || itemOrLease === null) {
    throw invalidArgument(`${what} must be an item or a lease object, got ${describe(itemOrLease)}`);
  }
  const nested = (itemOrLease as { lease?: unknown }).lease;
  const lease = (nested ?? itemOrLease) as Record<string, unknown>;
  if (typeof lease !== "object" || lease === null) {
    throw invalidArgument(`${what}.lease must be a lease object, got ${describe(lease)}`);
  }
  return {
    id: wholeNumber(lease["id"], `${what}'s id`, 1),
    delivery: wholeNumber(lease["delivery"], `${what}'s delivery`, 1, 0xffff_ffff),
  };
}

/** The items or leases of `ackMany`, as a flat array of id, delivery pairs. */
export function leasesArray(itemsOrLeases: unknown): Float64Array {
  if (!Array.isArray(itemsOrLeases)) {
    throw invalidArgument(`ackMany needs an array of items or leases, got ${describe(itemsOrLeases)}`);
  }
  if (itemsOrLeases.length > MAX_QUEUE_BATCH) {
    throw invalidArgument(`at most ${MAX_QUEUE_BATCH} leases at once, got ${itemsOrLeases.length}`);
  }
  const out = new Float64Array(itemsOrLeases.length * 2);
  itemsOrLeases.forEach((item: unknown, i) => {
    const lease = leaseArgument(item, `item ${i}`);
    out[2 * i] = lease.id;
    out[2 * i + 1] = lease.delivery;
  });
  return out;
}

/** The options of `consume`. */
export function consumeOptions(options: unknown): {
  concurrency: number;
  leaseMs: number;
  signal: AbortSignal | undefined;
} {
  const o = optionsObject(options, ["concurrency", "leaseMs", "signal"]);
  const signal = o["signal"];
  if (signal !== undefined && !(typeof AbortSignal === "function" && signal instanceof AbortSignal)) {
    throw invalidArgument(`options.signal must be an AbortSignal, got ${describe(signal)}`);
  }
  return {
    concurrency: optionalNumber(o, "concurrency", 1, 10_000) ?? 1,
    leaseMs: optionalNumber(o, "leaseMs", 1) ?? 0,
    signal: signal as AbortSignal | undefined,
  };
}
