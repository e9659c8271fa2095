/**
 * Optimistic transactions (synchronous API).
 *
 * @module
 */
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./instance.js";
import { closedError } from "../errors.js";
import { syncOption } from "../arguments/checks.js";
import { storeOf, type StoreImpl } from "./store.js";
import type { KeyspaceRef, SyncTransaction, WriteOptions } from "./types.js";

export class SyncTransactionImpl implements SyncTransaction<unknown, unknown> {
  #ended = false;

  private constructor(
    readonly db: DatabaseHandle,
    readonly store: StoreImpl,
    readonly id: number,
  ) {}

  /** Begins a transaction on `db`; `store` is the default for calls without a keyspace. */
  static begin(db: DatabaseHandle, store: StoreImpl): SyncTransactionImpl {
    const id = db.call(() => wasm.txOpen(db.id));
    const tx = new SyncTransactionImpl(db, store, id);
    db.track("transaction", id, tx);
    return tx;
  }

  #target(keyspace: KeyspaceRef<unknown, unknown> | undefined): StoreImpl {
    if (this.#ended) {
      throw closedError("the transaction (committed or rolled back)");
    }
    return storeOf(this.store, keyspace);
  }

  get(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): unknown {
    const s = this.#target(keyspace);
    const k = s.encodeKey(key);
    const bytes = this.db.call(() => wasm.txGet(this.id, this.db.id, s.keyspaceId, k));
    return bytes === undefined ? undefined : s.valueCodec.decode(bytes);
  }

  put(key: unknown, value: unknown, keyspace?: KeyspaceRef<unknown, unknown>): void {
    const s = this.#target(keyspace);
    const k = s.encodeKey(key);
    const v = s.encodeValue(value);
    this.db.call(() => wasm.txPut(this.id, this.db.id, s.keyspaceId, k, v));
  }

  delete(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): void {
    const s = this.#target(keyspace);
    const k = s.encodeKey(key);
    this.db.call(() => wasm.txDelete(this.id, this.db.id, s.keyspaceId, k));
  }

  /** Commits; `CONFLICT` if a key read here was changed since. Ends the transaction. */
  commit(options?: WriteOptions): void {
    this.#target(undefined);
    // Checked before anything ends: a bad option leaves the transaction usable.
    const sync = syncOption(options);
    // So is the database's readiness for a write (a browser worker's BUSY).
    this.db.mayWrite();
    this.#ended = true;
    // The instance ends the transaction whatever the outcome.
    this.db.forget("transaction", this.id, this);
    this.db.call(() => wasm.txCommit(this.id, sync));
    this.db.afterWrite();
  }

  rollback(): void {
    if (!this.#ended) {
      this.#ended = true;
      this.db.release("transaction", this.id, this);
    }
  }

  [Symbol.dispose](): void {
    this.rollback();
  }
}
