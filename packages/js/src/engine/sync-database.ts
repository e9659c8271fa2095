/**
 * The synchronous database (`openSync` in Node), and opening one on any storage bridge.
 *
 * @module
 */
import { compactRange, maintainBudget, pathArgument, transactArguments } from "../arguments/checks.js";
import { SyncBatchImpl } from "./batch.js";
import { keyCodec, valueCodec, type Codec } from "../encoding/codec.js";
import { DatabaseHandle } from "./database-handle.js";
import { call, ensureLoadedSync, wasm } from "./instance.js";
import { ShaleError } from "../errors.js";
import { keyspaceCodecs } from "../arguments/keyspace-options.js";
import { checkOpenOptions } from "../arguments/open-options.js";
import { packOperations } from "../encoding/packed-ops.js";
import { writePacked } from "./write-packed.js";
import { checkKeyspaceEncodings } from "./keyspace-encodings.js";
import { batchOptions } from "../arguments/change-options.js";
import { ackChanges, applyChanges, changeCursor, removeChangeCursor, sequence, syncChanges } from "./changes.js";
import { SnapshotImpl } from "./snapshot.js";
import type { StorageHost } from "./storage-host.js";
import type { JobDatabase } from "./job-maintenance.js";
import { StoreImpl, storeOf } from "./store.js";
import { SyncTransactionImpl } from "./transaction.js";
import { syncQueue, syncQueueOf } from "./queue.js";
import { queueName } from "../arguments/queue-options.js";
import { syncTopic, syncTopicOf } from "./topic.js";
import { topicName } from "../arguments/topic-options.js";
import type {
  ApplyChangeOptions,
  ApplyChangeResult,
  BatchOptions,
  Change,
  ChangesOptions,
  CheckpointResult,
  BatchOperation,
  EncodingOptions,
  KeyEncoding,
  JsonEncoded,
  KeyOf,
  OpenOptions,
  QueueOptions,
  Snapshot,
  Stats,
  SyncBatch,
  SyncDatabase,
  SyncKeyspace,
  SyncQueue,
  SyncTopic,
  SyncTransaction,
  TopicOptions,
  ValueEncoding,
  ValueOf,
  WriteOptions,
} from "../types.js";
import { requirePart } from "./module-parts.js";

/** Where databases live: a directory of files behind a storage bridge. */
export interface Environment {
  /** The canonical form of `location` (an absolute path in Node). */
  resolve(location: string): string;
  /** The storage bridge of directory `location`; `create`: make the directory if missing. */
  storage(location: string, create: boolean): StorageHost;
}

/** A `ShaleError` for a failure to reach the directory itself. */
function storageError(location: string, error: unknown): ShaleError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return new ShaleError(
    code === "ENOENT" ? "NOT_FOUND" : "IO",
    `shaledb: cannot open the directory ${location}: ${message}` +
      (code === "ENOENT" ? " (it does not exist and createIfMissing is false)" : ""),
    { cause: error },
  );
}

/** Opens the database at `location` in `env` synchronously. */
export function openDatabaseSync(
  env: Environment,
  location: string,
  options?: OpenOptions<KeyEncoding, ValueEncoding>,
): SyncDatabaseImpl {
  pathArgument(location, "the location");
  const o = checkOpenOptions(options);

  ensureLoadedSync();
  const resolved = env.resolve(location);
  let storage: StorageHost;
  try {
    // A read-only open writes nothing, not even the directory.
    storage = env.storage(resolved, o.createIfMissing && !o.readOnly);
  } catch (error) {
    throw storageError(resolved, error);
  }
  let id: number;
  try {
    id = call(() =>
      wasm.dbOpen(
        storage,
        o.createIfMissing,
        o.errorIfExists,
        o.memtableSize,
        o.blockCacheSize,
        o.compression,
        o.bloomBitsPerKey,
        o.follower,
        o.readOnly,
        o.changes.retain,
        o.changes.retainMs,
        o.changes.retainBytes,
      ),
    );
  } catch (error) {
    storage.releaseAll();
    throw error;
  }
  // A read-only database maintains nothing: its files are the writer's.
  const handle = new DatabaseHandle(id, storage, resolved, o.autoMaintenance && !o.readOnly);
  // Work left by an earlier process (immutable memtables recovered, a deep L0) starts now.
  handle.afterWrite();
  const db = new SyncDatabaseImpl(handle, env, o.keys, o.values, o.catchUpIntervalMs, !o.readOnly && !o.follower);
  try {
    SyncDatabaseImpl.checkEncodings(db, "default", o.keys.name, o.values.name);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

export class SyncDatabaseImpl extends StoreImpl implements SyncDatabase<unknown, unknown> {
  readonly #env: Environment;
  /** The `catchUpIntervalMs` timer, cleared by `close()`. */
  #catchUpTimer: ReturnType<typeof setInterval> | undefined;
  /** Whether keyspaces' encodings are recorded (not on a read-only open or a follower). */
  readonly #recordEncodings: boolean;

  constructor(
    handle: DatabaseHandle,
    env: Environment,
    keys: Codec<unknown>,
    values: Codec<unknown>,
    catchUpIntervalMs = 0,
    recordEncodings = true,
  ) {
    super(handle, 0, "default", keys, values);
    this.#env = env;
    this.#recordEncodings = recordEncodings;
    if (catchUpIntervalMs > 0) {
      this.#catchUpEvery(catchUpIntervalMs);
    }
  }

  get location(): string {
    return this.db.location;
  }

  get closed(): boolean {
    return this.db.closed;
  }

  keyspace<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
    name: string,
    options?: EncodingOptions<KE, VE>,
  ): SyncKeyspace<KeyOf<KE>, ValueOf<VE>>;
  keyspace<V, KE extends KeyEncoding = "utf8">(
    name: string,
    options: JsonEncoded<EncodingOptions<KE, "json">>,
  ): SyncKeyspace<KeyOf<KE>, V>;
  keyspace(name: string, options?: EncodingOptions<KeyEncoding, ValueEncoding>): SyncKeyspace<unknown, unknown> {
    const { keys, values } = keyspaceCodecs(name, options);
    const index = this.db.write(() => wasm.dbKeyspace(this.db.id, name, false));
    checkKeyspaceEncodings(this.db, index, name, keys.name, values.name, this.#recordEncodings);
    return new StoreImpl(this.db, index, name, keys, values) as unknown as SyncKeyspace<unknown, unknown>;
  }

  /**
   * Checks (and records, see `./keyspace-encodings.ts`) the encodings named `keys` and `values`
   * for keyspace `name` (`"default"`: the database's own), as the Promise API's server does for
   * its clients. `ENCODING_MISMATCH` if others are recorded. (Static: not a method of the
   * public object.)
   */
  static checkEncodings(db: SyncDatabaseImpl, name: string, keys: string, values: string): void {
    const index = name === "default" ? 0 : db.db.write(() => wasm.dbKeyspace(db.db.id, name, false));
    checkKeyspaceEncodings(db.db, index, name, keys, values, db.#recordEncodings);
  }

  batch(): SyncBatch<unknown, unknown>;
  batch(operations: readonly BatchOperation<unknown, unknown>[], options?: BatchOptions): number[];
  batch(
    operations?: readonly BatchOperation<unknown, unknown>[],
    options?: BatchOptions,
  ): SyncBatch<unknown, unknown> | number[] {
    if (operations === undefined) {
      this.db.check();
      return new SyncBatchImpl(this.db, this);
    }
    const { sync, meta } = batchOptions(options);
    const ops = packOperations(
      (keyspace) => storeOf(this, keyspace),
      operations,
      (queue) => syncQueueOf(this.db, queue),
      (topic) => syncTopicOf(this.db, topic),
      meta,
    );
    return writePacked(this.db, ops, sync);
  }

  queue<VE extends ValueEncoding = "utf8">(name: string, options?: QueueOptions<VE>): SyncQueue<ValueOf<VE>> {
    return syncQueue(this.db, name, options) as unknown as SyncQueue<ValueOf<VE>>;
  }

  queues(): string[] {
    requirePart("queues");
    return this.db.call(() => wasm.dbQueues(this.db.id));
  }

  deleteQueue(name: string): boolean {
    const checked = queueName(name);
    requirePart("queues");
    const deleted = this.db.write(() => wasm.dbDeleteQueue(this.db.id, checked));
    this.db.afterWrite(); // waiting reads of it wake up, and fail
    return deleted;
  }

  topic<VE extends ValueEncoding = "utf8", KE extends KeyEncoding = "utf8">(
    name: string,
    options?: TopicOptions<VE, KE>,
  ): SyncTopic<ValueOf<VE>, KeyOf<KE>> {
    return syncTopic(this.db, name, options) as unknown as SyncTopic<ValueOf<VE>, KeyOf<KE>>;
  }

  topics(): string[] {
    requirePart("topics");
    return this.db.call(() => wasm.dbTopics(this.db.id));
  }

  deleteTopic(name: string): boolean {
    const checked = topicName(name);
    requirePart("topics");
    const deleted = this.db.write(() => wasm.dbDeleteTopic(this.db.id, checked));
    this.db.afterWrite(); // waiting subscriptions of it wake up, and end
    return deleted;
  }

  snapshot(): Snapshot {
    return SnapshotImpl.open(this.db);
  }

  transaction(): SyncTransaction<unknown, unknown> {
    return SyncTransactionImpl.begin(this.db, this);
  }

  transact<T>(
    body: (tx: SyncTransaction<unknown, unknown>) => T,
    options?: WriteOptions & { retries?: number },
  ): T {
    const { retries, write } = transactArguments(body, options);
    for (let attempt = 0; ; attempt++) {
      const tx = this.transaction();
      try {
        const result = body(tx);
        tx.commit(write);
        return result;
      } catch (error) {
        tx.rollback();
        const conflict = (error as { code?: unknown }).code === "CONFLICT";
        if (!conflict || attempt >= retries) {
          throw error;
        }
      }
    }
  }

  flush(): void {
    this.db.write(() => wasm.dbFlush(this.db.id));
  }

  compact(range?: { start?: unknown; end?: unknown }): void {
    const bounds = compactRange(range);
    const start = bounds.start === undefined ? undefined : this.keyCodec.encode(bounds.start, "start");
    const end = bounds.end === undefined ? undefined : this.keyCodec.encode(bounds.end, "end");
    this.db.write(() => wasm.dbCompact(this.db.id, 0, start, end));
  }

  maintain(budgetBytes = 1 << 20): boolean {
    const budget = maintainBudget(budgetBytes);
    return this.db.write(() => wasm.dbMaintain(this.db.id, budget));
  }

  checkpoint(destination: string): CheckpointResult {
    pathArgument(destination, "the checkpoint's destination directory");
    this.db.check();
    const resolved = this.#env.resolve(destination);
    let storage: StorageHost;
    try {
      storage = this.#env.storage(resolved, true);
    } catch (error) {
      throw storageError(resolved, error);
    }
    try {
      return { seq: checkpointTo(this, storage) };
    } finally {
      storage.releaseAll();
    }
  }

  changes(options?: ChangesOptions): IterableIterator<Change> {
    return syncChanges(this.db, options);
  }

  sequence(): number {
    return sequence(this.db);
  }

  ackChanges(cursor: string, seq: number): void {
    ackChanges(this.db, cursor, seq);
  }

  changeCursor(cursor: string): number | undefined {
    return changeCursor(this.db, cursor);
  }

  removeChangeCursor(cursor: string): boolean {
    return removeChangeCursor(this.db, cursor);
  }

  applyChanges(change: Change | Uint8Array, options?: ApplyChangeOptions): ApplyChangeResult {
    return applyChanges(this.db, change, options);
  }

  stats(): Stats {
    const f = this.db.call(() => wasm.dbStats(this.db.id));
    const n = f[6] ?? 0;
    const levels: Stats["levels"] = [];
    for (let i = 0; i < n; i++) {
      levels.push({ files: f[7 + 2 * i] ?? 0, bytes: f[8 + 2 * i] ?? 0 });
    }
    return {
      entries: f[0] ?? 0,
      levels,
      writeAmplification: f[1] ?? 0,
      userBytesWritten: f[2] ?? 0,
      memtableBytes: f[3] ?? 0,
      cacheBytes: f[4] ?? 0,
      tableBytes: f[5] ?? 0,
      jobsInstalled: f[7 + 2 * n] ?? 0,
      directorySync: this.db.storage.directorySync ?? "ok",
    };
  }

  catchUp(): void {
    this.db.call(() => wasm.dbCatchUp(this.db.id));
    // Feeds that follow the database see what was caught up.
    this.db.afterWrite();
  }

  /**
   * Catches up every `ms` milliseconds until closed (`catchUpIntervalMs`). A failed catch-up
   * is tried again at the next tick (the next `catchUp()` call reports it); the timer does not
   * keep the process alive.
   */
  #catchUpEvery(ms: number): void {
    const timer = setInterval(() => {
      if (this.db.closed) {
        clearInterval(timer);
        return;
      }
      try {
        this.catchUp();
      } catch {
        // Reported by the next catchUp() the caller makes; tried again at the next tick.
      }
    }, ms);
    (timer as { unref?: () => void }).unref?.();
    this.#catchUpTimer = timer;
  }

  close(): void {
    if (this.#catchUpTimer !== undefined) {
      clearInterval(this.#catchUpTimer);
      this.#catchUpTimer = undefined;
    }
    this.db.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Writes a consistent copy of `db` into `storage`, which must hold no file (the caller releases
 * it); returns the sequence number the copy is consistent at.
 */
export function checkpointTo(db: SyncDatabaseImpl, storage: StorageHost): number {
  return db.db.call(() => wasm.dbCheckpoint(db.db.id, storage));
}

/** Makes the memtable of `db` immutable, for later maintenance steps to flush (before idling). */
export function sealMemtable(db: SyncDatabaseImpl): void {
  db.db.write(() => wasm.dbSealMemtable(db.db.id));
}

/** `db` as maintenance jobs see it (`job-maintenance.ts`); not methods, to stay out of the public objects. */
export function jobDatabase(db: SyncDatabaseImpl): JobDatabase {
  const handle = db.db;
  return {
    nextJob: () => handle.write(() => wasm.dbNextJob(handle.id)),
    nextLogJob: () => handle.write(() => wasm.dbNextLogJob(handle.id)),
    installJob: (output) => handle.write(() => wasm.dbInstallJob(handle.id, output)),
    laneOf: (job) => (wasm.jobRunsLong(job) ? "compaction" : "flush"),
    abandonJob: (job) => {
      handle.call(() => wasm.dbAbandonJob(handle.id, job));
    },
    useJobs: (on) => {
      handle.call(() => wasm.dbUseJobs(handle.id, on));
    },
    requestCompaction: (start, end) => handle.write(() => wasm.dbRequestCompaction(handle.id, 0, start, end)),
    compactionsDone: () => handle.call(() => wasm.dbCompactionsDone(handle.id)),
    writeWouldFlush: () => handle.call(() => wasm.dbWriteWouldFlush(handle.id)),
    compactHere: (start, end) => {
      db.compact({ start, end });
    },
  };
}

/**
 * One of ShaleDB's own keyspaces of `db` (`name` starts with `RESERVED_KEYSPACE_PREFIX`), with
 * binary keys and values: for the layers built on the engine (`../server/applied-writes.ts`); not
 * a method, so that it stays out of the public objects.
 */
export function reservedKeyspace(db: SyncDatabaseImpl, name: string): StoreImpl {
  const index = db.db.write(() => wasm.dbKeyspace(db.db.id, name, true));
  return new StoreImpl(db.db, index, name, keyCodec("binary"), valueCodec("binary"));
}

/**
 * Deferred WAL syncs of `db` (`crates/wasm/src/wal_sync.rs`), for a server whose thread must
 * not wait on the disk: while on, a write returns once it is in the log and the memtable, and
 * is visible (durable, if it asked) once {@link commitSeqs}' visible number reaches the last
 * number assigned when it returned.
 */
export function setDeferredSync(db: SyncDatabaseImpl, on: boolean): void {
  db.db.call(() => wasm.dbSetDeferredSync(db.db.id, on));
}

/** `[visible, last assigned]` sequence numbers of `db`. */
export function commitSeqs(db: SyncDatabaseImpl): readonly [number, number] {
  const seqs = db.db.call(() => wasm.dbCommitSeqs(db.db.id));
  return [seqs[0] ?? 0, seqs[1] ?? 0];
}

/**
 * Starts the deferred sync that waiting writes need: the storage host's id of the file to sync
 * (then report with {@link finishWalSync}, running nothing else on `db` in between), or `-1` if
 * none is needed. The file may be an older log, sealed without a sync, that must be durable
 * first: call again until `-1`. Throws the poisoning error.
 */
export function beginWalSync(db: SyncDatabaseImpl): number {
  return db.db.call(() => wasm.dbBeginWalSync(db.db.id));
}

/**
 * Reports the outcome of the sync {@link beginWalSync} started (`error`: what the sync threw,
 * `undefined` on success). A failure poisons `db` and is thrown as the error later writes get.
 */
export function finishWalSync(db: SyncDatabaseImpl, error: unknown): void {
  db.db.call(() => wasm.dbFinishWalSync(db.db.id, error));
}
