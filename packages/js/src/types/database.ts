/**
 * The database, in both APIs, and its figures.
 *
 * @module
 */
import type { Promised } from "./promised.js";
import type { ApplyChangeOptions, ApplyChangeResult, Change, ChangesFollowOptions, ChangesOptions, CheckpointResult } from "./changes.js";
import type { EncodingOptions, JsonEncoded, KeyEncoding, KeyOf, ValueEncoding, ValueOf } from "./encodings.js";
import type { Batch, BatchOperation, SyncBatch } from "./batch.js";
import type { Keyspace, Store, SyncKeyspace, SyncStore } from "./keyspace.js";
import type { Snapshot } from "./snapshot.js";
import type { BatchOptions, WriteOptions } from "./options.js";
import type { Queue, QueueOptions, SyncQueue } from "./queue.js";
import type { SyncTopic, Topic, TopicOptions } from "./topic.js";
import type { SyncTransaction, Transaction } from "./transaction.js";

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
  /**
   * Flushes and compactions run as jobs in another thread and installed since open (Node's
   * Promise API runs them in its maintenance worker; elsewhere 0).
   */
  jobsInstalled: number;
  /** Whether directory syncs work here (see {@link DirectorySync}); always `"ok"` in browsers. */
  directorySync: DirectorySync;
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
  /** Keyspace `name` with `"json"` values of type `V`: `db.keyspace<Order>("orders", { valueEncoding: "json" })`. */
  keyspace<V, KE extends KeyEncoding = "utf8">(
    name: string,
    options: JsonEncoded<EncodingOptions<KE, "json">>,
  ): SyncKeyspace<KeyOf<KE>, V>;
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
   * On a database opened `readOnly`: reads what its writer (another process or thread) did
   * since the open or the last catch-up, so that reads started from now on see it (snapshots
   * and iterators already open keep their state). `INVALID_ARGUMENT` on a database not opened
   * read-only.
   */
  catchUp(): void;
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

/** Methods of {@link SyncDatabase} whose Promise form only resolves with their result. */
type SameInBothApis =
  | "location"
  | "closed"
  | "queues"
  | "topics"
  | "snapshot"
  | "flush"
  | "compact"
  | "maintain"
  | "sequence"
  | "catchUp"
  | "ackChanges"
  | "changeCursor"
  | "removeChangeCursor"
  | "applyChanges"
  | "stats"
  | "close";

/**
 * The Promise API: the same in Node (`open`) and in browsers. The methods of
 * {@link SyncDatabase} resolving with their results, and these, whose Promise form differs.
 */
export interface Database<K, V> extends Store<K, V>, Promised<Pick<SyncDatabase<K, V>, SameInBothApis>>, AsyncDisposable {
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
  /**
   * Deletes topic `name`, its records and groups; `false` if there was none. Its subscriptions
   * end with an error; a handle of it used afterwards opens it anew (empty, default options).
   */
  deleteTopic(name: string): Promise<boolean>;
  transaction(): Promise<Transaction<K, V>>;
  /** See {@link SyncDatabase.transact}: `body` may be asynchronous. */
  transact<T>(
    body: (tx: Transaction<K, V>) => Promise<T>,
    options?: WriteOptions & { retries?: number },
  ): Promise<T>;
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
  /**
   * A plain tar archive of a checkpoint of the database (docs/FORMAT.md, "Export archive"),
   * the same in browsers and Node.js: `importDatabase` of either reads it.
   */
  export(): Promise<Blob>;
}
