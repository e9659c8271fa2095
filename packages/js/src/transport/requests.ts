/**
 * The requests of the Promise API and their replies, as they cross a transport (`transport.ts`):
 * keys and values already encoded (the client runs the codecs, so the server sees bytes only),
 * iterators, snapshots and transactions named by the server's numbers, keyspaces by the
 * client's. The same in Node (to the engine in this thread or in a worker thread) and in
 * browsers (to the worker that owns the database, in this tab or another).
 *
 * @module
 */
import type { IterationMode } from "../encoding/entry-batch.js";
import type { ShaleErrorCode } from "../errors.js";
import type { WireQueueOptions } from "../arguments/queue-options.js";
import type { WireFrom, WireTopicOptions } from "../arguments/topic-options.js";
import type { ReadMode } from "../engine/queue.js";
import type { ApplyChangeResult, QueueStats, Stats, TopicStats } from "../types.js";

/** Range, direction, limit and snapshot of an iteration, keys encoded. */
export interface WireRange {
  gt?: Uint8Array;
  gte?: Uint8Array;
  lt?: Uint8Array;
  lte?: Uint8Array;
  prefix?: Uint8Array;
  reverse?: boolean;
  limit?: number;
  /** A snapshot id of the owner; 0 or absent: the latest state. */
  snapshot?: number;
}

/**
 * Every request: its arguments and result. Ids of iterators, snapshots and transactions are the
 * owner's; keyspace numbers (`ks`) are the page's own, bound by `keyspace` (0 is the default
 * keyspace; `../server/client-keyspaces.ts`).
 */
export interface Protocol {
  /** Opens (creating it if missing) keyspace `name` as this page's keyspace `number`. */
  keyspace: { args: [name: string, number: number]; result: void };
  /**
   * Checks (and records if none are) the encodings a client opens keyspace `name` with
   * (`"default"`: the database's own); `ENCODING_MISMATCH` if others are recorded
   * (`../engine/keyspace-encodings.ts`).
   */
  encodings: { args: [name: string, keyEncoding: string, valueEncoding: string]; result: void };
  get: { args: [ks: number, key: Uint8Array, snapshot: number]; result: Uint8Array | undefined };
  getMany: {
    args: [ks: number, keys: Uint8Array[], snapshot: number];
    result: (Uint8Array | undefined)[];
  };
  has: { args: [ks: number, key: Uint8Array, snapshot: number]; result: boolean };
  put: { args: [ks: number, key: Uint8Array, value: Uint8Array, sync: boolean]; result: void };
  delete: { args: [ks: number, key: Uint8Array, sync: boolean]; result: void };
  /** Packed batch operations (`../encoding/packed-ops.ts`), applied atomically. */
  write: { args: [ops: Uint8Array, sync: boolean]; result: void };
  /** Opens an iterator and returns its first batch (`../encoding/entry-batch.ts`) of up to `first` entries. */
  iterOpen: {
    args: [ks: number, range: WireRange, mode: IterationMode, first: number];
    result: [iterator: number, batch: Uint8Array];
  };
  iterNext: { args: [iterator: number, want: number, mode: IterationMode]; result: Uint8Array };
  /** Seeks the iterator to `target` (its key's bytes) and returns the batch of up to `want` entries from there. */
  iterSeek: { args: [iterator: number, target: Uint8Array, want: number, mode: IterationMode]; result: Uint8Array };
  iterClose: { args: [iterator: number]; result: void };
  count: { args: [ks: number, range: WireRange]; result: number };
  snapshotOpen: { args: []; result: number };
  snapshotClose: { args: [snapshot: number]; result: void };
  txOpen: { args: []; result: number };
  txGet: { args: [tx: number, ks: number, key: Uint8Array]; result: Uint8Array | undefined };
  txPut: { args: [tx: number, ks: number, key: Uint8Array, value: Uint8Array]; result: void };
  txDelete: { args: [tx: number, ks: number, key: Uint8Array]; result: void };
  /** Adds a push to queue `name` to transaction `tx` (delay and ttl: -1 for none). */
  txPush: {
    args: [tx: number, name: string, value: Uint8Array, delayMs: number, ttlMs: number];
    result: void;
  };
  /** Adds an ack of a lease of queue `name`, group `group` to transaction `tx`. */
  txAck: { args: [tx: number, name: string, group: string, id: number, delivery: number]; result: void };
  /** Adds an append to topic `name` (one packed record) to transaction `tx`. */
  txAppend: { args: [tx: number, name: string, record: Uint8Array]; result: void };
  /** Adds an offset commit of group `group` of topic `name` to transaction `tx`. */
  txCommitOffset: { args: [tx: number, name: string, group: string, offset: number]; result: void };
  /** Commits; resolves with the ids of its queue pushes and offsets of its topic appends. */
  txCommit: { args: [tx: number, sync: boolean]; result: number[] };
  txRollback: { args: [tx: number]; result: void };
  /**
   * Queues are named by name (and consumer group: `""` the default one) in every request, so
   * that any server (a browser tab that took the database over) serves them; a server opens a
   * queue it has not opened yet with its stored options. `queueOpen` stores options (`settings`)
   * or, without, only creates the queue if missing.
   */
  queueOpen: { args: [name: string, settings: WireQueueOptions | undefined]; result: void };
  queuePush: {
    args: [name: string, values: Uint8Array[], sync: boolean, delayMs: number, ttlMs: number];
    result: number[];
  };
  /**
   * A take, reservation or peek of up to `max` items (`../encoding/queue-items.ts`), waiting up
   * to `waitMs` for the first (`../server/queue-waits.ts`); `waitId` names the wait for
   * `queueCancelWait`.
   */
  queueRead: {
    args: [name: string, group: string, mode: ReadMode, max: number, leaseMs: number, waitMs: number, waitId: number];
    result: Uint8Array;
  };
  /** Ends wait `waitId` of this client (it resolves with nothing); none: every wait of this client. */
  queueCancelWait: { args: [waitId: number | undefined]; result: void };
  /** Acks leases (id, delivery pairs). */
  queueAck: { args: [name: string, group: string, leases: Float64Array]; result: void };
  queueRelease: { args: [name: string, group: string, id: number, delivery: number, delayMs: number]; result: void };
  queueExtend: { args: [name: string, group: string, id: number, delivery: number, leaseMs: number]; result: number };
  queueGroup: { args: [name: string, group: string, head: boolean]; result: void };
  queueGroups: { args: [name: string]; result: string[] };
  queueRemoveGroup: { args: [name: string, group: string]; result: boolean };
  queueStats: { args: [name: string]; result: QueueStats };
  queueClear: { args: [name: string]; result: void };
  queues: { args: []; result: string[] };
  deleteQueue: { args: [name: string]; result: boolean };
  /**
   * Packed batch operations with queue pushes and acks (and topic appends and offset commits),
   * applied atomically; their queue numbers index `queues` (name, group), their topic numbers
   * `topics`. Resolves with the pushes' ids and the appends' offsets, in order.
   */
  queueWrite: {
    args: [ops: Uint8Array, queues: [name: string, group: string][], sync: boolean, topics?: string[]];
    result: number[];
  };
  /**
   * Topics are named by name in every request, like queues; `topicOpen` stores options
   * (`settings`) or, without, only creates the topic if missing.
   */
  topicOpen: { args: [name: string, settings: WireTopicOptions | undefined]; result: void };
  /** Appends packed records (`../encoding/topic-records.ts`); resolves with their offsets. */
  topicAppend: { args: [name: string, records: Uint8Array, sync: boolean]; result: number[] };
  /**
   * Records from `from` (packed with offsets and times), waiting up to `waitMs` for the first
   * when there is none yet (`../server/queue-waits.ts`, woken by appends); `waitId` names the
   * wait for `queueCancelWait`.
   */
  topicRead: {
    args: [name: string, from: WireFrom, limit: number, maxBytes: number, waitMs: number, waitId: number];
    result: Uint8Array;
  };
  topicLatest: { args: [name: string, n: number]; result: Uint8Array };
  /** The offset `from` names now. */
  topicResolve: { args: [name: string, from: WireFrom]; result: number };
  topicCommit: { args: [name: string, group: string, offset: number]; result: void };
  /** The committed offset of `group` (-1: none). */
  topicCommitted: { args: [name: string, group: string]; result: number };
  topicRemoveGroup: { args: [name: string, group: string]; result: boolean };
  topicApplyRetention: { args: [name: string]; result: void };
  topicStats: { args: [name: string]; result: TopicStats };
  topics: { args: []; result: string[] };
  deleteTopic: { args: [name: string]; result: boolean };
  flush: { args: []; result: void };
  compact: { args: [start: Uint8Array | undefined, end: Uint8Array | undefined]; result: void };
  maintain: { args: [budget: number]; result: boolean };
  /** Resolves with the sequence number the copy is consistent at. */
  checkpoint: { args: [destination: string]; result: number };
  /**
   * Up to `limit` changes (about `maxBytes`) from `since` on, packed
   * (`../encoding/changes.ts`), waiting up to `waitMs` for one when there is none yet
   * (`../server/queue-waits.ts`, woken after every write of the server); `waitId` names the
   * wait for `queueCancelWait`.
   */
  changesRead: {
    args: [since: number, limit: number, maxBytes: number, waitMs: number, waitId: number];
    result: Uint8Array;
  };
  sequence: { args: []; result: number };
  /** A read-only database reads its writer's progress. */
  catchUp: { args: []; result: void };
  ackChanges: { args: [cursor: string, seq: number]; result: void };
  /** Where the cursor stands (-1: no such cursor). */
  changeCursor: { args: [cursor: string]; result: number };
  removeChangeCursor: { args: [cursor: string]; result: boolean };
  /** Applies a change's bytes (`expected` -1: any start). */
  applyChange: { args: [change: Uint8Array, expected: number]; result: ApplyChangeResult };
  /** The engine's figures (browsers add theirs: `BrowserStats`). */
  stats: { args: []; result: Stats };
  /** A tar archive of the database directory (browsers only). */
  export: { args: []; result: Blob };
  /** Panics inside the WebAssembly module (tests of the panic path only). */
  debugPanic: { args: [message: string]; result: void };
  /**
   * Tests only: the owner carries out this page's next message of requests but does not send
   * its replies (as if the owner's tab went away right after committing).
   */
  debugLoseReplies: { args: []; result: void };
  /** Tests only: the next merged write (a group of writes applied together) fails with `code`. */
  debugFailMergedWrite: { args: [code: ShaleErrorCode]; result: void };
}

export type Op = keyof Protocol;
export type Args<O extends Op> = Protocol[O]["args"];
export type Result<O extends Op> = Protocol[O]["result"];

/**
 * One request: a number unique per client (increasing), the operation, its arguments, and
 * `1` if it was sent before to an owner that went away without answering it (a write then
 * runs only if no owner applied it yet: `../server/applied-writes.ts`).
 */
export type RequestMessage<O extends Op = Op> = [id: number, op: O, args: Args<O>, resent?: 1];

/** A keyspace a page opened earlier, declared to a new owner: the page's number and the name. */
export type KeyspaceDeclaration = [number: number, name: string];

/** An error as it crosses: a ShaleError's code and message. */
export interface WireError {
  code: ShaleErrorCode;
  message: string;
  /** `ShaleError.details`, if any. */
  details?: Readonly<Record<string, number>>;
}

/** One reply: to request `id`, its result or its error. */
export type Reply = [id: number, ok: true, result: unknown] | [id: number, ok: false, error: WireError];
