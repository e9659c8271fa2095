/**
 * Atomic batches: chained (`db.batch().put(...).write()`) and array (`db.batch([...])`).
 *
 * @module
 */
import { isEmptyRange } from "../encoding/bounds.js";
import { deleteRangeArgument, syncOption } from "../arguments/checks.js";
import type { DatabaseHandle } from "./database-handle.js";
import { PackedOps } from "../encoding/packed-ops.js";
import { OP_DELETE, OP_DELETE_RANGE, OP_PUT } from "../encoding/wire.js";
import { writePacked } from "./write-packed.js";
import { storeOf, type StoreImpl } from "./store.js";
import type { KeyspaceRef, SyncBatch, WriteOptions } from "../types.js";

export class SyncBatchImpl<K, V> implements SyncBatch<K, V> {
  readonly #ops = new PackedOps();

  constructor(
    readonly db: DatabaseHandle,
    readonly store: StoreImpl,
  ) {}

  #target(keyspace: KeyspaceRef<unknown, unknown> | undefined): StoreImpl {
    return storeOf(this.store, keyspace);
  }

  put(key: unknown, value: unknown, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const s = this.#target(keyspace);
    this.#ops.add(OP_PUT, s.keyspaceId, s.packKey(key), s.packValue(value));
    return this;
  }

  delete(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const s = this.#target(keyspace);
    this.#ops.add(OP_DELETE, s.keyspaceId, s.packKey(key));
    return this;
  }

  deleteRange(range: { gte: unknown; lt: unknown }, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const { gte, lt } = deleteRangeArgument(range);
    const s = this.#target(keyspace);
    const start = s.encodeKey(gte);
    const end = s.encodeKey(lt);
    if (!isEmptyRange(start, end)) {
      this.#ops.add(OP_DELETE_RANGE, s.keyspaceId, start, end);
    }
    return this;
  }

  get length(): number {
    return this.#ops.count;
  }

  write(options?: WriteOptions): void {
    writePacked(this.db, this.#ops, syncOption(options));
    this.#ops.clear();
  }

  clear(): void {
    this.#ops.clear();
  }
}
