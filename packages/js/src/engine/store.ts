/**
 * Reads and writes of one keyspace (the database object is the default keyspace's store).
 *
 * @module
 */
import type { Codec } from "../encoding/codec.js";
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./instance.js";
import { deleteRangeArgument, keyspaceArgument, keysArray, readSnapshot, syncOption } from "../arguments/checks.js";
import { invalidArgument } from "../errors.js";
import { SyncIterator, type IterationMode } from "./iterator.js";
import { OP_DELETE_RANGE, PackedOps } from "../encoding/packed-ops.js";
import { writePacked } from "./write-packed.js";
import { readOutput, writeScratch } from "./scratch.js";
import { SnapshotImpl, snapshotId } from "./snapshot.js";
import type {
  IteratorOptions,
  KeyspaceRef,
  ReadOptions,
  SyncEntryIterator,
  SyncStore,
  WriteOptions,
} from "./types.js";

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

  encodeValue(value: unknown): Uint8Array {
    return this.valueCodec.encode(value, "value");
  }

  get(key: unknown, options?: ReadOptions): unknown {
    const k = this.encodeKey(key);
    const snapshot = snapshotId(this.db, readSnapshot(options));
    const db = this.db;
    const value = db.call(() => {
      writeScratch(k);
      const found = wasm.dbGetScratch(db.id, this.keyspaceId, k.length, snapshot);
      return found === 0 ? undefined : readOutput(found);
    });
    return value === undefined ? undefined : this.valueCodec.decode(value);
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
    const k = this.encodeKey(key);
    const snapshot = snapshotId(this.db, readSnapshot(options));
    const db = this.db;
    return db.call(() => {
      writeScratch(k);
      return wasm.dbGetScratch(db.id, this.keyspaceId, k.length, snapshot) !== 0;
    });
  }

  put(key: unknown, value: unknown, options?: WriteOptions): void {
    const k = this.encodeKey(key);
    const v = this.encodeValue(value);
    const sync = syncOption(options);
    const db = this.db;
    db.write(() => {
      writeScratch(k, v);
      wasm.dbPutScratch(db.id, this.keyspaceId, k.length, v.length, sync);
    });
    db.afterWrite();
  }

  delete(key: unknown, options?: WriteOptions): void {
    const k = this.encodeKey(key);
    const sync = syncOption(options);
    const db = this.db;
    db.write(() => {
      writeScratch(k);
      wasm.dbDeleteScratch(db.id, this.keyspaceId, k.length, sync);
    });
    db.afterWrite();
  }

  deleteRange(range: { gte: unknown; lt: unknown }, options?: WriteOptions): void {
    const { gte, lt } = deleteRangeArgument(range);
    const ops = new PackedOps();
    ops.add(
      OP_DELETE_RANGE,
      this.keyspaceId,
      this.keyCodec.encode(gte, "range.gte"),
      this.keyCodec.encode(lt, "range.lt"),
    );
    writePacked(this.db, ops, options);
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
    const it = new SyncIterator<never>(
      this.db,
      this.keyspaceId,
      options,
      "count",
      this.keyCodec,
      this.valueCodec,
    );
    return it.countAll();
  }
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
