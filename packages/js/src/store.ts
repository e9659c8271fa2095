/**
 * Reads and writes of one keyspace (the database object is the default keyspace's store).
 *
 * @module
 */
import type { Codec } from "./codec.js";
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./engine.js";
import { invalidArgument } from "./errors.js";
import { SyncIterator, type IterationMode } from "./iterator.js";
import { OP_DELETE_RANGE, PackedOps, syncOption } from "./packed-ops.js";
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
    const snapshot = snapshotId(this.db, options?.snapshot);
    const db = this.db;
    const value = db.call(() => {
      writeScratch(k);
      const found = wasm.dbGetScratch(db.id, this.keyspaceId, k.length, snapshot);
      return found === 0 ? undefined : readOutput(found);
    });
    return value === undefined ? undefined : this.valueCodec.decode(value);
  }

  getMany(keys: readonly unknown[], options?: ReadOptions): unknown[] {
    if (!Array.isArray(keys)) {
      throw invalidArgument("getMany needs an array of keys");
    }
    // One snapshot for all of them, unless the caller gave one.
    if (options?.snapshot !== undefined) {
      return keys.map((k) => this.get(k, options));
    }
    const snapshot = SnapshotImpl.open(this.db);
    try {
      return keys.map((k) => this.get(k, { snapshot }));
    } finally {
      snapshot.close();
    }
  }

  has(key: unknown, options?: ReadOptions): boolean {
    const k = this.encodeKey(key);
    const snapshot = snapshotId(this.db, options?.snapshot);
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
    db.call(() => {
      writeScratch(k, v);
      wasm.dbPutScratch(db.id, this.keyspaceId, k.length, v.length, sync);
    });
    db.afterWrite();
  }

  delete(key: unknown, options?: WriteOptions): void {
    const k = this.encodeKey(key);
    const sync = syncOption(options);
    const db = this.db;
    db.call(() => {
      writeScratch(k);
      wasm.dbDeleteScratch(db.id, this.keyspaceId, k.length, sync);
    });
    db.afterWrite();
  }

  deleteRange(range: { gte: unknown; lt: unknown }, options?: WriteOptions): void {
    if (typeof range !== "object" || range === null) {
      throw invalidArgument("deleteRange needs { gte, lt }");
    }
    const ops = new PackedOps();
    ops.add(
      OP_DELETE_RANGE,
      this.keyspaceId,
      this.keyCodec.encode(range.gte, "range.gte"),
      this.keyCodec.encode(range.lt, "range.lt"),
    );
    writePacked(this.db, ops, options);
  }

  #iterate<T>(mode: IterationMode, options: IteratorOptions<unknown> | undefined): SyncIterator<T> {
    return new SyncIterator<T>(this.db, this.keyspaceId, options ?? {}, mode, this.keyCodec, this.valueCodec);
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
      options ?? {},
      "count",
      this.keyCodec,
      this.valueCodec,
    );
    return it.countAll();
  }
}

/** The store behind keyspace reference `ref`, which must belong to `db`. */
export function storeOf(db: DatabaseHandle, ref: KeyspaceRef<unknown, unknown>): StoreImpl {
  const store = (ref as { store?: unknown }).store ?? ref;
  if (!(store instanceof StoreImpl) || store.db !== db) {
    throw invalidArgument("the keyspace must be one opened on this database");
  }
  return store;
}
