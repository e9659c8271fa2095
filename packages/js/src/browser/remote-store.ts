/**
 * The Promise API in a browser page: the same `Database` as Node's `open` returns, backed by the
 * worker that owns the database. Keys and values are encoded here, so the worker sees bytes and
 * a value of the wrong type fails at once, before anything crosses.
 *
 * @module
 */
import {
  compactRange,
  deleteRangeArgument,
  keysArray,
  maintainBudget,
  pathArgument,
  readSnapshot,
  syncOption,
} from "../arguments.js";
import type { Codec } from "../codec.js";
import { closedError, type ShaleErrorCode } from "../errors.js";
import type { IterationMode } from "../entry-batch.js";
import { keyspaceCodecs } from "../keyspace-args.js";
import { OP_DELETE, OP_DELETE_RANGE, OP_PUT, PackedOps, packOperations } from "../packed-ops.js";
import { settle } from "../settle.js";
import { runTransaction } from "../transact.js";
import type {
  AsyncEntryIterator,
  Batch,
  BatchOperation,
  Database,
  EncodingOptions,
  IteratorOptions,
  KeyEncoding,
  KeyOf,
  Keyspace,
  KeyspaceRef,
  ReadOptions,
  Snapshot,
  Transaction,
  ValueEncoding,
  ValueOf,
  WriteOptions,
} from "../types.js";
import { checkUserKeyspaceName } from "./applied-writes.js";
import type { Connection } from "./connection.js";
import { ownBytes } from "./own-bytes.js";
import type { BrowserStats } from "./protocol.js";
import { wireRange, RemoteIterator } from "./remote-iterator.js";
import { RemoteSnapshot, RemoteTransaction, snapshotTarget, storeOf } from "./remote-resources.js";


/** One keyspace (the database itself is the default one's store). */
export class RemoteStore implements Keyspace<unknown, unknown> {
  constructor(
    readonly connection: Connection,
    /** The keyspace's number in its database (0 = default). */
    readonly keyspaceId: number,
    readonly name: string,
    readonly keyCodec: Codec<unknown>,
    readonly valueCodec: Codec<unknown>,
  ) {}

  encodeKey(key: unknown): Uint8Array {
    return ownBytes(this.keyCodec.encode(key, "key"));
  }

  encodeValue(value: unknown): Uint8Array {
    return ownBytes(this.valueCodec.encode(value, "value"));
  }

  #decode(value: Uint8Array | undefined): unknown {
    return value === undefined ? undefined : this.valueCodec.decode(value);
  }

  get(key: unknown, options?: ReadOptions): Promise<unknown> {
    return settle(() => {
      const k = this.encodeKey(key);
      const [snapshot, owner] = snapshotTarget(this.connection, readSnapshot(options));
      return this.connection
        .request("get", [this.keyspaceId, k, snapshot], owner)
        .then((v) => this.#decode(v));
    });
  }

  getMany(keys: readonly unknown[], options?: ReadOptions): Promise<unknown[]> {
    return settle(() => {
      const encoded = keysArray(keys).map((k) => this.encodeKey(k));
      const [snapshot, owner] = snapshotTarget(this.connection, readSnapshot(options));
      return this.connection
        .request("getMany", [this.keyspaceId, encoded, snapshot], owner)
        .then((values) => values.map((v) => this.#decode(v)));
    });
  }

  has(key: unknown, options?: ReadOptions): Promise<boolean> {
    return settle(() => {
      const k = this.encodeKey(key);
      const [snapshot, owner] = snapshotTarget(this.connection, readSnapshot(options));
      return this.connection.request("has", [this.keyspaceId, k, snapshot], owner);
    });
  }

  put(key: unknown, value: unknown, options?: WriteOptions): Promise<void> {
    return settle(() => {
      const args: [number, Uint8Array, Uint8Array, boolean] = [
        this.keyspaceId,
        this.encodeKey(key),
        this.encodeValue(value),
        syncOption(options),
      ];
      return this.connection.request("put", args);
    });
  }

  delete(key: unknown, options?: WriteOptions): Promise<void> {
    return settle(() =>
      this.connection.request("delete", [this.keyspaceId, this.encodeKey(key), syncOption(options)]),
    );
  }

  deleteRange(range: { gte: unknown; lt: unknown }, options?: WriteOptions): Promise<void> {
    return settle(() => {
      const { gte, lt } = deleteRangeArgument(range);
      const ops = new PackedOps();
      ops.add(
        OP_DELETE_RANGE,
        this.keyspaceId,
        this.keyCodec.encode(gte, "range.gte"),
        this.keyCodec.encode(lt, "range.lt"),
      );
      return this.connection.request("write", [ops.bytes().slice(), syncOption(options)]);
    });
  }

  #iterate<T>(mode: IterationMode, options: IteratorOptions<unknown> | undefined): RemoteIterator<T> {
    return new RemoteIterator<T>(this.connection, this.keyspaceId, options, mode, this.keyCodec, this.valueCodec);
  }

  iterator(options?: IteratorOptions<unknown>): AsyncEntryIterator<[unknown, unknown]> {
    return this.#iterate("entries", options);
  }

  keys(options?: IteratorOptions<unknown>): AsyncEntryIterator<unknown> {
    return this.#iterate("keys", options);
  }

  values(options?: IteratorOptions<unknown>): AsyncEntryIterator<unknown> {
    return this.#iterate("values", options);
  }

  count(options?: IteratorOptions<unknown>): Promise<number> {
    return settle(() => {
      const { range, owner } = wireRange(this.connection, options, this.keyCodec);
      if (range.limit === 0) {
        return Promise.resolve(0);
      }
      return this.connection.request("count", [this.keyspaceId, range], owner);
    });
  }
}

class RemoteBatch implements Batch<unknown, unknown> {
  readonly #ops = new PackedOps();

  constructor(readonly store: RemoteStore) {}

  put(key: unknown, value: unknown, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const s = storeOf(this.store, keyspace);
    this.#ops.add(OP_PUT, s.keyspaceId, s.encodeKey(key), s.encodeValue(value));
    return this;
  }

  delete(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const s = storeOf(this.store, keyspace);
    this.#ops.add(OP_DELETE, s.keyspaceId, s.encodeKey(key));
    return this;
  }

  deleteRange(range: { gte: unknown; lt: unknown }, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const { gte, lt } = deleteRangeArgument(range);
    const s = storeOf(this.store, keyspace);
    this.#ops.add(OP_DELETE_RANGE, s.keyspaceId, s.encodeKey(gte), s.encodeKey(lt));
    return this;
  }

  get length(): number {
    return this.#ops.count;
  }

  write(options?: WriteOptions): Promise<void> {
    return settle(() => {
      const sync = syncOption(options);
      if (this.#ops.count === 0) {
        return this.store.connection.closed
          ? Promise.reject(closedError("the database"))
          : Promise.resolve();
      }
      const bytes = this.#ops.bytes().slice();
      this.#ops.clear();
      return this.store.connection.request("write", [bytes, sync]);
    });
  }

  clear(): void {
    this.#ops.clear();
  }
}

/** Database handles in browsers: the shared Promise API, plus export. */
export interface BrowserDatabase<K, V> extends Database<K, V> {
  /** A plain tar archive of the database directory, for download (`importDatabase` reads it). */
  export(): Promise<Blob>;
  /** Sizes and counts, plus whether storage is persistent and the OPFS slot pool's size. */
  stats(): Promise<BrowserStats>;
}

export class RemoteDatabase extends RemoteStore implements BrowserDatabase<unknown, unknown> {
  constructor(connection: Connection, keys: Codec<unknown>, values: Codec<unknown>) {
    super(connection, 0, "default", keys, values);
  }

  get location(): string {
    return this.connection.name;
  }

  get closed(): boolean {
    return this.connection.closed;
  }

  keyspace<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
    name: string,
    options?: EncodingOptions<KE, VE>,
  ): Promise<Keyspace<KeyOf<KE>, ValueOf<VE>>> {
    return settle(async () => {
      const { keys, values } = keyspaceCodecs(name, options);
      checkUserKeyspaceName(name);
      const id = await this.connection.openKeyspace(name);
      return new RemoteStore(this.connection, id, name, keys, values) as unknown as Keyspace<
        KeyOf<KE>,
        ValueOf<VE>
      >;
    });
  }

  batch(): Batch<unknown, unknown>;
  batch(operations: readonly BatchOperation<unknown, unknown>[], options?: WriteOptions): Promise<void>;
  batch(
    operations?: readonly BatchOperation<unknown, unknown>[],
    options?: WriteOptions,
  ): Batch<unknown, unknown> | Promise<void> {
    if (operations === undefined) {
      if (this.connection.closed) {
        throw closedError("the database");
      }
      return new RemoteBatch(this);
    }
    return settle(() => {
      const packed = packOperations((keyspace) => storeOf(this, keyspace), operations);
      const sync = syncOption(options);
      if (packed.count === 0) {
        return this.connection.closed ? Promise.reject(closedError("the database")) : Promise.resolve();
      }
      return this.connection.request("write", [packed.bytes().slice(), sync]);
    });
  }

  snapshot(): Promise<Snapshot> {
    return settle(async () => {
      const [id, owner] = await this.connection.requestServed("snapshotOpen", []);
      return new RemoteSnapshot(this.connection, id, owner);
    });
  }

  transaction(): Promise<Transaction<unknown, unknown>> {
    return settle(async () => {
      const [id, owner] = await this.connection.requestServed("txOpen", []);
      return new RemoteTransaction(this, id, owner);
    });
  }

  transact<T>(
    body: (tx: Transaction<unknown, unknown>) => Promise<T>,
    options: WriteOptions & { retries?: number } = {},
  ): Promise<T> {
    return runTransaction(() => this.transaction(), body, options);
  }

  flush(): Promise<void> {
    return this.connection.request("flush", []);
  }

  compact(range?: { start?: unknown; end?: unknown }): Promise<void> {
    return settle(() => {
      const bounds = compactRange(range);
      const start = bounds.start === undefined ? undefined : ownBytes(this.keyCodec.encode(bounds.start, "start"));
      const end = bounds.end === undefined ? undefined : ownBytes(this.keyCodec.encode(bounds.end, "end"));
      return this.connection.request("compact", [start, end]);
    });
  }

  maintain(budgetBytes = 1 << 20): Promise<boolean> {
    return settle(() => this.connection.request("maintain", [maintainBudget(budgetBytes)]));
  }

  checkpoint(destination: string): Promise<void> {
    return settle(() => {
      pathArgument(destination, "the checkpoint's new database name");
      return this.connection.request("checkpoint", [destination]);
    });
  }

  stats(): Promise<BrowserStats> {
    return this.connection.request("stats", []);
  }

  export(): Promise<Blob> {
    return this.connection.request("export", []);
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** Panics inside the owner's WebAssembly module. For tests of the panic path only. @internal */
  debugPanic(message: string): Promise<void> {
    return this.connection.request("debugPanic", [message]);
  }

  /**
   * Tests only: the owner carries out this page's next message of requests without sending
   * the replies (as if its tab went away right after committing). @internal
   */
  debugLoseReplies(): Promise<void> {
    return this.connection.request("debugLoseReplies", []);
  }

  /** Tests only: the owner's next merged write fails with `code`. @internal */
  debugFailMergedWrite(code: ShaleErrorCode): Promise<void> {
    return this.connection.request("debugFailMergedWrite", [code]);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
