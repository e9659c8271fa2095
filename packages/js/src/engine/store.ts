/**
 * Reads and writes of one keyspace (the database object is the default keyspace's store).
 *
 * @module
 */
import type { DatabaseHandle } from "./database-handle.js";
import { translateError, wasm } from "./instance.js";
import { isEmptyRange, type RangeBytes } from "../encoding/bounds.js";
import { liveQueryArguments, rangeBounds, watchArguments } from "../arguments/watch-options.js";
import { liveQuery } from "../watch/live-query.js";
import { startWatch, WatcherImpl } from "../watch/watcher.js";
import { localWatchSource, type WatchSource } from "./watch.js";
import { requirePart } from "./module-parts.js";
import { deleteRangeArgument, keyspaceArgument, keysArray, readSnapshot, syncOption } from "../arguments/checks.js";
import { invalidArgument } from "../errors.js";
import { SyncIterator, type IterationMode } from "./iterator.js";
import { PackedOps } from "../encoding/packed-ops.js";
import { OP_DELETE_RANGE } from "../encoding/wire.js";
import { writePacked } from "./write-packed.js";
import { decodeOutput, reserveScratch, writeScratchAt } from "./scratch.js";
import { packedForm, type Codec } from "../encoding/codec.js";
import { maxWrittenBytes } from "../encoding/utf8-into.js";
import { SnapshotImpl, snapshotId } from "./snapshot.js";
import type {
  IteratorOptions,
  KeyspaceRef,
  ReadOptions,
  SyncEntryIterator,
  SyncStore,
  WriteOptions,
} from "../types.js";
import type { LiveQuery, WatchEvent, WatchOptions, Watcher } from "../types/watch.js";

export class StoreImpl implements SyncStore<unknown, unknown>, KeyspaceRef<unknown, unknown> {
  constructor(
    readonly db: DatabaseHandle,
    /** The keyspace's number in its database (0 = default). */
    readonly keyspaceId: number,
    readonly name: string,
    readonly keyCodec: Codec<unknown>,
    readonly valueCodec: Codec<unknown>,
  ) {}

  encodeKey(key: unknown): Uint8Array {
    return this.keyCodec.encode(key, "key");
  }

  packKey(key: unknown): Uint8Array | string {
    return packedForm(this.keyCodec, key, "key");
  }

  packValue(value: unknown): Uint8Array | string {
    return packedForm(this.valueCodec, value, "value");
  }

  /**
   * Writes a key checked by `packKey` into the scratch buffer (text straight into the instance's
   * memory); returns its length. Call inside `call()`.
   */
  #writeKey(key: Uint8Array | string): number {
    reserveScratch(maxWrittenBytes(key));
    return writeScratchAt(0, key);
  }

  encodeValue(value: unknown): Uint8Array {
    return this.valueCodec.encode(value, "value");
  }

  get(key: unknown, options?: ReadOptions): unknown {
    return this.getPacked(this.packKey(key), options);
  }

  /** {@link get} of a key already checked (`packKey`, or a server's request: bytes or text). */
  getPacked(k: Uint8Array | string, options?: ReadOptions): unknown {
    const snapshot = options === undefined ? 0 : snapshotId(this.db, readSnapshot(options));
    const db = this.db;
    // The hottest call of the API: no closure, a text key written straight into the instance's
    // memory, the value decoded straight from it when its codec allows (./scratch.ts).
    db.check();
    let found: number;
    try {
      found = wasm.dbGetScratch(db.id, this.keyspaceId, this.#writeKey(k), snapshot);
    } catch (error) {
      throw translateError(error);
    }
    return found === 0 ? undefined : decodeOutput(found, this.valueCodec);
  }

  getMany(keys: readonly unknown[], options?: ReadOptions): unknown[] {
    const list = keysArray(keys);
    // One snapshot for all of them, unless the caller gave one.
    if (readSnapshot(options) !== undefined) {
      return list.map((k) => this.get(k, options));
    }
    const snapshot = SnapshotImpl.open(this.db);
    try {
      return list.map((k) => this.get(k, { snapshot }));
    } finally {
      snapshot.close();
    }
  }

  has(key: unknown, options?: ReadOptions): boolean {
    return this.hasPacked(this.packKey(key), options);
  }

  /** {@link has} of a key already checked. */
  hasPacked(k: Uint8Array | string, options?: ReadOptions): boolean {
    const snapshot = options === undefined ? 0 : snapshotId(this.db, readSnapshot(options));
    const db = this.db;
    db.check();
    try {
      return wasm.dbGetScratch(db.id, this.keyspaceId, this.#writeKey(k), snapshot) !== 0;
    } catch (error) {
      throw translateError(error);
    }
  }

  put(key: unknown, value: unknown, options?: WriteOptions): void {
    const k = this.packKey(key);
    this.putPacked(k, this.packValue(value), options);
  }

  /** {@link put} of a key and value already checked. */
  putPacked(k: Uint8Array | string, v: Uint8Array | string, options?: WriteOptions): void {
    const sync = options === undefined ? false : syncOption(options);
    const db = this.db;
    db.mayWrite();
    try {
      // Text keys and values go straight into the instance's memory (no TextEncoder arrays).
      reserveScratch(maxWrittenBytes(k) + maxWrittenBytes(v));
      const keyLength = writeScratchAt(0, k);
      const valueLength = writeScratchAt(keyLength, v);
      wasm.dbPutScratch(db.id, this.keyspaceId, keyLength, valueLength, sync);
    } catch (error) {
      throw translateError(error);
    }
    db.afterWrite();
  }

  delete(key: unknown, options?: WriteOptions): void {
    this.deletePacked(this.packKey(key), options);
  }

  /** {@link delete} of a key already checked. */
  deletePacked(k: Uint8Array | string, options?: WriteOptions): void {
    const sync = options === undefined ? false : syncOption(options);
    const db = this.db;
    db.mayWrite();
    try {
      wasm.dbDeleteScratch(db.id, this.keyspaceId, this.#writeKey(k), sync);
    } catch (error) {
      throw translateError(error);
    }
    db.afterWrite();
  }

  deleteRange(range: { gte: unknown; lt: unknown }, options?: WriteOptions): void {
    const { gte, lt } = deleteRangeArgument(range);
    const start = this.keyCodec.encode(gte, "range.gte");
    const end = this.keyCodec.encode(lt, "range.lt");
    const ops = new PackedOps();
    if (!isEmptyRange(start, end)) {
      ops.add(OP_DELETE_RANGE, this.keyspaceId, start, end);
    }
    // No operation (an empty or inverted range): checks the options and that the database is open.
    writePacked(this.db, ops, syncOption(options));
  }

  #iterate<T>(mode: IterationMode, options: IteratorOptions<unknown> | undefined): SyncIterator<T> {
    return new SyncIterator<T>(this.db, this.keyspaceId, options, mode, this.keyCodec, this.valueCodec);
  }

  iterator(options?: IteratorOptions<unknown>): SyncEntryIterator<[unknown, unknown]> {
    return this.#iterate("entries", options);
  }

  keys(options?: IteratorOptions<unknown>): SyncEntryIterator<unknown> {
    return this.#iterate("keys", options);
  }

  values(options?: IteratorOptions<unknown>): SyncEntryIterator<unknown> {
    return this.#iterate("values", options);
  }

  count(options?: IteratorOptions<unknown>): number {
    return counter(this, options).countAll();
  }
  watch(ranges?: unknown, options?: WatchOptions): Watcher<unknown, unknown>;
  watch(ranges: unknown, listener: (event: WatchEvent<unknown, unknown>) => void, options?: WatchOptions): () => void;
  watch(ranges?: unknown, second?: unknown, third?: unknown): Watcher<unknown, unknown> | (() => void) {
    const checked = watchArguments(this.keyCodec, ranges, second, third);
    this.db.check();
    requirePart("changes");
    return startWatch(this.#watchSource(checked.ranges, checked.values), this, checked);
  }

  liveQuery<T>(ranges: unknown, read: () => T | Promise<T>, options?: Omit<WatchOptions, "values">): LiveQuery<T> {
    const checked = liveQueryArguments<T>(this.keyCodec, ranges, read, options);
    this.db.check();
    requirePart("changes");
    return liveQuery(checked.read, () => new WatcherImpl(this.#watchSource(checked.ranges, false), this, checked));
  }

  #watchSource(ranges: RangeBytes[], values: boolean): WatchSource {
    return localWatchSource(this.db, { keyspace: this.name, ranges: rangeBounds(ranges), values });
  }

}

/** An iterator of `store` counting what `options` select. */
function counter(store: StoreImpl, options: IteratorOptions<unknown> | undefined): SyncIterator<never> {
  return new SyncIterator<never>(store.db, store.keyspaceId, options, "count", store.keyCodec, store.valueCodec);
}

/**
 * `store.count(options)` in slices, awaiting `pause()` between them
 * (`SyncIterator.countAllInSlices`); not a method, to stay out of the public objects.
 */
export function countInSlices(
  store: StoreImpl,
  options: IteratorOptions<unknown> | undefined,
  pause: () => Promise<void>,
): Promise<number> {
  return counter(store, options).countAllInSlices(pause);
}

/**
 * The store a keyspace argument names: `fallback` when it is absent, else the keyspace (of
 * either API) behind `ref`, which must belong to `fallback`'s database.
 */
export function storeOf(fallback: StoreImpl, ref: unknown): StoreImpl {
  const keyspace = keyspaceArgument(ref);
  if (keyspace === undefined) {
    return fallback;
  }
  // A keyspace of the Promise API wraps the synchronous one as `store`.
  const store = (keyspace as { store?: unknown }).store ?? keyspace;
  if (!(store instanceof StoreImpl) || store.db !== fallback.db) {
    throw invalidArgument("the keyspace must be one opened on this database");
  }
  return store;
}
