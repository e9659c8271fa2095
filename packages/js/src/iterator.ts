/**
 * Synchronous iterators. Entries come from the WebAssembly instance in batches (one call per
 * batch, growing from 16 entries to 1,024), packed into one byte array that is sliced without
 * further copies: a `"binary"` key or value is a view into its batch's buffer.
 *
 * @module
 */
import type { Codec } from "./codec.js";
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./engine.js";
import { invalidArgument } from "./errors.js";
import { snapshotId } from "./snapshot.js";
import type { IteratorOptions, SyncEntryIterator } from "./types.js";

/** What each step yields. */
export type IterationMode = "entries" | "keys" | "values" | "count";

const FLAGS: Record<IterationMode, number> = { entries: 3, keys: 1, values: 2, count: 0 };
const FIRST_BATCH = 16;
const MAX_BATCH = 1024;
const MAX_BATCH_BYTES = 256 << 10;

/** The bounds of `options` in bytes: the tighter of `gt`/`gte` and of `lt`/`lte`. */
export function encodeBounds(
  options: IteratorOptions<unknown>,
  keys: Codec<unknown>,
): {
  lower: Uint8Array | undefined;
  lowerInclusive: boolean;
  upper: Uint8Array | undefined;
  upperInclusive: boolean;
  prefix: Uint8Array | undefined;
} {
  const enc = (value: unknown, name: string): Uint8Array | undefined =>
    value === undefined ? undefined : keys.encode(value, `options.${name}`);
  const gt = enc(options.gt, "gt");
  const gte = enc(options.gte, "gte");
  const lt = enc(options.lt, "lt");
  const lte = enc(options.lte, "lte");
  let lower = gte;
  let lowerInclusive = true;
  if (gt !== undefined && (gte === undefined || compareBytes(gt, gte) >= 0)) {
    lower = gt;
    lowerInclusive = false;
  }
  let upper = lte;
  let upperInclusive = true;
  if (lt !== undefined && (lte === undefined || compareBytes(lt, lte) <= 0)) {
    upper = lt;
    upperInclusive = false;
  }
  return { lower, lowerInclusive, upper, upperInclusive, prefix: enc(options.prefix, "prefix") };
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

function checkLimit(limit: number | undefined): number {
  if (limit === undefined || limit === Infinity || limit < 0) {
    // level's convention: a negative limit means none.
    return Infinity;
  }
  if (!Number.isInteger(limit)) {
    throw invalidArgument(`options.limit must be an integer, got ${String(limit)}`);
  }
  return limit;
}

export class SyncIterator<T> implements SyncEntryIterator<T> {
  readonly #db: DatabaseHandle;
  readonly #mode: IterationMode;
  readonly #keys: Codec<unknown>;
  readonly #values: Codec<unknown>;
  #id = 0;
  #remaining: number;
  #batchSize = FIRST_BATCH;
  #buffer = new Uint8Array(0);
  #view = new DataView(this.#buffer.buffer);
  #pos = 0;
  #left = 0;
  #exhausted = false;
  #closed = false;

  constructor(
    db: DatabaseHandle,
    keyspace: number,
    options: IteratorOptions<unknown>,
    mode: IterationMode,
    keys: Codec<unknown>,
    values: Codec<unknown>,
  ) {
    this.#db = db;
    this.#mode = mode;
    this.#keys = keys;
    this.#values = values;
    this.#remaining = checkLimit(options.limit);
    const b = encodeBounds(options, keys);
    const snapshot = snapshotId(db, options.snapshot);
    if (this.#remaining === 0) {
      this.#exhausted = true;
      return;
    }
    this.#id = db.call(() =>
      wasm.iterOpen(
        db.id,
        keyspace,
        snapshot,
        b.lower,
        b.lowerInclusive,
        b.upper,
        b.upperInclusive,
        b.prefix,
        options.reverse === true,
      ),
    );
    db.track("iterator", this.#id, this);
  }

  /** Counts the remaining entries (mode `"count"`: nothing is decoded), then closes. */
  countAll(): number {
    let n = 0;
    this.#batchSize = 1 << 16;
    while (!this.#closed && !this.#exhausted && this.#remaining > 0 && this.#fill()) {
      n += this.#left;
      this.#remaining -= this.#left;
      this.#left = 0;
      this.#batchSize = 1 << 16;
    }
    this.close();
    return n;
  }

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<T, undefined> {
    if (this.#left === 0) {
      if (this.#closed || this.#exhausted || !this.#fill()) {
        this.close();
        return { done: true, value: undefined };
      }
    }
    this.#left -= 1;
    this.#remaining -= 1;
    let key: unknown;
    let value: unknown;
    if (this.#mode !== "values") {
      key = this.#keys.decode(this.#take());
    }
    if (this.#mode !== "keys") {
      value = this.#values.decode(this.#take());
    }
    const item = this.#mode === "entries" ? [key, value] : this.#mode === "keys" ? key : value;
    if (this.#remaining === 0) {
      this.close();
    }
    return { done: false, value: item as T };
  }

  /** Ends iteration early (what `break` in `for...of` does). */
  return(): IteratorResult<T, undefined> {
    this.close();
    return { done: true, value: undefined };
  }

  /** Fetches the next batch; false when there is nothing left. */
  #fill(): boolean {
    const want = Math.min(this.#batchSize, this.#remaining);
    this.#batchSize = Math.min(this.#batchSize * 4, MAX_BATCH);
    const id = this.#id;
    const buffer = this.#db.call(() =>
      wasm.iterNext(id, want, MAX_BATCH_BYTES, FLAGS[this.#mode]),
    );
    this.#buffer = buffer as Uint8Array<ArrayBuffer>;
    this.#view = new DataView(this.#buffer.buffer, buffer.byteOffset, buffer.byteLength);
    this.#exhausted = buffer[0] === 1;
    this.#left = this.#view.getUint32(1, true);
    this.#pos = 5;
    if (this.#exhausted) {
      // Nothing more to read: release the native iterator (and what it pins) right away.
      this.#releaseNative();
    }
    return this.#left > 0;
  }

  #take(): Uint8Array {
    const length = this.#view.getUint32(this.#pos, true);
    const start = this.#pos + 4;
    this.#pos = start + length;
    return this.#buffer.subarray(start, this.#pos);
  }

  /** Releases the iterator; later `next()` calls return `done`. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#left = 0;
    this.#releaseNative();
  }

  #releaseNative(): void {
    if (this.#id !== 0) {
      const id = this.#id;
      this.#id = 0;
      this.#db.release("iterator", id, this);
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
