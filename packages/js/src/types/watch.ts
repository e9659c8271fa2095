/**
 * Live queries: `watch()` of a keyspace's key ranges and `liveQuery()` over it, the same in
 * both APIs (in Node the writes of the process, in browsers those of every tab and worker).
 *
 * @module
 */

/** A watched range of keys: iterator bounds (`gt`/`gte`, `lt`/`lte`, `prefix`); `{}` is every key. */
export interface WatchRange<K> {
  gt?: K;
  gte?: K;
  lt?: K;
  lte?: K;
  prefix?: K;
}

/** One write in a watched range. */
export type WatchChange<K, V> =
  /** `value` only with the `values` option. */
  | { type: "put"; key: K; value?: V }
  | { type: "delete"; key: K }
  /** A `deleteRange` overlapping the watched ranges (`lt` undefined: to the keyspace's end). */
  | { type: "deleteRange"; gte: K; lt: K | undefined };

/** What one delivery carries: the writes in the watched ranges since the last one. */
export interface WatchEvent<K, V> {
  /** The writes, in commit order (a key written twice appears twice). */
  changes: WatchChange<K, V>[];
  /** The sequence number of the last commit looked at. */
  seq: number;
  /**
   * `true`: some commits could no longer be read (the change feed had dropped them, see the
   * `changes` open option): `changes` may miss writes, so treat every watched key as changed.
   */
  overflow: boolean;
}

/** Options of `watch()` (and `liveQuery()`, which takes `coalesce` and `signal`). */
export interface WatchOptions {
  /** Deliver the values of puts (default `false`: keys only). */
  values?: boolean;
  /**
   * `"frame"`: at most one delivery per animation frame (`requestAnimationFrame` where there
   * is one, else a 16 ms timer), merging what came meanwhile; `"tick"`: at most one per turn
   * of the event loop; absent (default): each as it is read (bursts merge anyway while a read
   * is on its way).
   */
  coalesce?: "frame" | "tick";
  /** Ends the watch when aborted (as `close()`). */
  signal?: AbortSignal;
}

/**
 * A watch as an async iterator of {@link WatchEvent}s. It ends when the loop breaks, `close()`
 * is called, `signal` aborts or the database closes; an error (`PANIC`, `NOT_IN_MODULE`)
 * rejects the next `next()`.
 */
export interface Watcher<K, V> extends AsyncIterableIterator<WatchEvent<K, V>>, Disposable {
  /** Stops the watch (idempotent): a pending `next()` resolves done. */
  close(): void;
}

/** A subscription to a {@link LiveQuery}: `unsubscribe()` stops it (idempotent). */
export interface Subscription {
  unsubscribe(): void;
  readonly closed: boolean;
}

/** An observer of a {@link LiveQuery}, as Dexie's and the Observable proposal's. */
export interface LiveQueryObserver<T> {
  next?(value: T): void;
  error?(error: unknown): void;
}

/**
 * The result of a read function, kept current: it is run when a subscriber comes, and again
 * after writes in the watched ranges (at most one run at a time; writes during a run re-run it
 * once after). Each subscription runs its own watch.
 */
export interface LiveQuery<T> {
  subscribe(observer: LiveQueryObserver<T> | ((value: T) => void), error?: (error: unknown) => void): Subscription;
}

/** `watch()` and `liveQuery()` of a keyspace, in both APIs. */
export interface Watchable<K, V> {
  /**
   * Watches `ranges` (one range, an array of them, or none: the whole keyspace) for committed
   * writes: as an async iterator, or — with `listener` — calling it for each delivery until the
   * returned function is called. A write outside the ranges wakes nobody here.
   *
   * @throws {ShaleError} `INVALID_ARGUMENT` for a bad range (a bound of the wrong type), a
   *   listener that is not a function or bad options; `CLOSED` if the database is closed.
   */
  watch(ranges?: WatchRange<K> | readonly WatchRange<K>[], options?: WatchOptions): Watcher<K, V>;
  watch(
    ranges: WatchRange<K> | readonly WatchRange<K>[] | undefined,
    listener: (event: WatchEvent<K, V>) => void,
    options?: WatchOptions,
  ): () => void;
  /**
   * `read()`'s result, re-read after writes in `ranges` (coalesced per animation frame unless
   * `coalesce` says otherwise) — Dexie's `liveQuery` shape, with the ranges named.
   *
   * @throws {ShaleError} `INVALID_ARGUMENT` as `watch()`, or for a `read` that is not a function.
   */
  liveQuery<T>(
    ranges: WatchRange<K> | readonly WatchRange<K>[] | undefined,
    read: () => T | Promise<T>,
    options?: Omit<WatchOptions, "values">,
  ): LiveQuery<T>;
}
