/**
 * Synchronous iterators. Entries come from the WebAssembly instance in batches (one call per
 * batch, growing from 16 entries to 1,024), packed into one byte array that is sliced without
 * further copies: a `"binary"` key or value is a view into its batch's buffer.
 *
 * @module
 */
import { checkLimit, iteratorOptions } from "../arguments/checks.js";
import { encodeBounds } from "../encoding/bounds.js";
import type { Codec } from "../encoding/codec.js";
import type { DatabaseHandle } from "./database-handle.js";
import { EntryBatch, type IterationMode } from "../encoding/entry-batch.js";
import { NativeIterator } from "./native-iterator.js";
import { snapshotId } from "./snapshot.js";
import type { IteratorOptions, SyncEntryIterator } from "../types.js";

export type { IterationMode } from "../encoding/entry-batch.js";

const FIRST_BATCH = 16;
const MAX_BATCH = 1024;
/** Entries counted per call into the instance by {@link SyncIterator.countAllInSlices} (well under a millisecond). */
const COUNT_SLICE_ENTRIES = 1024;
/** How long {@link SyncIterator.countAllInSlices} counts before it pauses. */
const COUNT_SLICE_MS = 1;

/**
 * The first batch's size: the caller's `limit` when it is at most {@link MAX_BATCH} (it said
 * how many entries it wants: one call instead of four for 1,000), else {@link FIRST_BATCH},
 * growing fourfold per batch, so that a loop that breaks early reads little ahead.
 */
function firstBatch(limit: number): number {
  return limit <= MAX_BATCH ? limit : FIRST_BATCH;
}

export class SyncIterator<T> implements SyncEntryIterator<T> {
  readonly #db: DatabaseHandle;
  readonly #mode: IterationMode;
  readonly #keys: Codec<unknown>;
  readonly #values: Codec<unknown>;
  readonly #native: NativeIterator | undefined;
  #remaining: number;
  #batchSize: number;
  #batch = EntryBatch.empty();
  #closed = false;

  constructor(
    db: DatabaseHandle,
    keyspace: number,
    iterationOptions: unknown,
    mode: IterationMode,
    keys: Codec<unknown>,
    values: Codec<unknown>,
  ) {
    this.#db = db;
    this.#mode = mode;
    this.#keys = keys;
    this.#values = values;
    const options: IteratorOptions<unknown> = iteratorOptions(iterationOptions);
    this.#remaining = checkLimit(options.limit);
    this.#batchSize = firstBatch(this.#remaining);
    if (this.#remaining === 0) {
      // Checked like any other, but there is nothing to open.
      encodeBounds(options, keys);
      snapshotId(db, options.snapshot);
      this.#closed = true;
      return;
    }
    this.#native = new NativeIterator(db, keyspace, options, keys);
  }

  /**
   * {@link countAll} in slices of about {@link COUNT_SLICE_MS}, awaiting `pause()` between them
   * (a server's count: the event loop turns meanwhile; the iterator's view stays the one it
   * opened with, so the count is of one state). Closes the iterator, also on failure.
   */
  async countAllInSlices(pause: () => Promise<void>): Promise<number> {
    let n = 0;
    try {
      let sliceStart = performance.now();
      while (!this.#closed && this.#remaining > 0 && this.#fill(COUNT_SLICE_ENTRIES)) {
        n += this.#batch.remaining;
        this.#remaining -= this.#batch.remaining;
        this.#batch.remaining = 0;
        if (performance.now() - sliceStart >= COUNT_SLICE_MS) {
          await pause();
          sliceStart = performance.now();
        }
      }
    } finally {
      this.close();
    }
    return n;
  }

  /** Counts the remaining entries (mode `"count"`: nothing is decoded), then closes. */
  countAll(): number {
    let n = 0;
    while (!this.#closed && this.#remaining > 0 && this.#fill(1 << 16)) {
      n += this.#batch.remaining;
      this.#remaining -= this.#batch.remaining;
      this.#batch.remaining = 0;
    }
    this.close();
    return n;
  }

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<T, undefined> {
    if (!this.#closed) {
      // Entries already fetched are not served from a closed database or a dead instance.
      this.#db.check();
    }
    if (this.#batch.remaining === 0) {
      if (this.#closed || !this.#fill(this.#batchSize)) {
        this.close();
        return { done: true, value: undefined };
      }
      this.#batchSize = Math.min(this.#batchSize * 4, MAX_BATCH);
    }
    this.#remaining -= 1;
    const item = this.#batch.next(this.#keys, this.#values) as T;
    if (this.#remaining === 0) {
      this.close();
    }
    return { done: false, value: item };
  }

  seek(target: unknown): void {
    const key = this.#keys.encode(target, "target");
    if (this.#closed) {
      // Ended (done, or the limit reached) or closed: it stays so, as in Level.
      return;
    }
    this.#db.check();
    this.#batch = EntryBatch.empty();
    this.#native?.seek(key);
    this.#batchSize = firstBatch(this.#remaining);
  }

  /** Ends iteration early (what `break` in `for...of` does). */
  return(): IteratorResult<T, undefined> {
    this.close();
    return { done: true, value: undefined };
  }

  /** Fetches the next batch of up to `size` entries; false when there is nothing left. */
  #fill(size: number): boolean {
    const native = this.#native;
    if (native === undefined || native.exhausted) {
      return false;
    }
    this.#batch = new EntryBatch(native.fetch(Math.min(size, this.#remaining), this.#mode), this.#mode);
    return this.#batch.remaining > 0;
  }

  /** Releases the iterator; later `next()` calls return `done`. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#batch.remaining = 0;
    this.#native?.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
