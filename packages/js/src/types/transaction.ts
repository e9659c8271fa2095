/**
 * Optimistic transactions, in both APIs.
 *
 * @module
 */
import type { KeyspaceRef } from "./keyspace.js";
import type { WriteOptions } from "./options.js";
import type { Lease, PushOptions, QueueItem, QueueRef } from "./queue.js";
import type { RecordHeaders, TopicRef } from "./topic.js";

/**
 * An optimistic transaction: reads see a snapshot plus the transaction's own writes; `commit`
 * applies the writes atomically unless a key it read was changed by someone else meanwhile —
 * then it throws `CONFLICT`, writes nothing, and the caller retries.
 */
export interface SyncTransaction<K, V> extends Disposable {
  get(key: K): V | undefined;
  get<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): V2 | undefined;
  put(key: K, value: V): void;
  put<K2, V2>(key: K2, value: V2, keyspace: KeyspaceRef<K2, V2>): void;
  delete(key: K): void;
  delete<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): void;
  /** Adds a push to `queue` (a queue of this database); its id comes with the commit. */
  push<V2>(queue: QueueRef<V2>, value: V2, options?: Omit<PushOptions, "sync">): void;
  /** Adds an ack of a reservation of `queue`: an unknown or expired one fails the commit. */
  ack<V2>(queue: QueueRef<V2>, itemOrLease: QueueItem<V2> | Lease): void;
  /** Adds an append to `topic` (a topic of this database); its offset comes with the commit. */
  append<V2, K2>(topic: TopicRef<V2, K2>, value: V2, options?: { key?: K2; headers?: RecordHeaders }): void;
  /** Adds the commit of `offset` as group `group`'s committed offset of `topic`. */
  commitOffset<V2, K2>(topic: TopicRef<V2, K2>, group: string, offset: number): void;
  /**
   * Commits atomically; returns the ids of its queue pushes and the offsets of its topic
   * appends, in the order added (none: `[]`).
   */
  commit(options?: WriteOptions): number[];
  /** Discards the writes (also what `[Symbol.dispose]` does to an uncommitted transaction). */
  rollback(): void;
}

/** An optimistic transaction, the Promise API (see {@link SyncTransaction}). */
export interface Transaction<K, V> extends AsyncDisposable {
  get(key: K): Promise<V | undefined>;
  get<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): Promise<V2 | undefined>;
  put(key: K, value: V): void;
  put<K2, V2>(key: K2, value: V2, keyspace: KeyspaceRef<K2, V2>): void;
  delete(key: K): void;
  delete<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): void;
  /** Adds a push to `queue` (see {@link SyncTransaction.push}); a failure fails the commit. */
  push<V2>(queue: QueueRef<V2>, value: V2, options?: Omit<PushOptions, "sync">): void;
  /** Adds an ack of a reservation of `queue` (see {@link SyncTransaction.ack}). */
  ack<V2>(queue: QueueRef<V2>, itemOrLease: QueueItem<V2> | Lease): void;
  /** Adds an append to `topic` (see {@link SyncTransaction.append}); a failure fails the commit. */
  append<V2, K2>(topic: TopicRef<V2, K2>, value: V2, options?: { key?: K2; headers?: RecordHeaders }): void;
  /** Adds an offset commit of group `group` of `topic` (see {@link SyncTransaction.commitOffset}). */
  commitOffset<V2, K2>(topic: TopicRef<V2, K2>, group: string, offset: number): void;
  /**
   * Commits atomically; resolves with the ids of its queue pushes and the offsets of its topic
   * appends, in the order added.
   */
  commit(options?: WriteOptions): Promise<number[]>;
  rollback(): Promise<void>;
}
