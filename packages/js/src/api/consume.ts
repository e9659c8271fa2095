/**
 * `queue.consume()`: a worker loop over reservations. It reserves up to `concurrency` items at
 * a time (waiting for them on the server, no polling), hands them out one by one as jobs while
 * fewer than `concurrency` are out (handed out, not yet acked or released), and ends when the
 * loop breaks (`return()`), `signal` aborts, or the database closes while it waits (how a
 * process shuts its loops down); a pull on a closed database rejects with `CLOSED`. On its end,
 * items reserved and not handed out are released at once; jobs handed out stay the caller's.
 * Options are checked on the first pull (`./first-pull.ts`).
 *
 * @module
 */
import { consumeOptions } from "../arguments/queue-options.js";
import { ShaleError, closedError } from "../errors.js";
import { READ_RESERVE, type ReadMode } from "../encoding/wire.js";
import type { ConsumeOptions, Job, QueueItem, ReleaseOptions } from "../types.js";
import { onFirstPull } from "./first-pull.js";
import type { Transport } from "../transport/transport.js";
import type { Waits } from "./waits.js";

/** How long one reservation waits on the server before the loop asks again. */
const WAIT_MS = 60_000;

/** What a consume loop needs of its queue (a Promise-API queue handle). */
export interface ConsumedQueue {
  readonly transport: Transport;
  readonly waits: Waits;
  /** A read on the server: `mode`, up to `max` items, lease `leaseMs`, waiting up to `waitMs` (wait `waitId`). */
  readItems(mode: ReadMode, max: number, leaseMs: number, waitMs: number, waitId?: number): Promise<QueueItem<unknown>[]>;
  ack(item: QueueItem<unknown>): Promise<void>;
  release(item: QueueItem<unknown>, options?: ReleaseOptions): Promise<void>;
  extend(item: QueueItem<unknown>, leaseMs: number): Promise<number>;
}

/** The jobs of `queue` (see the module notes); a bad option is `INVALID_ARGUMENT`, rejecting the first pull. */
export function consumeJobs(queue: ConsumedQueue, options: ConsumeOptions | undefined): AsyncIterableIterator<Job<unknown>> {
  return onFirstPull(() => {
    const { concurrency, leaseMs, signal } = consumeOptions(options);
    return new Consumer(queue, concurrency, leaseMs, signal);
  });
}

class Consumer implements AsyncIterableIterator<Job<unknown>> {
  readonly #queue: ConsumedQueue;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  /** Reserved, not handed out yet. */
  readonly #buffer: QueueItem<unknown>[] = [];
  /** Jobs handed out and not settled. */
  #out = 0;
  #ended = false;
  /** Wakes a `next()` waiting for a job to settle (or the end). */
  #wake: (() => void) | undefined;
  /** The wait id of the reservation under way, if any. */
  #waitId: number | undefined;

  constructor(queue: ConsumedQueue, concurrency: number, leaseMs: number, signal: AbortSignal | undefined) {
    this.#queue = queue;
    this.#concurrency = concurrency;
    this.#leaseMs = leaseMs;
    if (signal?.aborted === true) {
      this.#ended = true;
    }
    signal?.addEventListener("abort", () => this.#stop(), { once: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Job<unknown>> {
    return this;
  }

  async next(): Promise<IteratorResult<Job<unknown>>> {
    if (!this.#ended && this.#queue.transport.closed) {
      this.#stop();
      throw closedError("the database");
    }
    while (!this.#ended) {
      if (this.#out >= this.#concurrency) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        continue;
      }
      const item = this.#buffer.shift();
      if (item !== undefined) {
        this.#out += 1;
        return { done: false, value: this.#job(item) };
      }
      const waitId = this.#queue.waits.start();
      this.#waitId = waitId;
      let items: QueueItem<unknown>[];
      try {
        items = await this.#queue.readItems(READ_RESERVE, this.#concurrency - this.#out, this.#leaseMs, WAIT_MS, waitId);
      } catch (error) {
        if (error instanceof ShaleError && error.code === "CLOSED") {
          this.#ended = true;
          break;
        }
        throw error;
      } finally {
        this.#queue.waits.open.delete(waitId);
        this.#waitId = undefined;
      }
      this.#buffer.push(...items);
    }
    await this.#releaseBuffer();
    return { done: true, value: undefined };
  }

  async return(): Promise<IteratorResult<Job<unknown>>> {
    this.#stop();
    await this.#releaseBuffer();
    return { done: true, value: undefined };
  }

  #stop(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#waitId !== undefined) {
      this.#queue.transport.request("queueCancelWait", [this.#waitId]).catch(() => undefined);
    }
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Releases the items reserved and not handed out (best effort: their leases end anyway). */
  async #releaseBuffer(): Promise<void> {
    const items = this.#buffer.splice(0);
    await Promise.all(items.map((item) => this.#queue.release(item).catch(() => undefined)));
  }

  #job(item: QueueItem<unknown>): Job<unknown> {
    const queue = this.#queue;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      this.#out -= 1;
      const wake = this.#wake;
      this.#wake = undefined;
      wake?.();
    };
    return {
      ...item,
      ack: () => queue.ack(item).finally(settle),
      release: (options?: ReleaseOptions) => queue.release(item, options).finally(settle),
      extend: (leaseMs: number) => queue.extend(item, leaseMs),
    };
  }
}
