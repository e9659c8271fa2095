/**
 * Iterators of the page: entries stream from the owner in packed batches (`entry-batch.ts`),
 * the next batch requested while the page consumes the current one.
 *
 * @module
 */
import { checkLimit, checkReverse, iteratorOptions } from "../arguments.js";
import type { Codec } from "../codec.js";
import { EntryBatch, type IterationMode } from "../entry-batch.js";
import type { AsyncEntryIterator, IteratorOptions } from "../types.js";
import type { Connection } from "./connection.js";
import type { WireRange } from "./protocol.js";
import { forgetTracking, snapshotTarget, track, untrack } from "./remote-resources.js";
import { ownBytes } from "./own-bytes.js";

/** Entries of the first batch (a small one: many iterations stop early) and of later ones. */
const FIRST_BATCH = 100;
const MAX_BATCH = 1024;

/** `options`' range, direction, limit and snapshot as they cross; throws on bad options. */
export function wireRange(
  connection: Connection,
  options: IteratorOptions<unknown> | undefined,
  keys: Codec<unknown>,
): { range: WireRange; limit: number; owner: string | undefined } {
  const o: IteratorOptions<unknown> = iteratorOptions(options);
  const range: WireRange = {};
  for (const bound of ["gt", "gte", "lt", "lte", "prefix"] as const) {
    const value = o[bound];
    if (value !== undefined) {
      range[bound] = ownBytes(keys.encode(value, `options.${bound}`));
    }
  }
  range.reverse = checkReverse(o.reverse);
  const limit = checkLimit(o.limit);
  if (limit !== Infinity) {
    range.limit = limit;
  }
  const [snapshot, owner] = snapshotTarget(connection, o.snapshot);
  range.snapshot = snapshot;
  return { range, limit, owner };
}

export class RemoteIterator<T> implements AsyncEntryIterator<T> {
  readonly #connection: Connection;
  readonly #keyspace: number;
  readonly #mode: IterationMode;
  readonly #keys: Codec<unknown>;
  readonly #values: Codec<unknown>;
  readonly #range: WireRange;
  /** Entries the limit still allows. */
  #remaining: number;
  #batch = EntryBatch.empty();
  /** The owner's iterator (0: none open); `#owner` serves it. */
  #id = 0;
  #owner: string | undefined;
  #started = false;
  #exhausted = false;
  #closed = false;
  /** The next batch, requested ahead. */
  #ahead: Promise<Uint8Array> | undefined;
  /** Calls of `next` run one after another. */
  #chain: Promise<unknown> = Promise.resolve();

  /** Checks `options` now (bad ones throw); the iterator opens on the first `next`. */
  constructor(
    connection: Connection,
    keyspace: number,
    options: IteratorOptions<unknown> | undefined,
    mode: IterationMode,
    keys: Codec<unknown>,
    values: Codec<unknown>,
  ) {
    this.#connection = connection;
    this.#keyspace = keyspace;
    this.#mode = mode;
    this.#keys = keys;
    this.#values = values;
    const { range, limit, owner } = wireRange(connection, options, keys);
    this.#range = range;
    this.#remaining = limit;
    this.#owner = owner;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    const result = this.#chain.then(() => this.#next());
    this.#chain = result.catch(() => undefined);
    return result;
  }

  async #next(): Promise<IteratorResult<T, undefined>> {
    if (this.#batch.remaining === 0) {
      if (this.#closed || this.#exhausted || this.#remaining === 0) {
        this.#close();
        return { done: true, value: undefined };
      }
      try {
        this.#take(await this.#fetch());
      } catch (error) {
        this.#close();
        throw error;
      }
      if (this.#batch.remaining === 0) {
        this.#close();
        return { done: true, value: undefined };
      }
    }
    this.#remaining -= 1;
    const value = this.#batch.next(this.#keys, this.#values) as T;
    if (this.#remaining === 0) {
      this.#close();
    }
    return { done: false, value };
  }

  /** The next batch: the first (opening the iterator), the one requested ahead, or a new one. */
  async #fetch(): Promise<Uint8Array> {
    if (!this.#started) {
      this.#started = true;
      const want = Math.min(this.#remaining, this.#remaining <= MAX_BATCH ? MAX_BATCH : FIRST_BATCH);
      const [[id, batch], owner] = await this.#connection.requestServed(
        "iterOpen",
        [this.#keyspace, this.#range, this.#mode, want],
        this.#owner,
      );
      this.#owner = owner;
      this.#id = id;
      if (id !== 0) {
        track(this, this.#held(id, owner));
      }
      return batch;
    }
    const ahead = this.#ahead;
    this.#ahead = undefined;
    return ahead ?? this.#request();
  }

  #request(): Promise<Uint8Array> {
    const want = Math.min(this.#remaining, MAX_BATCH);
    return this.#connection.request("iterNext", [this.#id, want, this.#mode], this.#owner);
  }

  /** Takes `bytes` as the current batch; asks for the next one ahead if more may follow. */
  #take(bytes: Uint8Array): void {
    this.#batch = new EntryBatch(bytes, this.#mode);
    if (this.#batch.exhausted) {
      // The owner released its iterator with the last batch.
      this.#exhausted = true;
      this.#forget();
    } else if (this.#remaining > this.#batch.remaining) {
      this.#ahead = this.#request();
      this.#ahead.catch(() => undefined);
    }
  }

  #held(id: number, owner: string): Parameters<typeof track>[1] {
    return { connection: this.#connection, op: "iterClose", id, owner };
  }

  /** Stops tracking the owner's iterator, which is gone. */
  #forget(): void {
    if (this.#id !== 0) {
      this.#id = 0;
      forgetTracking(this);
    }
  }

  #close(): void {
    this.#closed = true;
    this.#batch.remaining = 0;
    if (this.#id !== 0 && this.#owner !== undefined) {
      const id = this.#id;
      this.#id = 0;
      // Ordered after any batch requested ahead, so the owner closes it after serving that.
      untrack(this, this.#held(id, this.#owner));
    }
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.#close();
    return Promise.resolve({ done: true, value: undefined });
  }

  close(): Promise<void> {
    this.#close();
    return Promise.resolve();
  }

  async all(): Promise<T[]> {
    const items: T[] = [];
    try {
      for (let r = await this.next(); r.done !== true; r = await this.next()) {
        items.push(r.value);
      }
    } finally {
      this.#close();
    }
    return items;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
