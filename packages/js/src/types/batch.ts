/**
 * Atomic batches, chained and as an array of operations (keyspace, queue and topic ones), in
 * both APIs.
 *
 * @module
 */
import type { KeyspaceRef } from "./keyspace.js";
import type { WriteOptions } from "./options.js";
import type { QueueBatchOperation } from "./queue.js";
import type { TopicBatchOperation } from "./topic.js";

/**
 * One operation of an array batch. Without `keyspace`, in the database's default keyspace; with
 * one (a keyspace object of the same database, as `db.keyspace(name)` returns it; not its
 * name), in that keyspace, with its encodings.
 */
export type BatchOperation<K, V> =
  | { type: "put"; key: K; value: V; keyspace?: undefined }
  | { type: "delete"; key: K; keyspace?: undefined }
  | KeyspaceBatchOperation<unknown, unknown>
  | QueueBatchOperation<unknown>
  | TopicBatchOperation<unknown, unknown>;

/** An operation of an array batch in keyspace `keyspace` (annotate it to check its types). */
export type KeyspaceBatchOperation<K, V> =
  | { type: "put"; key: K; value: V; keyspace: KeyspaceRef<K, V> }
  | { type: "delete"; key: K; keyspace: KeyspaceRef<K, V> };

/** An atomic batch: every operation is applied, or none. */
export interface SyncBatch<K, V> {
  put(key: K, value: V): this;
  put<K2, V2>(key: K2, value: V2, keyspace: KeyspaceRef<K2, V2>): this;
  delete(key: K): this;
  delete<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): this;
  deleteRange(range: { gte: K; lt: K }): this;
  deleteRange<K2, V2>(range: { gte: K2; lt: K2 }, keyspace: KeyspaceRef<K2, V2>): this;
  /** Operations queued. */
  readonly length: number;
  /** Applies the batch atomically and empties it. */
  write(options?: WriteOptions): void;
  clear(): void;
}

/**
 * An atomic batch, the Promise API. (Spelled out rather than derived from {@link SyncBatch} with
 * `Omit`: a mapped type turns the chained methods' `this` into `SyncBatch`, whose `write`
 * returns `void`.)
 */
export interface Batch<K, V> {
  put(key: K, value: V): this;
  put<K2, V2>(key: K2, value: V2, keyspace: KeyspaceRef<K2, V2>): this;
  delete(key: K): this;
  delete<K2, V2>(key: K2, keyspace: KeyspaceRef<K2, V2>): this;
  deleteRange(range: { gte: K; lt: K }): this;
  deleteRange<K2, V2>(range: { gte: K2; lt: K2 }, keyspace: KeyspaceRef<K2, V2>): this;
  /** Operations queued. */
  readonly length: number;
  /** Applies the batch atomically and empties it. */
  write(options?: WriteOptions): Promise<void>;
  clear(): void;
}
