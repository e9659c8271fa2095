/**
 * `watch()`, the same in both APIs over a {@link WatchSource} (the synchronous API's reads in
 * its thread, or the Promise API's server): one read at a time, each delivery built from the
 * reads up to it (with `coalesce`, also from the commits until the next frame or tick), keys
 * and values decoded by the keyspace's codecs. Delivered as an async iterator (a consumer that
 * falls behind leaves the commits in the feed, not in memory) or to a listener.
 *
 * @module
 */
import type { CheckedWatch } from "../arguments/watch-options.js";
import type { Codec } from "../encoding/codec.js";
import type { WatchBatch, WatchSource, WireWatchOp } from "../engine/watch.js";
import { CHANGE_DELETE, CHANGE_PUT } from "../encoding/wire.js";
import type { WatchChange, WatchEvent, Watcher } from "../types/watch.js";

/** Decodes a watch's keys and values (`values` only when the watch asked for them). */
export interface WatchCodecs {
  readonly keyCodec: Codec<unknown>;
  readonly valueCodec: Codec<unknown>;
}

type Event = WatchEvent<unknown, unknown>;

export class WatcherImpl implements Watcher<unknown, unknown> {
  readonly #source: WatchSource;
  readonly #codecs: WatchCodecs;
  readonly #coalesce: CheckedWatch["coalesce"];
  /** Where the next read starts (0: from now, the first read). */
  #position = 0;
  #closed = false;
  /** The delivery being built or awaited (one at a time). */
  #step: Promise<Event | undefined> | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => this.close();

  constructor(source: WatchSource, codecs: WatchCodecs, checked: Pick<CheckedWatch, "coalesce" | "signal">) {
    this.#source = source;
    this.#codecs = codecs;
    this.#coalesce = checked.coalesce;
    this.#signal = checked.signal;
    if (checked.signal?.aborted === true) {
      this.close();
    }
    checked.signal?.addEventListener("abort", this.#onAbort, { once: true });
    // The watch starts now: its first read takes the position (writes from here on are seen).
    this.#step = this.#deliveryAfter();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Settles after the `next()` before (two at once would read from one position). */
  #queue: Promise<unknown> = Promise.resolve();

  next(): Promise<IteratorResult<Event, undefined>> {
    const result = this.#queue.then(() => this.#next());
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async #next(): Promise<IteratorResult<Event, undefined>> {
    const step = this.#step ?? this.#deliveryAfter();
    this.#step = undefined;
    try {
      const event = await step;
      if (event !== undefined) return { done: false, value: event };
    } catch (error) {
      this.close();
      throw error;
    }
    this.close();
    return { done: true, value: undefined };
  }

  return(): Promise<IteratorResult<Event, undefined>> {
    this.close();
    return Promise.resolve({ done: true, value: undefined });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    this.#source.stop();
    // A first read nobody awaits: its failure (a closed database) is nobody's to hear.
    this.#step?.catch(() => undefined);
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /** Calls `listener` for every delivery until the watch ends; an error is reported, then it ends. */
  deliverTo(listener: (event: Event) => void): () => void {
    void (async () => {
      for (;;) {
        let event: Event | undefined;
        try {
          const next = await this.next();
          if (next.done === true) return;
          event = next.value;
        } catch (error) {
          report(error);
          return;
        }
        try {
          listener(event);
        } catch (error) {
          report(error);
        }
      }
    })();
    return () => this.close();
  }

  /** The next delivery: the writes of the first non-empty read, and of the reads coalesced with it. */
  async #deliveryAfter(): Promise<Event | undefined> {
    const event: Event = { changes: [], seq: 0, overflow: false };
    let batch = await this.#read(true);
    for (;;) {
      if (batch === undefined) return undefined;
      this.#add(event, batch);
      if (!batch.more && (event.changes.length > 0 || event.overflow)) break;
      batch = await this.#read(!batch.more);
    }
    if (this.#coalesce !== undefined) {
      await boundary(this.#coalesce);
      do {
        batch = await this.#read(false);
        if (batch === undefined) return this.#closed ? undefined : event;
        this.#add(event, batch);
      } while (batch.more);
    }
    return event;
  }

  async #read(wait: boolean): Promise<WatchBatch | undefined> {
    if (this.#closed) return undefined;
    const batch = await this.#source.read(this.#position, wait);
    if (batch !== undefined) this.#position = batch.next;
    return this.#closed ? undefined : batch;
  }

  #add(event: Event, batch: WatchBatch): void {
    event.seq = batch.next - 1;
    event.overflow ||= batch.overflow;
    for (const op of batch.ops) event.changes.push(this.#decode(op));
  }

  #decode(op: WireWatchOp): WatchChange<unknown, unknown> {
    const keys = this.#codecs.keyCodec;
    if (op[0] === CHANGE_PUT) {
      return op[2] === undefined
        ? { type: "put", key: keys.decode(op[1]) }
        : { type: "put", key: keys.decode(op[1]), value: this.#codecs.valueCodec.decode(op[2]) };
    }
    if (op[0] === CHANGE_DELETE) {
      return { type: "delete", key: keys.decode(op[1]) };
    }
    return { type: "deleteRange", gte: keys.decode(op[1]), lt: op[2].length === 0 ? undefined : keys.decode(op[2]) };
  }
}

/** Resolves at the next animation frame (else in 16 ms; at most 100 ms in a hidden tab), or the next tick. */
function boundary(kind: "frame" | "tick"): Promise<void> {
  return new Promise((resolve) => {
    const g = globalThis as { requestAnimationFrame?: (callback: () => void) => number };
    if (kind === "tick") {
      setTimeout(resolve, 0);
    } else if (typeof g.requestAnimationFrame === "function") {
      // A hidden tab runs no frames: the timer keeps its watches going, slowly.
      const timer = setTimeout(resolve, 100);
      g.requestAnimationFrame(() => {
        clearTimeout(timer);
        resolve();
      });
    } else {
      setTimeout(resolve, 16);
    }
  });
}

/** Reports an error no caller awaits (a listener's, or a watch's that ended it) as the platform does. */
export function report(error: unknown): void {
  const g = globalThis as { reportError?: (error: unknown) => void };
  if (typeof g.reportError === "function") {
    g.reportError(error);
  } else {
    queueMicrotask(() => {
      throw error;
    });
  }
}

/** `watch()`'s result over `source`: the watcher, or — given a listener — its unsubscriber. */
export function startWatch(
  source: WatchSource,
  codecs: WatchCodecs,
  checked: CheckedWatch,
): Watcher<unknown, unknown> | (() => void) {
  const watcher = new WatcherImpl(source, codecs, checked);
  return checked.listener === undefined ? watcher : watcher.deliverTo(checked.listener);
}
