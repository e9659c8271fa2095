/**
 * Keyspaces: their reads, writes and iterators, in both APIs.
 *
 * @module
 */
import type { Promised } from "./promised.js";
import type { IteratorOptions, ReadOptions, WriteOptions } from "./options.js";
import type { Watchable } from "./watch.js";

/**
 * Names one keyspace of one database, with the JS types of its keys and values. Keyspaces share
 * the database's write-ahead log, so one batch or transaction may write several atomically.
 */
export interface KeyspaceRef<K, V> {
  readonly name: string;
  /** Type-level only: the key and value types (never set at run time). */
  readonly __types?: [K, V];
}

/** Reads and writes of one keyspace (the database itself stands for its default keyspace). */
export interface SyncStore<K, V> extends Watchable<K, V> {
  /** The value of `key`, or `undefined`. */
  get(key: K, options?: ReadOptions): V | undefined;
  /** The values of `keys`, in order, from one snapshot. */
  getMany(keys: readonly K[], options?: ReadOptions): (V | undefined)[];
  has(key: K, options?: ReadOptions): boolean;
  put(key: K, value: V, options?: WriteOptions): void;
  delete(key: K, options?: WriteOptions): void;
  /** Deletes every key in `[gte, lt)` with one range tombstone (not a delete per key). */
  deleteRange(range: { gte: K; lt: K }, options?: WriteOptions): void;
  /** `[key, value]` pairs in key order (or reverse). */
  iterator(options?: IteratorOptions<K>): SyncEntryIterator<[K, V], K>;
  keys(options?: IteratorOptions<K>): SyncEntryIterator<K, K>;
  values(options?: IteratorOptions<K>): SyncEntryIterator<V, K>;
  /** The number of keys in the range (it walks them). */
  count(options?: IteratorOptions<K>): number;
}

/** A named keyspace of a synchronous database. */
export interface SyncKeyspace<K, V> extends SyncStore<K, V>, KeyspaceRef<K, V> {}

/** A synchronous iterator over entries, keys or values. Close it, or let it run to its end. */
export interface SyncEntryIterator<T, K = unknown> extends IterableIterator<T>, Disposable {
  /** Releases the snapshot and tables it pins. Idempotent. */
  close(): void;
  /**
   * Moves to the first key `>= target` (with `reverse`: the last key `<= target`) within the
   * iterator's range and at its snapshot: the next `next()` returns that entry. It can go back
   * as well as forward; `limit` counts on (a seek does not reset it). An iterator that returned
   * `done` (or reached its limit) is closed: there, as after `close()`, a seek does nothing.
   *
   * @throws {ShaleError} `INVALID_ARGUMENT` for a target of the wrong type; `CLOSED` if the
   *   database is closed.
   */
  seek(target: K): void;
}

/** An asynchronous iterator over entries, keys or values (the Promise API). */
export interface AsyncEntryIterator<T, K = unknown> extends AsyncIterableIterator<T>, AsyncDisposable {
  /** Releases the snapshot and tables it pins. Idempotent. */
  close(): Promise<void>;
  /**
   * Moves to the first key `>= target` (with `reverse`: the last key `<= target`) within the
   * iterator's range and at its snapshot: the next `next()` returns that entry (entries fetched
   * ahead are dropped). It can go back as well as forward; `limit` counts on. It takes effect
   * after a `next()` already called. An iterator that returned `done` (or reached its limit)
   * is closed: there, as after `close()`, a seek does nothing.
   *
   * @throws {ShaleError} `INVALID_ARGUMENT` for a target of the wrong type (at once).
   */
  seek(target: K): void;
  /** Every remaining entry (up to the iterator's `limit`), then closes. */
  all(): Promise<T[]>;
}

/** Reads and writes of one keyspace, the Promise API: those of {@link SyncStore}, resolving with their results. */
export interface Store<K, V>
  extends Promised<Omit<SyncStore<K, V>, "iterator" | "keys" | "values" | keyof Watchable<K, V>>>,
    Watchable<K, V> {
  /** `[key, value]` pairs in key order (or reverse). */
  iterator(options?: IteratorOptions<K>): AsyncEntryIterator<[K, V], K>;
  keys(options?: IteratorOptions<K>): AsyncEntryIterator<K, K>;
  values(options?: IteratorOptions<K>): AsyncEntryIterator<V, K>;
}

/** A named keyspace, the Promise API. */
export interface Keyspace<K, V> extends Store<K, V>, KeyspaceRef<K, V> {}

