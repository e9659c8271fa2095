/**
 * Chained batches of the Promise API: operations are encoded and packed as they are added (a
 * wrong key or keyspace fails there), and sent as one request by `write`.
 *
 * @module
 */
import { deleteRangeArgument, syncOption } from "../arguments/checks.js";
import { isEmptyRange } from "../encoding/bounds.js";
import { PackedOps } from "../encoding/packed-ops.js";
import { OP_DELETE, OP_DELETE_RANGE, OP_PUT } from "../encoding/wire.js";
import { closedError } from "../errors.js";
import type { Batch, KeyspaceRef, WriteOptions } from "../types.js";
import { settle } from "./settle.js";
import { storeOf, type PromiseStore } from "./store.js";

export class PromiseBatch implements Batch<unknown, unknown> {
  readonly #ops = new PackedOps();

  /** `store`: the default keyspace's (operations without a keyspace argument go there). */
  constructor(readonly store: PromiseStore) {}

  put(key: unknown, value: unknown, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const s = storeOf(this.store, keyspace);
    this.#ops.add(OP_PUT, s.keyspaceId, s.packKey(key), s.packValue(value));
    return this;
  }

  delete(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const s = storeOf(this.store, keyspace);
    this.#ops.add(OP_DELETE, s.keyspaceId, s.packKey(key));
    return this;
  }

  deleteRange(range: { gte: unknown; lt: unknown }, keyspace?: KeyspaceRef<unknown, unknown>): this {
    const { gte, lt } = deleteRangeArgument(range);
    const s = storeOf(this.store, keyspace);
    const start = s.keyCodec.encode(gte, "key");
    const end = s.keyCodec.encode(lt, "key");
    if (!isEmptyRange(start, end)) {
      this.#ops.add(OP_DELETE_RANGE, s.keyspaceId, start, end);
    }
    return this;
  }

  get length(): number {
    return this.#ops.count;
  }

  write(options?: WriteOptions): Promise<void> {
    return settle(() => {
      const sync = syncOption(options);
      const transport = this.store.transport;
      if (this.#ops.count === 0) {
        return transport.closed ? Promise.reject(closedError("the database")) : Promise.resolve();
      }
      const bytes = this.#ops.bytes().slice();
      this.#ops.clear();
      return transport.request("write", [bytes, sync]);
    });
  }

  clear(): void {
    this.#ops.clear();
  }
}
