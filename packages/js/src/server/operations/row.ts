/**
 * One request of the Promise API, declared once (a *row* of `./table.ts`): the checks of its
 * arguments as they cross (from which their types derive), what it is to the server (a write it
 * may merge with others, a request that may create files, the bytes it writes), and how it is
 * carried out on the synchronous API. The request union of the transport, the server's
 * dispatch, a browser owner's slot reservation and maintenance pacing all read the rows.
 *
 * @module
 */
import type { ShaleError } from "../../errors.js";
import type { StoreImpl } from "../../engine/store.js";
import type { SyncDatabaseImpl } from "../../engine/sync-database.js";
import type { SyncQueueImpl } from "../../engine/queue.js";
import type { SyncTopicImpl } from "../../engine/topic.js";
import type { IteratorOptions, ReadOptions, Stats } from "../../types.js";
import type { ClientResources, OpenTransaction } from "../client-resources.js";
import type { Later } from "../queue-waits.js";
import type { Check, WireRange } from "./wire-checks.js";

/** What the server's host provides beyond the database itself (browsers: their OPFS pool). */
export interface ServerServices {
  /** Runs `job` on the server's queue, alone, after what is queued (waiting queue reads). */
  run(job: () => void): void;
  /**
   * Compacts `[start, end]` of the default keyspace (absent: unbounded): here, or by the
   * maintenance jobs (`Later`: done when it settles, the server serving meanwhile).
   */
  compact(start: Uint8Array | undefined, end: Uint8Array | undefined): void | Later<void>;
  /** Returns the sequence number the copy is consistent at. */
  checkpoint(destination: string): number | Promise<number>;
  exportArchive(): Blob;
  stats(): Stats | Promise<Stats>;
  debugPanic(message: string): void;
  debugLoseReplies(client: ClientResources): void;
  debugFailMergedWrite(code: ShaleError["code"]): void;
}

/**
 * What a row's `run` works with: the database and the server's handles, resolved from what
 * requests name (a client's keyspace number, a queue by name and group, a topic by name).
 */
export interface Context {
  readonly db: SyncDatabaseImpl;
  readonly services: ServerServices;
  /** The engine keyspace that `client`'s keyspace number `ks` names. */
  store(client: ClientResources, ks: number): StoreImpl;
  /** The keyspace argument of a transaction call: `undefined` for the default one (0). */
  txKeyspace(client: ClientResources, ks: number): StoreImpl | undefined;
  /** Read options naming `client`'s snapshot `id` (none for 0 or absent). */
  read(client: ClientResources, id: number | undefined): ReadOptions;
  /** Iterator options of a wire range, its snapshot resolved. */
  range(client: ClientResources, range: WireRange): IteratorOptions<unknown>;
  /** `client`'s open transaction `id` (`CLOSED` if committed or rolled back). */
  transaction(client: ClientResources, id: number): OpenTransaction;
  /** The engine number of keyspace `name`, opened (and created if missing) on first use. */
  openKeyspace(name: string): number;
  /** The handle of queue `name`, group `group` (opened if this server has not yet). */
  queue(name: string, group: string): SyncQueueImpl;
  /** Replaces the handles of queue `name` (of group `group`, or every group): `handle` for it, or none. */
  setQueue(name: string, group: string | undefined, handle: SyncQueueImpl | undefined): void;
  /** The handle of topic `name` (opened if this server has not yet). */
  topic(name: string): SyncTopicImpl;
  /** Replaces the handle of topic `name`: `handle`, or none. */
  setTopic(name: string, handle: SyncTopicImpl | undefined): void;
  /** A new id for an iterator, snapshot or transaction of this server. */
  nextHandle(): number;
}

/** A request's outcome: its result, at once or later (`Later`: the server replies when it settles). */
export type Outcome<R> = R | Promise<R> | Later<R>;

/** A row (module notes); `A` the arguments as they cross, `R` what `run` returns. */
export interface Row<A extends unknown[], R> {
  /** The checks of the arguments, in order. */
  readonly args: { [I in keyof A]: Check<A[I]> };
  /** Carries the request out for `client`; throws (or rejects) with its error. */
  run(x: Context, client: ClientResources, ...args: A): R;
  /**
   * A write the server may commit in one batch with the writes that arrived with it (a group
   * commit: `../write-path.ts`); its packed form is `../executor.ts`'s to make.
   */
  readonly merges?: true;
  /** It may create files (a write may switch the memtable and flush): browsers grow their slot pool first. */
  readonly createsFiles?: true;
  /** Roughly the bytes it writes, for pacing maintenance. */
  readonly bytes?: (args: NoInfer<A>) => number;
}

/** Declares a row, inferring its argument types from its checks. */
export function row<A extends unknown[], R>(declared: Row<A, R>): Row<A, R> {
  return declared;
}

/** The result a row's `run` outcome settles with. */
export type Settled<T> = T extends Later<infer U> ? U : Awaited<T>;
