/**
 * Topic logs, the Promise API (Node's `open` and browsers): requests over the transport naming
 * the topic by name (`../transport/requests.ts`); records encoded and decoded here.
 *
 * A subscription is pull-based: it asks the server for a chunk of records only when the loop
 * has used up the last one, so a slow reader holds at most one chunk and the writer buffers
 * nothing for it. When it has caught up, its request waits on the server
 * (`../server/queue-waits.ts`) until an append to the topic commits — from any caller of the
 * engine; in browsers from any tab, whose appends all go through the owner — without polling.
 *
 * @module
 */
import { FROM_OFFSET } from "../encoding/wire.js";
import { syncOption } from "../arguments/checks.js";
import { MAX_WAIT_MS } from "../arguments/queue-options.js";
import {
  latestCount,
  offsetArgument,
  readArguments,
  subscribeArguments,
  topicGroup,
  type WireFrom,
  appendOptions,
} from "../arguments/topic-options.js";
import type { Codec } from "../encoding/codec.js";
import { closedError } from "../errors.js";
import { decodeRecords, encodeMany, encodeRecord, packRecords } from "../encoding/topic-records.js";
import type { Transport } from "../transport/transport.js";
import type {
  AppendOptions,
  SubscribeOptions,
  Topic,
  TopicReadOptions,
  TopicRecord,
  TopicStats,
  WriteOptions,
} from "../types.js";
import { onFirstPull } from "./first-pull.js";
import type { Waits } from "./waits.js";
import { settle } from "./settle.js";

type AnyRecord = TopicRecord<unknown, unknown>;

export class PromiseTopic implements Topic<unknown, unknown> {
  constructor(
    readonly transport: Transport,
    readonly waits: Waits,
    readonly name: string,
    readonly keyCodec: Codec<unknown>,
    readonly valueCodec: Codec<unknown>,
  ) {}

  /** One record packed for a request (never memory the caller may change meanwhile). */
  packRecord(value: unknown, key: unknown, headers: unknown, what: string): Uint8Array {
    const r = encodeRecord(this, value, key, headers, what);
    return packRecords([r]);
  }

  append(value: unknown, options?: AppendOptions<unknown>): Promise<number> {
    return settle(() => {
      const { sync, key, headers } = appendOptions(options);
      const packed = this.packRecord(value, key, headers, "value");
      return this.transport.request("topicAppend", [this.name, packed, sync]).then((offsets) => offsets[0] as number);
    });
  }

  appendMany(values: readonly unknown[], options?: WriteOptions): Promise<number[]> {
    return settle(() => {
      const sync = syncOption(options);
      const records = encodeMany(this, values);
      if (records.length === 0) {
        return this.transport.closed ? Promise.reject(closedError("the database")) : Promise.resolve([]);
      }
      return this.transport.request("topicAppend", [this.name, packRecords(records), sync]);
    });
  }

  read(options?: TopicReadOptions): Promise<AnyRecord[]> {
    return settle(() => {
      const { from, limit, maxBytes } = readArguments(options);
      return this.transport
        .request("topicRead", [this.name, from, limit, maxBytes, 0, 0])
        .then((bytes) => decodeRecords(bytes, this));
    });
  }

  latest(n: number): Promise<AnyRecord[]> {
    return settle(() =>
      this.transport.request("topicLatest", [this.name, latestCount(n)]).then((bytes) => decodeRecords(bytes, this)),
    );
  }

  subscribe(options?: SubscribeOptions): AsyncIterableIterator<AnyRecord> {
    return onFirstPull(() => {
      const { from, chunk, signal } = subscribeArguments(options, true);
      return subscription(this, from, chunk, signal);
    });
  }

  commit(group: string, offset: number): Promise<void> {
    return settle(() => this.transport.request("topicCommit", [this.name, topicGroup(group), offsetArgument(offset)]));
  }

  committed(group: string): Promise<number | undefined> {
    return settle(() =>
      this.transport.request("topicCommitted", [this.name, topicGroup(group)]).then((o) => (o < 0 ? undefined : o)),
    );
  }

  removeGroup(group: string): Promise<boolean> {
    return settle(() => this.transport.request("topicRemoveGroup", [this.name, topicGroup(group)]));
  }

  applyRetention(): Promise<void> {
    return this.transport.request("topicApplyRetention", [this.name]);
  }

  stats(): Promise<TopicStats> {
    return this.transport.request("topicStats", [this.name]);
  }
}

/**
 * The async iterator of `topic.subscribe`: the start resolved once (on the first pull), then
 * one waiting read per chunk, from the offset after the last record handed out. It ends when
 * the loop breaks (`return`), `signal` aborts (a wait in progress is cancelled) or the database
 * closes while it waits (how a process shuts its loops down); a pull on a closed database
 * rejects with `CLOSED`, and a read's error (the topic deleted, `OFFSET_OUT_OF_RANGE` once
 * retention passed the position) rejects the pull and ends it. Options are checked on the first
 * pull (`./first-pull.ts`).
 */
function subscription(
  topic: PromiseTopic,
  from: WireFrom,
  chunk: number,
  signal: AbortSignal | undefined,
): AsyncIterableIterator<AnyRecord> {
  let next: number | undefined;
  let buffer: AnyRecord[] = [];
  let at = 0;
  let done = false;
  let waitId = 0;
  const finish = (): IteratorResult<AnyRecord> => {
    done = true;
    signal?.removeEventListener("abort", onAbort);
    if (waitId !== 0) {
      topic.waits.open.delete(waitId);
      if (!topic.transport.closed) {
        topic.transport.request("queueCancelWait", [waitId]).catch(() => undefined);
      }
      waitId = 0;
    }
    return { done: true, value: undefined };
  };
  function onAbort(): void {
    finish();
  }
  signal?.addEventListener("abort", onAbort);
  const pull = async (): Promise<IteratorResult<AnyRecord>> => {
    if (signal?.aborted === true) return finish();
    if (!done && topic.transport.closed) {
      finish();
      throw closedError("the database");
    }
    while (!done) {
      if (at < buffer.length) {
        const record = buffer[at++] as AnyRecord;
        next = record.offset + 1;
        return { done: false, value: record };
      }
      if (topic.transport.closed) return finish();
      next ??= await topic.transport.request("topicResolve", [topic.name, from]);
      waitId = topic.waits.start();
      const id = waitId;
      let bytes: Uint8Array;
      try {
        bytes = await topic.transport.request("topicRead", [
          topic.name,
          [FROM_OFFSET, next, undefined],
          chunk,
          Number.MAX_SAFE_INTEGER,
          MAX_WAIT_MS,
          id,
        ]);
      } catch (error) {
        if (done || topic.transport.closed) return finish();
        finish();
        throw error;
      } finally {
        topic.waits.open.delete(id);
        if (waitId === id) waitId = 0;
      }
      if (done) break;
      buffer = decodeRecords(bytes, topic);
      at = 0;
    }
    return finish();
  };
  // Pulls run one at a time, in order (a `for await` loop never overlaps them anyway).
  let last: Promise<unknown> = Promise.resolve();
  const iterator: AsyncIterableIterator<AnyRecord> = {
    next: () => {
      const result = last.then(pull, pull);
      last = result.catch(() => undefined);
      return result;
    },
    return: () => Promise.resolve(finish()),
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
