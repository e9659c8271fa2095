/**
 * Optimistic transactions of the Promise API: a transaction lives on the server that began it;
 * its writes are queued there as they are made, and its commit applies them atomically.
 *
 * @module
 */
import { syncOption } from "../arguments/checks.js";
import { closedError, invalidArgument } from "../errors.js";
import type { KeyspaceRef, Lease, PushOptions, QueueItem, QueueRef, Transaction, WriteOptions } from "../types.js";
import { leaseArgument, pushOptions } from "../arguments/queue-options.js";
import { PromiseQueue } from "./queue.js";
import { PromiseTopic } from "./topic.js";
import { appendOptions, offsetArgument, topicGroup } from "../arguments/topic-options.js";
import { settle } from "./settle.js";
import { forgetTracking, track, untrack, type Held } from "./server-resources.js";
import { storeOf, type PromiseStore } from "./store.js";

export class PromiseTransaction implements Transaction<unknown, unknown> {
  #ended = false;

  constructor(
    /** The default keyspace's store (calls without a keyspace argument use it). */
    readonly store: PromiseStore,
    readonly id: number,
    readonly server: string,
  ) {
    track(this, this.#held());
  }

  #held(): Held {
    return { transport: this.store.transport, op: "txRollback", id: this.id, server: this.server };
  }

  #target(keyspace: KeyspaceRef<unknown, unknown> | undefined): PromiseStore {
    if (this.#ended) {
      throw closedError("the transaction (committed or rolled back)");
    }
    return storeOf(this.store, keyspace);
  }

  get(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): Promise<unknown> {
    return settle(() => {
      const s = this.#target(keyspace);
      const k = s.encodeKey(key);
      return s.transport
        .request("txGet", [this.id, s.keyspaceId, k], this.server)
        .then((v) => (v === undefined ? undefined : s.valueCodec.decode(v)));
    });
  }

  /** Queues the write on the server; a failure there makes the commit fail with it. */
  put(key: unknown, value: unknown, keyspace?: KeyspaceRef<unknown, unknown>): void {
    const s = this.#target(keyspace);
    const args: [number, number, Uint8Array, Uint8Array] = [this.id, s.keyspaceId, s.encodeKey(key), s.encodeValue(value)];
    s.transport.request("txPut", args, this.server).catch(() => undefined);
  }

  delete(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): void {
    const s = this.#target(keyspace);
    s.transport.request("txDelete", [this.id, s.keyspaceId, s.encodeKey(key)], this.server).catch(() => undefined);
  }

  #topic(topic: unknown): PromiseTopic {
    if (this.#ended) {
      throw closedError("the transaction (committed or rolled back)");
    }
    if (!(topic instanceof PromiseTopic) || topic.transport !== this.store.transport) {
      throw invalidArgument("the topic must be one opened on this database");
    }
    return topic;
  }

  /** Queues the append on the server; a failure there makes the commit fail with it. */
  append(topic: unknown, value: unknown, options?: { key?: unknown; headers?: unknown }): void {
    const t = this.#topic(topic);
    const { key, headers } = appendOptions(options, true);
    const record = t.packRecord(value, key, headers, "value");
    t.transport.request("txAppend", [this.id, t.name, record], this.server).catch(() => undefined);
  }

  commitOffset(topic: unknown, group: string, offset: number): void {
    const t = this.#topic(topic);
    const args: [number, string, string, number] = [this.id, t.name, topicGroup(group), offsetArgument(offset)];
    t.transport.request("txCommitOffset", args, this.server).catch(() => undefined);
  }

  #queue(queue: unknown): PromiseQueue {
    if (this.#ended) {
      throw closedError("the transaction (committed or rolled back)");
    }
    if (!(queue instanceof PromiseQueue) || queue.transport !== this.store.transport) {
      throw invalidArgument("the queue must be one opened on this database");
    }
    return queue;
  }

  /** Queues the push on the server; a failure there makes the commit fail with it. */
  push(queue: QueueRef<unknown>, value: unknown, options?: Omit<PushOptions, "sync">): void {
    const q = this.#queue(queue);
    const bytes = q.encodeValue(value);
    const o = pushOptions(options);
    q.transport.request("txPush", [this.id, q.name, bytes, o.delayMs, o.ttlMs], this.server).catch(() => undefined);
  }

  ack(queue: QueueRef<unknown>, itemOrLease: QueueItem<unknown> | Lease): void {
    const q = this.#queue(queue);
    const lease = leaseArgument(itemOrLease);
    q.transport
      .request("txAck", [this.id, q.name, q.groupName, lease.id, lease.delivery], this.server)
      .catch(() => undefined);
  }

  commit(options?: WriteOptions): Promise<number[]> {
    return settle(() => {
      this.#target(undefined);
      // Checked before anything ends: a bad option leaves the transaction usable.
      const sync = syncOption(options);
      this.#ended = true;
      forgetTracking(this);
      return this.store.transport.request("txCommit", [this.id, sync], this.server);
    });
  }

  rollback(): Promise<void> {
    if (!this.#ended) {
      this.#ended = true;
      untrack(this, this.#held());
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.rollback();
  }
}
