/**
 * The types of the synchronous API (Node: `openSync`; the engine side of every environment), and
 * the options and values it shares with the Promise API (`../types.ts`, which re-exports them).
 *
 * @module
 */

import type {
  Lease,
  PushOptions,
  QueueBatchOperation,
  QueueItem,
  QueueOptions,
  QueueRef,
  SyncQueue,
} from "./queue-types.js";

export type * from "./queue-types.js";
export type * from "./topic-types.js";
export type * from "./change-types.js";
import type { ApplyChangeOptions, ApplyChangeResult, Change, ChangeRetentionOptions, ChangesOptions, CheckpointResult } from "./change-types.js";
import type { SyncTopic, TopicBatchOperation, TopicOptions, TopicRef, RecordHeaders } from "./topic-types.js";

/**
 * Encodings of keys: `"utf8"` (JS strings, stored as their UTF-8 bytes; a string with a lone
 * surrogate, which UTF-8 cannot hold, is `INVALID_ARGUMENT`) or `"binary"`.
 */
export type KeyEncoding = "utf8" | "binary";

/**
 * Encodings of values: `"utf8"` (strings, well-formed as for keys), `"binary"`, or `"json"` (any
 * JSON-serialisable value).
 */
export type ValueEncoding = "utf8" | "binary" | "json";

/** A value the `"json"` encoding round-trips. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/** The JS type of a key in encoding `E`. */
export type KeyOf<E extends KeyEncoding> = E extends "binary" ? Uint8Array : string;

/** The JS type of a value in encoding `E`. */
export type ValueOf<E extends ValueEncoding> = E extends "binary"
  ? Uint8Array
  : E extends "json"
    ? JsonValue
    : string;

/** How the keys and values of a database or keyspace are encoded (default `"utf8"` both). */
export interface EncodingOptions<KE extends KeyEncoding, VE extends ValueEncoding> {
  keyEncoding?: KE;
  valueEncoding?: VE;
}

/** Options of `open` / `openSync`. Sizes are in bytes. */
export interface OpenOptions<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">
  extends EncodingOptions<KE, VE> {
  /** Create the database if the directory holds none (default `true`). */
  createIfMissing?: boolean;
  /** Fail with `ALREADY_EXISTS` if a database is already there (default `false`). */
  errorIfExists?: boolean;
  /** Writes collected in memory before they are flushed to a table (default 4 MiB). */
  memtableSize?: number;
  /** Block cache budget (default 16 MiB). */
  blockCacheSize?: number;
  /** Snappy-compress table blocks where it pays (default `true`). */
  compression?: boolean;
  /** Bloom filter bits per key (default 10; 0 disables filters). */
  bloomBitsPerKey?: number;
  /**
   * Run flush and compaction by themselves, in steps of a few milliseconds when the event loop
   * is idle (default `true`). With `false`, call `maintain()` yourself; writes still do one
   * bounded step inline when the debt grows past its bound.
   */
  autoMaintenance?: boolean;
  /**
   * Node's Promise API (`open`): where the engine runs. `"own"` (the default): in a worker
   * thread of its own, so no call holds up the event loop (flush, compaction and `compact()`
   * included), at the cost of a thread hop per awaited call (requests made in one turn travel
   * together). `"caller"`: in the calling thread, with no hop — fastest for awaited single calls
   * (scripts, bulk loads) — but maintenance steps and their fsyncs then run on the event loop.
   * Ignored by `openSync` (always the calling thread) and in browsers (always the database's
   * worker).
   */
  engineThread?: "own" | "caller";
  /**
   * Open as a follower of another database (default `false`): every write fails with
   * `READ_ONLY` except `applyChanges`, which applies the leader's change feed with the leader's
   * sequence numbers. Reads, snapshots, checkpoints and its own change feed work as usual.
   */
  follower?: boolean;
  /**
   * Keep committed batches for the change feed after their flush, and stamp each with its
   * commit time (`Change.time`). Without it, batches go once flushed unless a change cursor
   * (`ackChanges`) holds them. `{}`: only cursors hold them, but batches carry their time.
   */
  changes?: ChangeRetentionOptions;
}

/** Options of one write. */
export interface WriteOptions {
  /**
   * `false` (default): when the call returns, the write has reached the operating system, so it
   * survives the process being killed. `true`: it has been flushed to stable storage
   * (`fdatasync`), so it survives power loss.
   */
  sync?: boolean;
}

/** Options of an array batch (`db.batch(operations, options)`). */
export interface BatchOptions extends WriteOptions {
  /**
   * Attached to the batch for the change feed (`Change.meta`): an idempotency key, the origin
   * of a replicated write. A string is stored UTF-8 encoded; at most 64 KiB.
   */
  meta?: string | Uint8Array;
}

/** A range of keys. Bounds combine (all must hold); key order is byte order. */
export interface RangeOptions<K> {
  gt?: K;
  gte?: K;
  lt?: K;
  lte?: K;
  /** Only keys starting with these bytes. */
  prefix?: K;
}

/** Options of a read: which snapshot it sees (default: the latest state). */
export interface ReadOptions {
  snapshot?: Snapshot;
}

/** Options of iteration. Iterators always see one consistent snapshot. */
export interface IteratorOptions<K> extends RangeOptions<K>, ReadOptions {
  /** From the last key backwards. */
  reverse?: boolean;
  /** At most this many entries. */
  limit?: number;
}

/** A synchronous iterator over entries, keys or values. Close it, or let it run to its end. */
export interface SyncEntryIterator<T> extends IterableIterator<T>, Disposable {
  /** Releases the snapshot and tables it pins. Idempotent. */
  close(): void;
}

/** A consistent, read-only view of the database at one moment; pass it as `{ snapshot }`. */
export interface Snapshot extends Disposable {
  /** Releases it, so compaction may drop what only it saw. Idempotent. */
  close(): void;
  readonly closed: boolean;
}

/**
 * Whether the file system makes creations, renames and removals durable: `"ok"`, it does (every
 * directory sync so far succeeded; opening a database does one); `"unsupported"`, it refused to
 * sync the directory (some file systems cannot), so after a power loss a file created or renamed
 * since may be missing or have its old name. Writes never fail because of it.
 */
export type DirectorySync = "ok" | "unsupported";

/** Sizes and counts of a database. */
export interface Stats {
  /** Entries in tables and memtables (every version and tombstone counts). */
  entries: number;
  /** Per LSM level: number of table files and their bytes. */
  levels: { files: number; bytes: number }[];
  /** Bytes written to the WAL and tables per byte of user writes. */
  writeAmplification: number;
  userBytesWritten: number;
  memtableBytes: number;
  cacheBytes: number;
  tableBytes: number;
  /** Whether directory syncs work here (see {@link DirectorySync}); always `"ok"` in browsers. */
  directorySync: DirectorySync;
}

/**
 * One operation of an array batch. Without `keyspace`, in the database's default keyspace; with
 * one (a keyspace object of the same database, as `db.keyspace(name)` returns it; not its
 * name), in that keyspace, with its encodings.
 */
export type BatchOperation<K, V> =
  | { type: "put"; key: K; value: V; keyspace?: undefined }
  | { type: "delete"; key: K; keyspace?: undefined }
  | KeyspaceBatchOperation<unknown, unknown>
  | QueueBatchOperation<unknown>
  | TopicBatchOperation<unknown, unknown>;

/** An operation of an array batch in keyspace `keyspace` (annotate it to check its types). */
export type KeyspaceBatchOperation<K, V> =
  | { type: "put"; key: K; value: V; keyspace: KeyspaceRef<K, V> }
  | { type: "delete"; key: K; keyspace: KeyspaceRef<K, V> };

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
export interface SyncStore<K, V> {
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
  iterator(options?: IteratorOptions<K>): SyncEntryIterator<[K, V]>;
  keys(options?: IteratorOptions<K>): SyncEntryIterator<K>;
  values(options?: IteratorOptions<K>): SyncEntryIterator<V>;
  /** The number of keys in the range (it walks them). */
  count(options?: IteratorOptions<K>): number;
}

/** A named keyspace of a synchronous database. */
export interface SyncKeyspace<K, V> extends SyncStore<K, V>, KeyspaceRef<K, V> {}

/** An atomic batch: every operation is applied, or none. */
export interface SyncBatch<K, V> {
  put(key: K, value: V): this;
  put<K2, V2>(key: K2, value: V2, keyspace: KeyspaceRef<K2, V2>): this;
  delete(key: K): this;
  delete<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): this;
  deleteRange(range: { gte: K; lt: K }): this;
  deleteRange<K2, V2>(range: { gte: K2; lt: K2 }, keyspace: KeyspaceRef<K2, V2>): this;
  /** Operations queued. */
  readonly length: number;
  /** Applies the batch atomically and empties it. */
  write(options?: WriteOptions): void;
  clear(): void;
}

/**
 * An optimistic transaction: reads see a snapshot plus the transaction's own writes; `commit`
 * applies the writes atomically unless a key it read was changed by someone else meanwhile —
 * then it throws `CONFLICT`, writes nothing, and the caller retries.
 */
export interface SyncTransaction<K, V> extends Disposable {
  get(key: K): V | undefined;
  get<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): V2 | undefined;
  put(key: K, value: V): void;
  put<K2, V2>(key: K2, value: V2, keyspace: KeyspaceRef<K2, V2>): void;
  delete(key: K): void;
  delete<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): void;
  /** Adds a push to `queue` (a queue of this database); its id comes with the commit. */
  push<V2>(queue: QueueRef<V2>, value: V2, options?: Omit<PushOptions, "sync">): void;
  /** Adds an ack of a reservation of `queue`: an unknown or expired one fails the commit. */
  ack<V2>(queue: QueueRef<V2>, itemOrLease: QueueItem<V2> | Lease): void;
  /** Adds an append to `topic` (a topic of this database); its offset comes with the commit. */
  append<V2, K2>(topic: TopicRef<V2, K2>, value: V2, options?: { key?: K2; headers?: RecordHeaders }): void;
  /** Adds the commit of `offset` as group `group`'s committed offset of `topic`. */
  commitOffset<V2, K2>(topic: TopicRef<V2, K2>, group: string, offset: number): void;
  /**
   * Commits atomically; returns the ids of its queue pushes and the offsets of its topic
   * appends, in the order added (none: `[]`).
   */
  commit(options?: WriteOptions): number[];
  /** Discards the writes (also what `[Symbol.dispose]` does to an uncommitted transaction). */
  rollback(): void;
}

/** The synchronous API (Node: `openSync`), like better-sqlite3 and lmdb. */
export interface SyncDatabase<K, V> extends SyncStore<K, V>, Disposable {
  /** The directory of the database. */
  readonly location: string;
  readonly closed: boolean;
  /** Opens (creating it if needed) keyspace `name`, with its own encodings. */
  keyspace<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
    name: string,
    options?: EncodingOptions<KE, VE>,
  ): SyncKeyspace<KeyOf<KE>, ValueOf<VE>>;
  /** A chained batch. */
  batch(): SyncBatch<K, V>;
  /**
   * Applies `operations` atomically (each in its `keyspace`, default the database's; queue
   * pushes and acks, topic appends and offset commits too); returns the ids of its queue pushes
   * and the offsets of its topic appends, in the order added (none: `[]`).
   */
  batch(operations: readonly BatchOperation<K, V>[], options?: BatchOptions): number[];
  /**
   * Opens durable queue `name` (1 to 200 bytes of UTF-8, no NUL), creating it if missing: see
   * {@link QueueOptions} for what options with settings do to a stored configuration.
   */
  queue<VE extends ValueEncoding = "utf8">(name: string, options?: QueueOptions<VE>): SyncQueue<ValueOf<VE>>;
  /** The names of the queues, sorted. */
  queues(): string[];
  /** Deletes queue `name` and its items; `false` if there was none. Its handles stop working. */
  deleteQueue(name: string): boolean;
  /**
   * Opens topic log `name` (1 to 200 bytes of UTF-8, no NUL), creating it if missing: see
   * {@link TopicOptions} for what options with retention settings do to a stored configuration.
   */
  topic<VE extends ValueEncoding = "utf8", KE extends KeyEncoding = "utf8">(
    name: string,
    options?: TopicOptions<VE, KE>,
  ): SyncTopic<ValueOf<VE>, KeyOf<KE>>;
  /** The names of the topics, sorted. */
  topics(): string[];
  /** Deletes topic `name`, its records and groups; `false` if there was none. Its handles stop working. */
  deleteTopic(name: string): boolean;
  snapshot(): Snapshot;
  transaction(): SyncTransaction<K, V>;
  /**
   * Runs `body` in a transaction and commits it, retrying on `CONFLICT` (up to `retries`
   * times, a non-negative integer, default 10). Returns what `body` returned.
   */
  transact<T>(body: (tx: SyncTransaction<K, V>) => T, options?: WriteOptions & { retries?: number }): T;
  /** Writes the memtable to a table file. */
  flush(): void;
  /** Compacts the key range (default: everything) down the tree. */
  compact(range?: { start?: K; end?: K }): void;
  /** One bounded step of flush or compaction; returns whether more work is pending. */
  maintain(budgetBytes?: number): boolean;
  /**
   * Writes a consistent copy of the database into directory `destination`, which must not
   * exist or be empty (created if missing); one holding any file is `ALREADY_EXISTS`.
   */
  checkpoint(destination: string): CheckpointResult;
  /**
   * The changes committed so far from `since` on, in commit order (read lazily, in chunks).
   * `CHANGES_TRUNCATED` (with `details.oldest`) if batches from `since` are no longer kept.
   */
  changes(options?: ChangesOptions): IterableIterator<Change>;
  /** The sequence number of the last committed operation (0: none yet). */
  sequence(): number;
  /**
   * Moves durable change cursor `cursor` (1 to 200 bytes of UTF-8, no NUL; created if
   * missing) to `seq`: logs holding later batches are kept until every cursor passed them.
   */
  ackChanges(cursor: string, seq: number): void;
  /** Where change cursor `cursor` stands, if it exists. */
  changeCursor(cursor: string): number | undefined;
  /** Removes change cursor `cursor`; `false` if there was none. */
  removeChangeCursor(cursor: string): boolean;
  /**
   * On a follower (`follower: true`): applies a change of the leader's feed (a `Change` or its
   * `bytes`) with the leader's sequence numbers. One applied before is skipped
   * (`applied: false`); one that does not continue the follower is `CHANGE_GAP`.
   */
  applyChanges(change: Change | Uint8Array, options?: ApplyChangeOptions): ApplyChangeResult;
  stats(): Stats;
  /** Closes the database; pending writes are durable per their `sync` option. Idempotent. */
  close(): void;
}
