/**
 * Durable queues, the Promise API (Node's `open` and browsers): requests over the transport,
 * naming the queue and group by name (`../transport/requests.ts`); values encoded here, items
 * decoded here. Reads with `waitMs` wait on the server (`../server/queue-waits.ts`).
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
  readOptions,
  releaseOptions,
  valuesArray,
} from "../arguments/queue-options.js";
import type { Codec } from "../encoding/codec.js";
import { ownBytes } from "../encoding/own-bytes.js";
import { decodeItems } from "../encoding/queue-items.js";
import { READ_PEEK, READ_RESERVE, READ_TAKE, type ReadMode } from "../encoding/wire.js";
import type { Transport } from "../transport/transport.js";
import type {
  ConsumeOptions,
  GroupOptions,
  Job,
  Lease,
  PushOptions,
  Queue,
  QueueItem,
  QueueStats,
  ReleaseOptions,
  ReserveOptions,
  TakeOptions,
} from "../types.js";
import { consumeJobs } from "./consume.js";
import type { Waits } from "./waits.js";
import { settle } from "./settle.js";

export class PromiseQueue implements Queue<unknown> {
  constructor(
    readonly transport: Transport,
    readonly waits: Waits,
    readonly name: string,
    readonly groupName: string,
    readonly valueCodec: Codec<unknown>,
  ) {}

  /** The bytes of `value` for a request (never memory the caller may change meanwhile). */
  encodeValue(value: unknown, what = "value"): Uint8Array {
    return ownBytes(this.valueCodec.encode(value, what), value);
  }

  push(value: unknown, options?: PushOptions): Promise<number> {
    return settle(() => {
      const bytes = this.encodeValue(value);
      const o = pushOptions(options);
      return this.transport
        .request("queuePush", [this.name, [bytes], o.sync, o.delayMs, o.ttlMs])
        .then((ids) => ids[0] as number);
    });
  }

  pushMany(values: readonly unknown[], options?: PushOptions): Promise<number[]> {
    return settle(() => {
      const encoded = valuesArray(values).map((v, i) => this.encodeValue(v, `values[${i}]`));
      const o = pushOptions(options);
      return this.transport.request("queuePush", [this.name, encoded, o.sync, o.delayMs, o.ttlMs]);
    });
  }

  /**
   * A read on the server: `mode`, up to `max` items, lease `leaseMs` (0: the queue's), waiting
   * up to `waitMs`. `waitId`: a wait id of {@link Waits} to use (the caller ends it).
   */
  readItems(mode: ReadMode, max: number, leaseMs: number, waitMs: number, waitId?: number): Promise<QueueItem<unknown>[]> {
    const id = waitMs > 0 ? (waitId ?? this.waits.start()) : 0;
    const request = this.transport.request("queueRead", [this.name, this.groupName, mode, max, leaseMs, waitMs, id]);
    const done = (): void => {
      if (waitId === undefined) this.waits.open.delete(id);
    };
    return request.then(
      (bytes) => {
        done();
        return decodeItems(bytes, this.valueCodec);
      },
      (error: unknown) => {
        done();
        throw error;
      },
    );
  }

  take(options?: TakeOptions): Promise<QueueItem<unknown> | undefined> {
    return settle(() => {
      const { waitMs } = readOptions(options, false, true);
      return this.readItems(READ_TAKE, 1, 0, waitMs).then((items) => items[0]);
    });
  }

  takeMany(n: number, options?: TakeOptions): Promise<QueueItem<unknown>[]> {
    return settle(() => {
      const max = itemCount(n);
      const { waitMs } = readOptions(options, false, true);
      return this.readItems(READ_TAKE, max, 0, waitMs);
    });
  }

  peek(): Promise<QueueItem<unknown> | undefined> {
    return settle(() => this.readItems(READ_PEEK, 1, 0, 0).then((items) => items[0]));
  }

  peekMany(n: number): Promise<QueueItem<unknown>[]> {
    return settle(() => this.readItems(READ_PEEK, itemCount(n), 0, 0));
  }

  reserve(options?: ReserveOptions): Promise<QueueItem<unknown> | undefined> {
    return settle(() => {
      const { waitMs, leaseMs } = readOptions(options, true, true);
      return this.readItems(READ_RESERVE, 1, leaseMs, waitMs).then((items) => items[0]);
    });
  }

  reserveMany(n: number, options?: ReserveOptions): Promise<QueueItem<unknown>[]> {
    return settle(() => {
      const max = itemCount(n);
      const { waitMs, leaseMs } = readOptions(options, true, true);
      return this.readItems(READ_RESERVE, max, leaseMs, waitMs);
    });
  }

  ack(itemOrLease: QueueItem<unknown> | Lease): Promise<void> {
    return settle(() => {
      const lease = leaseArgument(itemOrLease);
      const pairs = new Float64Array([lease.id, lease.delivery]);
      return this.transport.request("queueAck", [this.name, this.groupName, pairs]);
    });
  }

  ackMany(itemsOrLeases: readonly (QueueItem<unknown> | Lease)[]): Promise<void> {
    return settle(() => {
      const pairs = leasesArray(itemsOrLeases);
      return this.transport.request("queueAck", [this.name, this.groupName, pairs]);
    });
  }

  release(itemOrLease: QueueItem<unknown> | Lease, options?: ReleaseOptions): Promise<void> {
    return settle(() => {
      const lease = leaseArgument(itemOrLease);
      const delayMs = releaseOptions(options);
      return this.transport.request("queueRelease", [this.name, this.groupName, lease.id, lease.delivery, delayMs]);
    });
  }

  extend(itemOrLease: QueueItem<unknown> | Lease, leaseMs: number): Promise<number> {
    return settle(() => {
      const lease = leaseArgument(itemOrLease);
      const ms = leaseDuration(leaseMs);
      return this.transport.request("queueExtend", [this.name, this.groupName, lease.id, lease.delivery, ms]);
    });
  }

  group(name: string, options?: GroupOptions): Promise<Queue<unknown>> {
    return settle(async () => {
      const checked = groupArguments(name, options);
      await this.transport.request("queueGroup", [this.name, checked.name, checked.head]);
      return new PromiseQueue(this.transport, this.waits, this.name, checked.name, this.valueCodec);
    });
  }

  groups(): Promise<string[]> {
    return this.transport.request("queueGroups", [this.name]);
  }

  removeGroup(name: string): Promise<boolean> {
    return settle(() => this.transport.request("queueRemoveGroup", [this.name, groupArguments(name, undefined).name]));
  }

  stats(): Promise<QueueStats> {
    return this.transport.request("queueStats", [this.name]);
  }

  clear(): Promise<void> {
    return this.transport.request("queueClear", [this.name]);
  }

  consume(options?: ConsumeOptions): AsyncIterableIterator<Job<unknown>> {
    return consumeJobs(this, options);
  }
}
