/**
 * Durable queues, the synchronous API (`db.queue(name)` of `openSync`), and the engine side of
 * the Promise API's queues (`../server/executor.ts` runs its requests on these objects). Values
 * are encoded by the handle's codec; items cross packed (`../encoding/queue-items.ts`). After
 * each write call, `DatabaseHandle.afterWrite` wakes the waiting reads of the queues the core
 * woke.
 *
 * @module
 */
import {
  groupArguments,
  itemCount,
  leaseArgument,
  leaseDuration,
  leasesArray,
  pushOptions,
  queueArguments,
  readOptions,
  releaseOptions,
  valuesArray,
  type PushArguments,
  type WireQueueOptions,
} from "../arguments/queue-options.js";
import { valueCodec, type Codec } from "../encoding/codec.js";
import type { PackingQueue } from "../encoding/packed-ops.js";
import { decodeItems, packValues } from "../encoding/queue-items.js";
import { invalidArgument } from "../errors.js";
import { READ_PEEK, READ_RESERVE, READ_TAKE, type ReadMode } from "../encoding/wire.js";
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./instance.js";
import type {
  GroupOptions,
  Lease,
  PushOptions,
  QueueItem,
  QueueStats,
  ReleaseOptions,
  ReserveOptions,
  SyncQueue,
  TakeOptions,
} from "../types.js";
import { requirePart } from "./module-parts.js";


/**
 * Opens queue `name` of `db` on the engine: with `settings` replacing its stored configuration,
 * without keeping it.
 */
export function openQueue(
  db: DatabaseHandle,
  name: string,
  settings: WireQueueOptions | undefined,
  codec: Codec<unknown>,
): SyncQueueImpl {
  requirePart("queues");
  const number = db.write(() =>
    settings === undefined
      ? wasm.dbQueue(db.id, name, true, -1, -1, false, -1, undefined, 0, -1)
      : wasm.dbQueue(db.id, name, false, ...settings),
  );
  return new SyncQueueImpl(db, number, name, "", codec);
}

/** `db.queue(name, options)` of the synchronous API: arguments checked, then {@link openQueue}. */
export function syncQueue(db: DatabaseHandle, name: unknown, options: unknown): SyncQueueImpl {
  const checked = queueArguments(name, options);
  return openQueue(db, checked.name, checked.settings, valueCodec(checked.valueEncoding));
}

export class SyncQueueImpl implements SyncQueue<unknown>, PackingQueue {
  constructor(
    readonly db: DatabaseHandle,
    /** The engine's number of this handle (queue and group) in its database. */
    readonly queueNumber: number,
    readonly name: string,
    readonly groupName: string,
    readonly valueCodec: Codec<unknown>,
  ) {}

  encodeValue(value: unknown): Uint8Array {
    return this.valueCodec.encode(value, "value");
  }

  push(value: unknown, options?: PushOptions): number {
    const bytes = this.encodeValue(value);
    return this.pushEncoded([bytes], pushOptions(options))[0] as number;
  }

  pushMany(values: readonly unknown[], options?: PushOptions): number[] {
    const encoded = valuesArray(values).map((v, i) => this.valueCodec.encode(v, `values[${i}]`));
    return this.pushEncoded(encoded, pushOptions(options));
  }

  /** Pushes values already encoded, with checked options (the server's requests carry bytes). */
  pushEncoded(values: readonly Uint8Array[], o: PushArguments): number[] {
    if (values.length === 0) {
      this.db.check();
      return [];
    }
    const packed = packValues(values);
    const ids = this.db.write(() =>
      wasm.queuePush(this.db.id, this.queueNumber, packed, o.sync, o.delayMs, o.ttlMs),
    );
    this.db.afterWrite();
    return Array.from(ids);
  }

  /**
   * One attempt at a read (never waits): the items packed as the engine gives them, which the
   * server sends as they are. `leaseMs` 0: the queue's default.
   */
  readPacked(mode: ReadMode, max: number, leaseMs: number): Uint8Array {
    const bytes =
      mode === READ_PEEK
        ? this.db.call(() => wasm.queueRead(this.db.id, this.queueNumber, mode, max, 0))
        : this.db.write(() => wasm.queueRead(this.db.id, this.queueNumber, mode, max, leaseMs));
    if (mode !== READ_PEEK) {
      this.db.afterWrite();
    }
    return bytes;
  }

  #read(mode: ReadMode, max: number, leaseMs: number): QueueItem<unknown>[] {
    return decodeItems(this.readPacked(mode, max, leaseMs), this.valueCodec);
  }

  take(options?: TakeOptions): QueueItem<unknown> | undefined {
    readOptions(options, false, false);
    return this.#read(READ_TAKE, 1, 0)[0];
  }

  takeMany(n: number, options?: TakeOptions): QueueItem<unknown>[] {
    const max = itemCount(n);
    readOptions(options, false, false);
    return this.#read(READ_TAKE, max, 0);
  }

  peek(): QueueItem<unknown> | undefined {
    return this.#read(READ_PEEK, 1, 0)[0];
  }

  peekMany(n: number): QueueItem<unknown>[] {
    return this.#read(READ_PEEK, itemCount(n), 0);
  }

  reserve(options?: ReserveOptions): QueueItem<unknown> | undefined {
    const { leaseMs } = readOptions(options, true, false);
    return this.#read(READ_RESERVE, 1, leaseMs)[0];
  }

  reserveMany(n: number, options?: ReserveOptions): QueueItem<unknown>[] {
    const max = itemCount(n);
    const { leaseMs } = readOptions(options, true, false);
    return this.#read(READ_RESERVE, max, leaseMs);
  }

  ack(itemOrLease: QueueItem<unknown> | Lease): void {
    const lease = leaseArgument(itemOrLease);
    this.ackPairs(new Float64Array([lease.id, lease.delivery]));
  }

  ackMany(itemsOrLeases: readonly (QueueItem<unknown> | Lease)[]): void {
    const pairs = leasesArray(itemsOrLeases);
    if (pairs.length === 0) {
      this.db.check();
      return;
    }
    this.ackPairs(pairs);
  }

  /** Acks leases given as id, delivery pairs. */
  ackPairs(pairs: Float64Array): void {
    this.db.write(() => wasm.queueAck(this.db.id, this.queueNumber, pairs));
    this.db.afterWrite();
  }

  release(itemOrLease: QueueItem<unknown> | Lease, options?: ReleaseOptions): void {
    const lease = leaseArgument(itemOrLease);
    const delayMs = releaseOptions(options);
    this.db.write(() => wasm.queueRelease(this.db.id, this.queueNumber, lease.id, lease.delivery, delayMs));
    this.db.afterWrite();
  }

  extend(itemOrLease: QueueItem<unknown> | Lease, leaseMs: number): number {
    const lease = leaseArgument(itemOrLease);
    const ms = leaseDuration(leaseMs);
    const until = this.db.write(() =>
      wasm.queueExtend(this.db.id, this.queueNumber, lease.id, lease.delivery, ms),
    );
    this.db.afterWrite();
    return until;
  }

  /** When this group next has an item come back by itself (ms since the epoch), if known. */
  nextWake(): number | undefined {
    const at = this.db.call(() => wasm.queueNextWake(this.db.id, this.queueNumber));
    return at < 0 ? undefined : at;
  }

  group(name: string, options?: GroupOptions): SyncQueueImpl {
    const checked = groupArguments(name, options);
    return this.groupHandle(checked.name, checked.head);
  }

  /** A handle of group `name` (checked), created starting at the head or the tail if missing. */
  groupHandle(name: string, head: boolean): SyncQueueImpl {
    const number = this.db.write(() => wasm.queueGroup(this.db.id, this.queueNumber, name, head));
    return new SyncQueueImpl(this.db, number, this.name, name, this.valueCodec);
  }

  groups(): string[] {
    return this.db.call(() => wasm.queueGroups(this.db.id, this.queueNumber));
  }

  removeGroup(name: string): boolean {
    const checked = groupArguments(name, undefined).name;
    const removed = this.db.write(() => wasm.queueRemoveGroup(this.db.id, this.queueNumber, checked));
    this.db.afterWrite();
    return removed;
  }

  stats(): QueueStats {
    const s = this.db.call(() => wasm.queueStats(this.db.id, this.queueNumber)) as [
      number,
      number,
      number,
      number,
      number,
      [string, number, number][],
    ];
    return {
      items: s[0],
      bytes: s[1],
      oldestAgeMs: s[2] < 0 ? undefined : s[2],
      reserved: s[3],
      deadLettered: s[4],
      groups: s[5].map(([name, lag, reserved]) => ({ name, lag, reserved })),
    };
  }

  clear(): void {
    this.db.write(() => wasm.queueClear(this.db.id, this.queueNumber));
    this.db.afterWrite();
  }
}

/** The engine queue behind a batch operation's `queue`: one of `db`'s synchronous queues. */
export function syncQueueOf(db: DatabaseHandle, queue: unknown): SyncQueueImpl {
  if (!(queue instanceof SyncQueueImpl) || queue.db !== db) {
    throw invalidArgument("a batch operation's queue must be a queue opened on this database");
  }
  return queue;
}
