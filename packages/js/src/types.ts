/**
 * The public types of the `shaledb` API: the Promise API (`open`, in Node and in browsers) here,
 * and, re-exported, those of the synchronous API (Node: `openSync`) and the options and values
 * both share (`engine/types.ts`).
 *
 * @module
 */
import type {
  BatchOperation,
  EncodingOptions,
  IteratorOptions,
  KeyEncoding,
  JsonEncoded,
  KeyOf,
  KeyspaceRef,
  GroupOptions,
  Lease,
  PushOptions,
  QueueItem,
  QueueOptions,
  QueueRef,
  QueueStats,
  ReadOptions,
  AppendOptions,
  NewTopicRecord,
  RecordHeaders,
  SubscribeOptions,
  TopicOptions,
  TopicReadOptions,
  TopicRecord,
  TopicRef,
  TopicStats,
  ReleaseOptions,
  ReserveOptions,
  Snapshot,
  TakeOptions,
  Stats,
  ValueEncoding,
  ValueOf,
  WriteOptions,
  BatchOptions,
  ApplyChangeOptions,
  ApplyChangeResult,
  Change,
  ChangesFollowOptions,
  CheckpointResult,
} from "./engine/types.js";

export type * from "./engine/types.js";

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

/** Reads and writes of one keyspace, the Promise API. */
export interface Store<K, V> {
  get(key: K, options?: ReadOptions): Promise<V | undefined>;
  getMany(keys: readonly K[], options?: ReadOptions): Promise<(V | undefined)[]>;
  has(key: K, options?: ReadOptions): Promise<boolean>;
  put(key: K, value: V, options?: WriteOptions): Promise<void>;
  delete(key: K, options?: WriteOptions): Promise<void>;
  deleteRange(range: { gte: K; lt: K }, options?: WriteOptions): Promise<void>;
  iterator(options?: IteratorOptions<K>): AsyncEntryIterator<[K, V], K>;
  keys(options?: IteratorOptions<K>): AsyncEntryIterator<K, K>;
  values(options?: IteratorOptions<K>): AsyncEntryIterator<V, K>;
  count(options?: IteratorOptions<K>): Promise<number>;
}

/** A named keyspace, the Promise API. */
export interface Keyspace<K, V> extends Store<K, V>, KeyspaceRef<K, V> {}

/**
 * An atomic batch, the Promise API. (Spelled out rather than derived from {@link SyncBatch} with
 * `Omit`: a mapped type turns the chained methods' `this` into `SyncBatch`, whose `write`
 * returns `void`.)
 */
export interface Batch<K, V> {
  put(key: K, value: V): this;
  put<K2, V2>(key: K2, value: V2, keyspace: KeyspaceRef<K2, V2>): this;
  delete(key: K): this;
  delete<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): this;
  deleteRange(range: { gte: K; lt: K }): this;
  deleteRange<K2, V2>(range: { gte: K2; lt: K2 }, keyspace: KeyspaceRef<K2, V2>): this;
  /** Operations queued. */
  readonly length: number;
  /** Applies the batch atomically and empties it. */
  write(options?: WriteOptions): Promise<void>;
  clear(): void;
}

/** An optimistic transaction, the Promise API (see {@link SyncTransaction}). */
export interface Transaction<K, V> extends AsyncDisposable {
  get(key: K): Promise<V | undefined>;
  get<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): Promise<V2 | undefined>;
  put(key: K, value: V): void;
  put<K2, V2>(key: K2, value: V2, keyspace: KeyspaceRef<K2, V2>): void;
  delete(key: K): void;
  delete<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): void;
  /** Adds a push to `queue` (see {@link SyncTransaction.push}); a failure fails the commit. */
  push<V2>(queue: QueueRef<V2>, value: V2, options?: Omit<PushOptions, "sync">): void;
  /** Adds an ack of a reservation of `queue` (see {@link SyncTransaction.ack}). */
  ack<V2>(queue: QueueRef<V2>, itemOrLease: QueueItem<V2> | Lease): void;
  /** Adds an append to `topic` (see {@link SyncTransaction.append}); a failure fails the commit. */
  append<V2, K2>(topic: TopicRef<V2, K2>, value: V2, options?: { key?: K2; headers?: RecordHeaders }): void;
  /** Adds an offset commit of group `group` of `topic` (see {@link SyncTransaction.commitOffset}). */
  commitOffset<V2, K2>(topic: TopicRef<V2, K2>, group: string, offset: number): void;
  /**
   * Commits atomically; resolves with the ids of its queue pushes and the offsets of its topic
   * appends, in the order added.
   */
  commit(options?: WriteOptions): Promise<number[]>;
  rollback(): Promise<void>;
}

/** The Promise API: the same in Node (`open`) and in browsers. */
export interface Database<K, V> extends Store<K, V>, AsyncDisposable {
  readonly location: string;
  readonly closed: boolean;
  keyspace<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
    name: string,
    options?: EncodingOptions<KE, VE>,
  ): Promise<Keyspace<KeyOf<KE>, ValueOf<VE>>>;
  /** Keyspace `name` with `"json"` values of type `V`: `db.keyspace<Order>("orders", { valueEncoding: "json" })`. */
  keyspace<V, KE extends KeyEncoding = "utf8">(
    name: string,
    options: JsonEncoded<EncodingOptions<KE, "json">>,
  ): Promise<Keyspace<KeyOf<KE>, V>>;
  batch(): Batch<K, V>;
  /** Applies `operations` atomically; resolves with the ids of its queue pushes, in order. */
  batch(operations: readonly BatchOperation<K, V>[], options?: BatchOptions): Promise<number[]>;
  /** Opens durable queue `name`, creating it if missing (see {@link SyncDatabase.queue}). */
  queue<VE extends ValueEncoding = "utf8">(name: string, options?: QueueOptions<VE>): Promise<Queue<ValueOf<VE>>>;
  /** The names of the queues, sorted. */
  queues(): Promise<string[]>;
  /**
   * Deletes queue `name` and its items; `false` if there was none. Waiting reads of it fail; a
   * handle of it used afterwards opens it anew (empty, default options), as queues are named
   * by name across tabs.
   */
  deleteQueue(name: string): Promise<boolean>;
  /** Opens topic log `name`, creating it if missing (see {@link SyncDatabase.topic}). */
  topic<VE extends ValueEncoding = "utf8", KE extends KeyEncoding = "utf8">(
    name: string,
    options?: TopicOptions<VE, KE>,
  ): Promise<Topic<ValueOf<VE>, KeyOf<KE>>>;
  /** The names of the topics, sorted. */
  topics(): Promise<string[]>;
  /**
   * Deletes topic `name`, its records and groups; `false` if there was none. Its subscriptions
   * end with an error; a handle of it used afterwards opens it anew (empty, default options).
   */
  deleteTopic(name: string): Promise<boolean>;
  snapshot(): Promise<Snapshot>;
  transaction(): Promise<Transaction<K, V>>;
  transact<T>(
    body: (tx: Transaction<K, V>) => Promise<T>,
    options?: WriteOptions & { retries?: number },
  ): Promise<T>;
  flush(): Promise<void>;
  compact(range?: { start?: K; end?: K }): Promise<void>;
  maintain(budgetBytes?: number): Promise<boolean>;
  /**
   * A consistent copy of the database: in Node into directory `destination`, as
   * {@link SyncDatabase.checkpoint}; in browsers into new database `destination`.
   */
  checkpoint(destination: string): Promise<CheckpointResult>;
  /**
   * The change feed from `since` on, in commit order, fetched in chunks; with `follow: true` it
   * then waits for new commits (of any caller, tab or worker) until `signal` aborts, the loop
   * breaks or the database closes while it waits (see {@link SyncDatabase.changes}). Options are
   * checked on the first pull (a bad one rejects it); a pull once the database is closed, or a
   * read without `follow` cut short by the close, rejects with `CLOSED`.
   */
  changes(options?: ChangesFollowOptions): AsyncIterableIterator<Change>;
  /** See {@link SyncDatabase.sequence}. */
  sequence(): Promise<number>;
  /** See {@link SyncDatabase.catchUp} (a `readOnly` open of Node.js). */
  catchUp(): Promise<void>;
  /**
   * A plain tar archive of the database directory in one consistent state (docs/FORMAT.md,
   * "Export archive"), the same in browsers and Node.js: `importDatabase` of either reads it.
   */
  export(): Promise<Blob>;
  /** See {@link SyncDatabase.ackChanges}. */
  ackChanges(cursor: string, seq: number): Promise<void>;
  /** See {@link SyncDatabase.changeCursor}. */
  changeCursor(cursor: string): Promise<number | undefined>;
  /** See {@link SyncDatabase.removeChangeCursor}. */
  removeChangeCursor(cursor: string): Promise<boolean>;
  /** See {@link SyncDatabase.applyChanges}. */
  applyChanges(change: Change | Uint8Array, options?: ApplyChangeOptions): Promise<ApplyChangeResult>;
  stats(): Promise<Stats>;
  close(): Promise<void>;
}

/** A delivered item of {@link Queue.consume}, with what settles it. */
export interface Job<V> extends QueueItem<V> {
  /** Done with it (see {@link Queue.ack}). */
  ack(): Promise<void>;
  /** Puts it back (see {@link Queue.release}). */
  release(options?: ReleaseOptions): Promise<void>;
  /** Renews its lease (see {@link Queue.extend}); resolves with the new end. */
  extend(leaseMs: number): Promise<number>;
}

/** Options of {@link Queue.consume}. */
export interface ConsumeOptions {
  /** Most jobs handed out and not yet acked or released (default 1). */
  concurrency?: number;
  /** Lease of each reservation (default: the queue's). */
  leaseMs?: number;
  /** Ends the loop (jobs reserved and not handed out yet are released). */
  signal?: AbortSignal;
}

/**
 * A durable queue, the Promise API (the same in Node and browsers): the methods of
 * {@link SyncQueue}, resolving with their results, and reads that wait (`waitMs`) without
 * polling: they resolve as soon as a push or a release commits to the queue (from any caller of
 * the database, in browsers from any tab), a lease or delay falls due, or `waitMs` passes
 * (then with `undefined` / `[]`). Closing the database ends waits the same way.
 */
export interface Queue<V> extends QueueRef<V> {
  push(value: V, options?: PushOptions): Promise<number>;
  pushMany(values: readonly V[], options?: PushOptions): Promise<number[]>;
  take(options?: TakeOptions): Promise<QueueItem<V> | undefined>;
  takeMany(n: number, options?: TakeOptions): Promise<QueueItem<V>[]>;
  peek(): Promise<QueueItem<V> | undefined>;
  reserve(options?: ReserveOptions): Promise<QueueItem<V> | undefined>;
  reserveMany(n: number, options?: ReserveOptions): Promise<QueueItem<V>[]>;
  ack(itemOrLease: QueueItem<V> | Lease): Promise<void>;
  ackMany(itemsOrLeases: readonly (QueueItem<V> | Lease)[]): Promise<void>;
  release(itemOrLease: QueueItem<V> | Lease, options?: ReleaseOptions): Promise<void>;
  extend(itemOrLease: QueueItem<V> | Lease, leaseMs: number): Promise<number>;
  group(name: string, options?: GroupOptions): Promise<Queue<V>>;
  groups(): Promise<string[]>;
  removeGroup(name: string): Promise<boolean>;
  stats(): Promise<QueueStats>;
  clear(): Promise<void>;
  /**
   * A worker loop: `for await (const job of queue.consume({ concurrency }))` reserves items
   * (waiting for them) and hands out up to `concurrency` jobs not yet acked or released. It
   * ends when the loop breaks, `signal` aborts or the database closes while it waits; jobs
   * reserved but not handed out are then released, jobs handed out stay the caller's to ack or
   * release. Options are checked on the first pull (a bad one rejects it); a pull once the
   * database is closed rejects with `CLOSED`.
   */
  consume(options?: ConsumeOptions): AsyncIterableIterator<Job<V>>;
}

/**
 * A topic log, the Promise API (the same in Node and browsers): the methods of
 * {@link SyncTopic}, resolving with their results, and `subscribe`, which waits for new records
 * without polling.
 */
export interface Topic<V, K = string> extends TopicRef<V, K> {
  append(value: V, options?: AppendOptions<K>): Promise<number>;
  appendMany(values: readonly (V | NewTopicRecord<V, K>)[], options?: WriteOptions): Promise<number[]>;
  read(options?: TopicReadOptions): Promise<TopicRecord<V, K>[]>;
  latest(n: number): Promise<TopicRecord<V, K>[]>;
  /**
   * `for await (const record of topic.subscribe({ from }))`: yields the records there are from
   * `from` on (default `"latest"`), then waits for new ones, woken as soon as an append to the
   * topic commits (from any caller of the database; in browsers from any tab). Pull-based: a
   * chunk (`options.chunk` records) is fetched only when the loop asks for more, so a slow
   * reader never makes anyone buffer. Breaking the loop, `options.signal` aborting or closing
   * the database while it waits ends it; `OFFSET_OUT_OF_RANGE` rejects it if retention drops
   * records it has not read yet. Options are checked on the first pull (a bad one rejects it);
   * a pull once the database is closed rejects with `CLOSED`.
   */
  subscribe(options?: SubscribeOptions): AsyncIterableIterator<TopicRecord<V, K>>;
  commit(group: string, offset: number): Promise<void>;
  committed(group: string): Promise<number | undefined>;
  removeGroup(group: string): Promise<boolean>;
  applyRetention(): Promise<void>;
  stats(): Promise<TopicStats>;
}
