/**
 * Durable queues (`db.queue(name)`), in both APIs. Semantics: the core's `shaledb::queue`.
 * Ids are JS numbers: a queue's ids count up from 1 in commit order, and stay exact (below
 * 2^53) for any queue that could exist. Times are milliseconds since the Unix epoch
 * (`Date.now()`), durations milliseconds.
 *
 * @module
 */
import type { Promised } from "./promised.js";
import type { ValueEncoding } from "./encodings.js";
import type { WriteOptions } from "./options.js";

/** What a push does at a queue's `maxItems` or `maxBytes` limit. */
export type WhenFull = "reject" | "discardOldest";

/**
 * How a queue is configured. Settings are stored with the queue: options with any of them
 * replace the stored configuration (settings left out take their defaults); options without any
 * (or none at all) keep it. `valueEncoding` belongs to the handle, not the queue.
 */
export interface QueueOptions<VE extends ValueEncoding = "utf8"> {
  /** How values are encoded (default `"utf8"`), as for a keyspace. */
  valueEncoding?: VE;
  /** Most items the queue holds (default: no limit). */
  maxItems?: number;
  /** Most bytes of values the queue holds (default: no limit). */
  maxBytes?: number;
  /** At a limit: `"reject"` the push with `QUEUE_FULL` (default), or `"discardOldest"` items. */
  whenFull?: WhenFull;
  /**
   * After this many deliveries, an item that comes back (released, or its lease ran out) moves
   * to the dead-letter queue instead of being delivered again (default: no limit).
   */
  maxDeliveries?: number;
  /** The dead-letter queue's name (default `"<name>.dead"`); needs `maxDeliveries`. */
  deadLetter?: string;
  /** The lease of a reservation that names none (default 30 000 ms). */
  leaseMs?: number;
  /** Lifetime of an item pushed without `ttlMs` (default: items never expire). */
  ttlMs?: number;
}

/** Options of a push: `sync` as for any write, a delay before consumers see it, a lifetime. */
export interface PushOptions extends WriteOptions {
  /** The item is delivered only after this long. */
  delayMs?: number;
  /** The item is dropped unread this long after the push (overrides the queue's `ttlMs`). */
  ttlMs?: number;
}

/** Names one delivery of an item (acks, releases and extends carry it). */
export interface Lease {
  readonly id: number;
  /** Which delivery (1 for the first). */
  readonly delivery: number;
}

/** An item as delivered (taken, reserved) or peeked at. */
export interface QueueItem<V> {
  /** Unique in the queue, increasing in commit order (what the push returned). */
  readonly id: number;
  readonly value: V;
  /** When it was pushed (ms since the epoch). */
  readonly pushedAt: number;
  /** Deliveries so far, this one included (0 for a peek at a new item). */
  readonly deliveries: number;
  /** For a reservation: when its lease runs out (ms since the epoch); else `undefined`. */
  readonly leaseUntil: number | undefined;
  /** The lease naming this delivery. */
  readonly lease: Lease;
}

/** Options of a destructive read. */
export interface TakeOptions {
  /**
   * Wait up to this long for an item (default 0: do not wait). The Promise API waits without
   * polling; the synchronous API cannot wait, and any `waitMs` above 0 is `INVALID_ARGUMENT`.
   */
  waitMs?: number;
}

/** Options of a reservation. */
export interface ReserveOptions extends TakeOptions {
  /** How long the item stays reserved before it goes back by itself (default: the queue's). */
  leaseMs?: number;
}

/** Options of a release. */
export interface ReleaseOptions {
  /** The item is delivered again only after this long (default: at once). */
  delayMs?: number;
}

/** Options of `queue.group(name)`. */
export interface GroupOptions {
  /**
   * Where a new group starts: `"tail"` (default: the items pushed from now on) or `"head"` (the
   * oldest item still in the queue). Ignored if the group exists.
   */
  start?: "tail" | "head";
}

/** A queue's figures. */
export interface QueueStats {
  /** Items stored (not yet done with by every group). */
  items: number;
  /** Bytes of their values. */
  bytes: number;
  /** Age of the oldest item (ms), `undefined` when empty. */
  oldestAgeMs: number | undefined;
  /** Items reserved now, over all groups. */
  reserved: number;
  /** Items moved to the dead-letter queue so far. */
  deadLettered: number;
  /** Per consumer group (`""` is the default one): items still to deliver, items reserved. */
  groups: { name: string; lag: number; reserved: number }[];
}

/**
 * Names one queue (and consumer group) of one database, with the JS type of its values: what
 * batch operations take.
 */
export interface QueueRef<V> {
  /** The queue's name. */
  readonly name: string;
  /** The consumer group this handle reads for (`""`: the default group). */
  readonly groupName: string;
  /** Type-level only: the value type (never set at run time). */
  readonly __queueTypes?: [V];
}

/**
 * Queue operations of an array batch (`db.batch([...])`): atomic with the batch's puts and
 * deletes; the batch returns the ids of its pushes, in order.
 */
export type QueueBatchOperation<V> =
  | ({ type: "push"; queue: QueueRef<V>; value: V } & Omit<PushOptions, "sync">)
  | { type: "ack"; queue: QueueRef<V>; lease: Lease | QueueItem<V> };

/** A durable queue, the synchronous API (Node: `openSync`). */
export interface SyncQueue<V> extends QueueRef<V> {
  /** Pushes `value`; returns its id. `QUEUE_FULL` at a limit with `whenFull: "reject"`. */
  push(value: V, options?: PushOptions): number;
  /** Pushes `values` in one write (all or none); returns their ids. */
  pushMany(values: readonly V[], options?: PushOptions): number[];
  /** Takes the next item for good (for this group), or `undefined` if none is ready. */
  take(options?: TakeOptions): QueueItem<V> | undefined;
  /** Takes up to `n` items in one write. */
  takeMany(n: number, options?: TakeOptions): QueueItem<V>[];
  /** The item `take` or `reserve` would deliver now, left in place. */
  peek(): QueueItem<V> | undefined;
  /**
   * The next `n` items (fewer if fewer are ready), in the order `takeMany` would deliver them,
   * left in place: nothing is reserved or changed.
   */
  peekMany(n: number): QueueItem<V>[];
  /**
   * Reserves the next item: nobody else (of this group) gets it until it is acked, released
   * or its lease runs out; reservations open at a crash are delivered again after reopen.
   */
  reserve(options?: ReserveOptions): QueueItem<V> | undefined;
  /** Reserves up to `n` items in one write. */
  reserveMany(n: number, options?: ReserveOptions): QueueItem<V>[];
  /** Done with a reservation: the item is gone (for this group). */
  ack(itemOrLease: QueueItem<V> | Lease): void;
  /** Acks reservations in one write (all or none). */
  ackMany(itemsOrLeases: readonly (QueueItem<V> | Lease)[]): void;
  /** Puts a reserved item back at the head (after `delayMs`). */
  release(itemOrLease: QueueItem<V> | Lease, options?: ReleaseOptions): void;
  /** Renews a lease for `leaseMs` from now; returns its new end (ms since the epoch). */
  extend(itemOrLease: QueueItem<V> | Lease, leaseMs: number): number;
  /** A handle reading for consumer group `name` (created if missing). */
  group(name: string, options?: GroupOptions): SyncQueue<V>;
  /** The queue's consumer groups, sorted (`""` is the default one). */
  groups(): string[];
  /** Removes consumer group `name`; `false` if there was none. */
  removeGroup(name: string): boolean;
  stats(): QueueStats;
  /** Drops every item (for every group). */
  clear(): void;
}

/** Options of {@link Queue.consume}. */
export interface ConsumeOptions {
  /** Most jobs handed out and not yet acked or released (default 1). */
  concurrency?: number;
  /** Lease of each reservation (default: the queue's). */
  leaseMs?: number;
  /** Ends the loop (jobs reserved and not handed out yet are released). */
  signal?: AbortSignal;
}

/** A delivered item of {@link Queue.consume}, with what settles it. */
export interface Job<V> extends QueueItem<V> {
  /** Done with it (see {@link Queue.ack}). */
  ack(): Promise<void>;
  /** Puts it back (see {@link Queue.release}). */
  release(options?: ReleaseOptions): Promise<void>;
  /** Renews its lease (see {@link Queue.extend}); resolves with the new end. */
  extend(leaseMs: number): Promise<number>;
}

/**
 * A durable queue, the Promise API (the same in Node and browsers): the methods of
 * {@link SyncQueue}, resolving with their results, and reads that wait (`waitMs`) without
 * polling: they resolve as soon as a push or a release commits to the queue (from any caller of
 * the database, in browsers from any tab), a lease or delay falls due, or `waitMs` passes
 * (then with `undefined` / `[]`). Closing the database ends waits the same way.
 */
export interface Queue<V> extends Promised<Omit<SyncQueue<V>, "group">> {
  /** A handle reading for consumer group `name` (created if missing). */
  group(name: string, options?: GroupOptions): Promise<Queue<V>>;
  /**
   * A worker loop: `for await (const job of queue.consume({ concurrency }))` reserves items
   * (waiting for them) and hands out up to `concurrency` jobs not yet acked or released. It
   * ends when the loop breaks, `signal` aborts or the database closes while it waits; jobs
   * reserved but not handed out are then released, jobs handed out stay the caller's to ack or
   * release. Options are checked on the first pull (a bad one rejects it); a pull once the
   * database is closed rejects with `CLOSED`.
   */
  consume(options?: ConsumeOptions): AsyncIterableIterator<Job<V>>;
}
