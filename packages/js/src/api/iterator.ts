/**
 * Iterators of the Promise API: entries stream from the server in packed batches
 * (`../encoding/entry-batch.ts`), the next batch requested while the caller consumes the current one.
 *
 * @module
 */
import { checkLimit, checkReverse, iteratorOptions } from "../arguments/checks.js";
import type { Codec } from "../encoding/codec.js";
import { EntryBatch, type IterationMode } from "../encoding/entry-batch.js";
import { ownBytes } from "../encoding/own-bytes.js";
import type { WireRange } from "../transport/requests.js";
import type { Transport } from "../transport/transport.js";
import type { AsyncEntryIterator, IteratorOptions } from "../types.js";
import { track, untrack, type Held } from "./server-resources.js";
import { snapshotTarget } from "./snapshot.js";

/** Entries of the first batch (a small one: many iterations stop early) and of later ones. */
const FIRST_BATCH = 100;
const MAX_BATCH = 1024;

/**
 * `options`' range, direction, limit and snapshot as they cross, and the server that must serve
 * them (the snapshot's); throws on bad options.
 */
export function wireRange(
  transport: Transport,
  options: IteratorOptions<unknown> | undefined,
  keys: Codec<unknown>,
): { range: WireRange; limit: number; server: string | undefined } {
  const o: IteratorOptions<unknown> = iteratorOptions(options);
  const range: WireRange = {};
  for (const bound of ["gt", "gte", "lt", "lte", "prefix"] as const) {
    const value = o[bound];
    if (value !== undefined) {
      range[bound] = ownBytes(keys.encode(value, `options.${bound}`), value);
    }
  }
  range.reverse = checkReverse(o.reverse);
  const limit = checkLimit(o.limit);
  if (limit !== Infinity) {
    range.limit = limit;
  }
  const [snapshot, server] = snapshotTarget(transport, o.snapshot);
  range.snapshot = snapshot;
  return { range, limit, server };
}

export class PromiseIterator<T> implements AsyncEntryIterator<T> {
  readonly #transport: Transport;
  readonly #keyspace: number;
  readonly #mode: IterationMode;
  readonly #keys: Codec<unknown>;
  readonly #values: Codec<unknown>;
  readonly #range: WireRange;
  /** Entries the limit still allows. */
  #remaining: number;
  #batch = EntryBatch.empty();
  /** The server's iterator (0: none open); `#server` serves it. */
  #id = 0;
  #server: string | undefined;
  #started = false;
  #exhausted = false;
  /** A seek target (its key's bytes) to apply before the next batch. */
  #seekTo: Uint8Array | undefined;
  #closed = false;
  /** The next batch, requested ahead. */
  #ahead: Promise<Uint8Array> | undefined;
  /** Calls of `next` (and seeks) run one after another. */
  #chain: Promise<unknown> = Promise.resolve();
  /** Calls of `next` and seeks in `#chain` not finished yet. */
  #queued = 0;

  /** Checks `options` now (bad ones throw); the iterator opens on the first `next`. */
  constructor(
    transport: Transport,
    keyspace: number,
    options: IteratorOptions<unknown> | undefined,
    mode: IterationMode,
    keys: Codec<unknown>,
    values: Codec<unknown>,
  ) {
    this.#transport = transport;
    this.#keyspace = keyspace;
    this.#mode = mode;
    this.#keys = keys;
    this.#values = values;
    const { range, limit, server } = wireRange(transport, options, keys);
    this.#range = range;
    this.#remaining = limit;
    this.#server = server;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    // The common case, an entry of the batch at hand and nothing queued before it, without the
    // chain's promises (which cost several times the entry's decoding, more so in Firefox).
    if (this.#queued === 0 && this.#batch.remaining > 0) {
      try {
        return Promise.resolve(this.#takeOne());
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    return this.#enqueue(() => this.#next());
  }

  /** Runs `step` after every call queued before it. */
  #enqueue<R>(step: () => R | Promise<R>): Promise<R> {
    this.#queued += 1;
    const result = this.#chain.then(step).finally(() => {
      this.#queued -= 1;
    });
    this.#chain = result.catch(() => undefined);
    return result;
  }

  seek(target: unknown): void {
    const key = ownBytes(this.#keys.encode(target, "target"), target);
    if (this.#closed || this.#remaining === 0) {
      return;
    }
    // After a `next()` already called; the entries fetched so far (and ahead) are dropped then.
    void this.#enqueue(() => {
      if (!this.#closed) {
        this.#batch.remaining = 0;
        this.#ahead = undefined;
        this.#exhausted = false;
        this.#seekTo = key;
      }
    });
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
    return this.#takeOne();
  }

  /** The next entry of the batch at hand (which has one). */
  #takeOne(): IteratorResult<T, undefined> {
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
      const [[id, batch], server] = await this.#transport.requestServed(
        "iterOpen",
        [this.#keyspace, this.#range, this.#mode, want],
        this.#server,
      );
      this.#server = server;
      this.#id = id;
      if (id !== 0) {
        track(this, this.#held(id, server));
      }
      if (this.#seekTo === undefined) {
        return batch;
      }
    }
    const target = this.#seekTo;
    if (target !== undefined) {
      this.#seekTo = undefined;
      if (this.#id === 0) {
        return new Uint8Array([1, 0, 0, 0, 0]);
      }
      const want = Math.min(this.#remaining, MAX_BATCH);
      return this.#transport.request("iterSeek", [this.#id, target, want, this.#mode], this.#server);
    }
    const ahead = this.#ahead;
    this.#ahead = undefined;
    return ahead ?? this.#request();
  }

  #request(): Promise<Uint8Array> {
    const want = Math.min(this.#remaining, MAX_BATCH);
    return this.#transport.request("iterNext", [this.#id, want, this.#mode], this.#server);
  }

  /** Takes `bytes` as the current batch; asks for the next one ahead if more may follow. */
  #take(bytes: Uint8Array): void {
    this.#batch = new EntryBatch(bytes, this.#mode);
    if (this.#batch.exhausted) {
      // The server keeps its iterator (a seek may move it back) until this one closes.
      this.#exhausted = true;
    } else if (this.#remaining > this.#batch.remaining) {
      this.#ahead = this.#request();
      this.#ahead.catch(() => undefined);
    }
  }

  #held(id: number, server: string): Held {
    return { transport: this.#transport, op: "iterClose", id, server };
  }

  #close(): void {
    this.#closed = true;
    this.#batch.remaining = 0;
    if (this.#id !== 0 && this.#server !== undefined) {
      const id = this.#id;
      this.#id = 0;
      // Ordered after any batch requested ahead, so the server closes it after serving that.
      untrack(this, this.#held(id, this.#server));
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
      for (;;) {
        // The batch at hand is taken without awaiting each entry.
        while (this.#queued === 0 && this.#batch.remaining > 0) {
          items.push(this.#takeOne().value as T);
        }
        const r = await this.next();
        if (r.done === true) break;
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
