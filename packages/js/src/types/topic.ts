/**
 * Topic logs (`db.topic(name)`), in both APIs. Semantics: the core's `shaledb::topic`.
 * Offsets are JS numbers: a topic's offsets count up from 0 in commit order with no gaps, and
 * stay exact (below 2^53) for any topic that could exist (past it an append is
 * `INVALID_ARGUMENT`). Times are milliseconds since the Unix epoch (`Date.now()`).
 *
 * @module
 */
import type { Promised } from "./promised.js";
import type { KeyEncoding, ValueEncoding } from "./encodings.js";
import type { WriteOptions } from "./options.js";

/**
 * How a topic is configured. Retention settings are stored with the topic: options with any of
 * them replace the stored configuration (settings left out take their defaults: no limit);
 * options without any (or none at all) keep it. `keyEncoding` and `valueEncoding` belong to
 * the handle, not the topic.
 */
export interface TopicOptions<VE extends ValueEncoding = "utf8", KE extends KeyEncoding = "utf8"> {
  /** How values are encoded (default `"utf8"`), as for a keyspace. */
  valueEncoding?: VE;
  /** How record keys are encoded (default `"utf8"`). */
  keyEncoding?: KE;
  /** Records older than this are dropped (default: kept). */
  maxAgeMs?: number;
  /** The oldest records are dropped past this many bytes of records (default: no limit). */
  maxBytes?: number;
  /** The oldest records are dropped past this many records (default: no limit). */
  maxRecords?: number;
  /**
   * Retention may drop records a consumer group has not committed past (default `false`:
   * retention stops at the lowest committed offset of any group).
   */
  retentionPassesGroups?: boolean;
}

/** Headers of a record: names to values (strings are stored as their UTF-8 bytes). */
export type RecordHeaders = Readonly<Record<string, string | Uint8Array>>;

/** Options of an append: `sync` as for any write, the record's key and headers. */
export interface AppendOptions<K = string> extends WriteOptions {
  /** The record's key (stored with it; topics are not compacted by key). */
  key?: K;
  /** The record's headers. */
  headers?: RecordHeaders;
}

/** A record to append with its key and headers (`appendMany`, batches). */
export interface NewTopicRecord<V, K = string> {
  value: V;
  key?: K;
  headers?: RecordHeaders;
}

/** A record as read. */
export interface TopicRecord<V, K = string> {
  /** Its offset: dense from 0, in commit order. */
  readonly offset: number;
  /** When it was appended (ms since the epoch; never goes back along the log). */
  readonly time: number;
  /** Its key, `undefined` if it was appended without one. */
  readonly key: K | undefined;
  /** Its headers (values as bytes; `{}` if none). */
  readonly headers: Readonly<Record<string, Uint8Array>>;
  readonly value: V;
}

/**
 * Where a read or subscription starts: an offset, `"earliest"` (the first record held),
 * `"latest"` (the next one appended), `{ time }` (the first record appended at or after it, ms
 * since the epoch) or `{ group }` (a consumer group's committed offset; the earliest record if
 * it committed none).
 */
export type TopicFrom = number | "earliest" | "latest" | { time: number } | { group: string };

/** Options of a read. */
export interface TopicReadOptions {
  /** Where to start (default `"earliest"`). */
  from?: TopicFrom;
  /** At most this many records (default 1000, at most 100 000). */
  limit?: number;
  /** At most about this many bytes (default 4 MiB; a read returns at least one record if any). */
  maxBytes?: number;
}

/** Options of a subscription. */
export interface SubscribeOptions {
  /** Where to start (default `"latest"`: records appended from now on). */
  from?: TopicFrom;
  /** Records fetched per request, when the loop asks for more (default 256). */
  chunk?: number;
  /** Ends the subscription (Promise API). */
  signal?: AbortSignal;
}

/** A topic's figures. */
export interface TopicStats {
  /** The first offset held (= `next` when empty). */
  first: number;
  /** The offset the next append gets. */
  next: number;
  /** Bytes of the records held. */
  bytes: number;
  /** Per consumer group: its committed offset and how many records lie past it. */
  groups: { name: string; committed: number; lag: number }[];
}

/** Names one topic of one database with the JS types of its values and keys: what batches take. */
export interface TopicRef<V, K = string> {
  /** The topic's name. */
  readonly name: string;
  /** Type-level only: the value and key types (never set at run time). */
  readonly __topicTypes?: [V, K];
}

/**
 * Topic operations of an array batch (`db.batch([...])`): atomic with the batch's other
 * operations; the batch returns the offsets of its appends (with its queue pushes' ids), in
 * the order added.
 */
export type TopicBatchOperation<V, K = string> =
  | { type: "append"; topic: TopicRef<V, K>; value: V; key?: K; headers?: RecordHeaders }
  | { type: "commitOffset"; topic: TopicRef<V, K>; group: string; offset: number };

/** A topic log, the synchronous API (Node: `openSync`). */
export interface SyncTopic<V, K = string> extends TopicRef<V, K> {
  /** Appends `value`; returns its offset. */
  append(value: V, options?: AppendOptions<K>): number;
  /** Appends values (or records with keys and headers) in one write; returns their offsets. */
  appendMany(values: readonly (V | NewTopicRecord<V, K>)[], options?: WriteOptions): number[];
  /**
   * Records from `options.from` on, in offset order (`[]` at the end of the log).
   * `OFFSET_OUT_OF_RANGE` (with `details.first` and `details.next`) below the first record
   * held or past the next offset.
   */
  read(options?: TopicReadOptions): TopicRecord<V, K>[];
  /** The last `n` records (fewer if the topic holds fewer). */
  latest(n: number): TopicRecord<V, K>[];
  /**
   * The records from `options.from` on, read a chunk at a time as the loop asks for them. The
   * synchronous API cannot wait: the iterator ends once it has caught up with the log (use the
   * Promise API's `subscribe` to wait for new records).
   */
  subscribe(options?: Omit<SubscribeOptions, "signal">): IterableIterator<TopicRecord<V, K>>;
  /** Stores `offset` (the next record to process) as group `group`'s committed offset. */
  commit(group: string, offset: number): void;
  /** Group `group`'s committed offset, `undefined` if it committed none. */
  committed(group: string): number | undefined;
  /** Removes consumer group `group`; `false` if there was none. */
  removeGroup(group: string): boolean;
  /** Applies the retention limits now (appends apply them too). */
  applyRetention(): void;
  stats(): TopicStats;
}

/**
 * A topic log, the Promise API (the same in Node and browsers): the methods of
 * {@link SyncTopic}, resolving with their results, and `subscribe`, which waits for new records
 * without polling.
 */
export interface Topic<V, K = string> extends Promised<Omit<SyncTopic<V, K>, "subscribe">> {
  /**
   * `for await (const record of topic.subscribe({ from }))`: yields the records there are from
   * `from` on (default `"latest"`), then waits for new ones, woken as soon as an append to the
   * topic commits (from any caller of the database; in browsers from any tab). Pull-based: a
   * chunk (`options.chunk` records) is fetched only when the loop asks for more, so a slow
   * reader never makes anyone buffer. Breaking the loop, `options.signal` aborting or closing
   * the database while it waits ends it; `OFFSET_OUT_OF_RANGE` rejects it if retention drops
   * records it has not read yet. Options are checked on the first pull (a bad one rejects it);
   * a pull once the database is closed rejects with `CLOSED`.
   */
  subscribe(options?: SubscribeOptions): AsyncIterableIterator<TopicRecord<V, K>>;
}
