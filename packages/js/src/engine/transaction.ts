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
import type { KeyspaceRef, Lease, PushOptions, QueueItem, QueueRef, SyncTransaction, WriteOptions } from "../types.js";
import { leaseArgument, pushOptions, type PushArguments } from "../arguments/queue-options.js";
import { syncQueueOf, type SyncQueueImpl } from "./queue.js";
import { syncTopicOf, type SyncTopicImpl } from "./topic.js";
import { appendOptions, offsetArgument, topicGroup } from "../arguments/topic-options.js";

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

  push(queue: QueueRef<unknown>, value: unknown, options?: Omit<PushOptions, "sync">): void {
    const q = this.#queue(queue);
    const bytes = q.encodeValue(value);
    this.pushEncoded(q, bytes, pushOptions(options));
  }

  /** A push of bytes with checked options (the server's transactions). */
  pushEncoded(q: SyncQueueImpl, bytes: Uint8Array, o: PushArguments): void {
    this.#target(undefined);
    this.db.call(() => wasm.txPush(this.id, this.db.id, q.queueNumber, bytes, o.delayMs, o.ttlMs));
  }

  ack(queue: QueueRef<unknown>, itemOrLease: QueueItem<unknown> | Lease): void {
    const q = this.#queue(queue);
    this.ackLease(q, leaseArgument(itemOrLease));
  }

  /** An ack of a checked lease (the server's transactions). */
  ackLease(q: SyncQueueImpl, lease: Lease): void {
    this.#target(undefined);
    this.db.call(() => wasm.txAck(this.id, this.db.id, q.queueNumber, lease.id, lease.delivery));
  }

  append(topic: unknown, value: unknown, options?: { key?: unknown; headers?: unknown }): void {
    this.#target(undefined);
    const t = syncTopicOf(this.db, topic);
    const { key, headers } = appendOptions(options, true);
    this.appendEncoded(t, t.packRecord(value, key, headers, "value"));
  }

  /** An append of one packed record (the server's transactions). */
  appendEncoded(t: SyncTopicImpl, record: Uint8Array): void {
    this.#target(undefined);
    this.db.call(() => wasm.txAppend(this.id, this.db.id, t.topicNumber, record));
  }

  commitOffset(topic: unknown, group: string, offset: number): void {
    this.#target(undefined);
    const t = syncTopicOf(this.db, topic);
    this.commitOffsetChecked(t, topicGroup(group), offsetArgument(offset));
  }

  /** An offset commit of checked arguments (the server's transactions). */
  commitOffsetChecked(t: SyncTopicImpl, group: string, offset: number): void {
    this.#target(undefined);
    this.db.call(() => wasm.txCommitOffset(this.id, this.db.id, t.topicNumber, group, offset));
  }

  #queue(queue: unknown): SyncQueueImpl {
    this.#target(undefined);
    return syncQueueOf(this.db, queue);
  }

  /**
   * Commits; `CONFLICT` if a key read here was changed since. Ends the transaction. Returns the
   * ids of its queue pushes, in order.
   */
  commit(options?: WriteOptions): number[] {
    this.#target(undefined);
    // Checked before anything ends: a bad option leaves the transaction usable.
    const sync = syncOption(options);
    // So is the database's readiness for a write (a browser worker's BUSY).
    this.db.mayWrite();
    this.#ended = true;
    // The instance ends the transaction whatever the outcome.
    this.db.forget("transaction", this.id, this);
    const ids = this.db.call(() => wasm.txCommit(this.id, sync));
    this.db.afterWrite();
    return Array.from(ids);
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
