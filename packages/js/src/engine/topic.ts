/**
 * Topic logs, the synchronous API (`db.topic(name)` of `openSync`), and the engine side of the
 * Promise API's topics (`../server/executor.ts` runs its requests on these objects). Values and
 * keys are encoded by the handle's codecs; records cross packed (`../encoding/topic-records.ts`).
 * After each write call, `DatabaseHandle.afterWrite` wakes the waiting subscriptions of the
 * topics the core woke.
 *
 * @module
 */
import { FROM_OFFSET } from "../encoding/wire.js";
import {

  latestCount,
  offsetArgument,
  readArguments,
  subscribeArguments,
  topicArguments,
  topicGroup,
  type WireFrom,
  type WireTopicOptions,
  appendOptions,
} from "../arguments/topic-options.js";
import { syncOption } from "../arguments/checks.js";
import { keyCodec, valueCodec, type Codec } from "../encoding/codec.js";
import { decodeRecords, encodeMany, encodeRecord, packRecords } from "../encoding/topic-records.js";
import { invalidArgument } from "../errors.js";
import type { PackingTopic } from "../encoding/packed-ops.js";
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./instance.js";
import type { AppendOptions, SubscribeOptions, SyncTopic, TopicReadOptions, TopicRecord, TopicStats } from "../types.js";
import type { WriteOptions } from "../types.js";
import { requirePart } from "./module-parts.js";

/**
 * Opens topic `name` of `db` on the engine: with `settings` replacing its stored configuration,
 * without keeping it.
 */
export function openTopic(
  db: DatabaseHandle,
  name: string,
  settings: WireTopicOptions | undefined,
  keys: Codec<unknown>,
  values: Codec<unknown>,
): SyncTopicImpl {
  requirePart("topics");
  const number = db.write(() =>
    settings === undefined
      ? wasm.dbTopic(db.id, name, true, -1, -1, -1, false)
      : wasm.dbTopic(db.id, name, false, ...settings),
  );
  db.afterWrite();
  return new SyncTopicImpl(db, number, name, keys, values);
}

/** `db.topic(name, options)` of the synchronous API: arguments checked, then {@link openTopic}. */
export function syncTopic(db: DatabaseHandle, name: unknown, options: unknown): SyncTopicImpl {
  const c = topicArguments(name, options);
  return openTopic(db, c.name, c.settings, keyCodec(c.keyEncoding), valueCodec(c.valueEncoding));
}

export class SyncTopicImpl implements SyncTopic<unknown, unknown>, PackingTopic {
  constructor(
    readonly db: DatabaseHandle,
    /** The engine's number of this topic in its database. */
    readonly topicNumber: number,
    readonly name: string,
    readonly keyCodec: Codec<unknown>,
    readonly valueCodec: Codec<unknown>,
  ) {}

  /** One record packed, from unchecked arguments (`PackingTopic`). */
  packRecord(value: unknown, key: unknown, headers: unknown, what: string): Uint8Array {
    return packRecords([encodeRecord(this, value, key, headers, what)]);
  }

  append(value: unknown, options?: AppendOptions<unknown>): number {
    const { sync, key, headers } = appendOptions(options);
    const record = encodeRecord(this, value, key, headers, "value");
    return this.appendEncoded(packRecords([record]), sync)[0] as number;
  }

  appendMany(values: readonly unknown[], options?: WriteOptions): number[] {
    const sync = syncOption(options);
    const records = encodeMany(this, values);
    if (records.length === 0) {
      this.db.check();
      return [];
    }
    return this.appendEncoded(packRecords(records), sync);
  }

  /** Appends records already packed (the server's requests carry bytes); returns their offsets. */
  appendEncoded(packed: Uint8Array, sync: boolean): number[] {
    const offsets = this.db.write(() => wasm.topicAppend(this.db.id, this.topicNumber, packed, sync));
    this.db.afterWrite();
    return Array.from(offsets);
  }

  /** One read, packed as the engine gives it (the server sends it as it is). */
  readPacked(from: WireFrom, limit: number, maxBytes: number): Uint8Array {
    return this.db.call(() => wasm.topicRead(this.db.id, this.topicNumber, from[0], from[1], from[2], limit, maxBytes));
  }

  read(options?: TopicReadOptions): TopicRecord<unknown, unknown>[] {
    const { from, limit, maxBytes } = readArguments(options);
    return decodeRecords(this.readPacked(from, limit, maxBytes), this);
  }

  /** The last `n` records, packed. */
  latestPacked(n: number): Uint8Array {
    return this.db.call(() => wasm.topicLatest(this.db.id, this.topicNumber, n));
  }

  latest(n: number): TopicRecord<unknown, unknown>[] {
    return decodeRecords(this.latestPacked(latestCount(n)), this);
  }

  /** The offset `from` names now. */
  resolve(from: WireFrom): number {
    return this.db.call(() => wasm.topicResolve(this.db.id, this.topicNumber, from[0], from[1], from[2]));
  }

  subscribe(options?: Omit<SubscribeOptions, "signal">): IterableIterator<TopicRecord<unknown, unknown>> {
    const { from, chunk } = subscribeArguments(options, false);
    let next = this.resolve(from);
    let buffer: TopicRecord<unknown, unknown>[] = [];
    let at = 0;
    let done = false;
    const iterator: IterableIterator<TopicRecord<unknown, unknown>> = {
      next: (): IteratorResult<TopicRecord<unknown, unknown>> => {
        if (done) return { done: true, value: undefined };
        if (at >= buffer.length) {
          buffer = decodeRecords(this.readPacked([FROM_OFFSET, next, undefined], chunk, Number.MAX_SAFE_INTEGER), this);
          at = 0;
          if (buffer.length === 0) {
            done = true;
            return { done: true, value: undefined };
          }
        }
        const record = buffer[at++] as TopicRecord<unknown, unknown>;
        next = record.offset + 1;
        return { done: false, value: record };
      },
      return: (): IteratorResult<TopicRecord<unknown, unknown>> => {
        done = true;
        return { done: true, value: undefined };
      },
      [Symbol.iterator]: () => iterator,
    };
    return iterator;
  }

  commit(group: string, offset: number): void {
    this.commitChecked(topicGroup(group), offsetArgument(offset));
  }

  /** A commit of checked arguments. */
  commitChecked(group: string, offset: number): void {
    this.db.write(() => wasm.topicCommit(this.db.id, this.topicNumber, group, offset));
    this.db.afterWrite();
  }

  committed(group: string): number | undefined {
    const checked = topicGroup(group);
    const offset = this.db.call(() => wasm.topicCommitted(this.db.id, this.topicNumber, checked));
    return offset < 0 ? undefined : offset;
  }

  removeGroup(group: string): boolean {
    const checked = topicGroup(group);
    const removed = this.db.write(() => wasm.topicRemoveGroup(this.db.id, this.topicNumber, checked));
    this.db.afterWrite();
    return removed;
  }

  applyRetention(): void {
    this.db.write(() => wasm.topicApplyRetention(this.db.id, this.topicNumber));
    this.db.afterWrite();
  }

  stats(): TopicStats {
    const s = this.db.call(() => wasm.topicStats(this.db.id, this.topicNumber)) as [
      number,
      number,
      number,
      [string, number, number][],
    ];
    return {
      first: s[0],
      next: s[1],
      bytes: s[2],
      groups: s[3].map(([name, committed, lag]) => ({ name, committed, lag })),
    };
  }
}

/** The engine topic behind a batch or transaction operation's `topic`: one of `db`'s. */
export function syncTopicOf(db: DatabaseHandle, topic: unknown): SyncTopicImpl {
  if (!(topic instanceof SyncTopicImpl) || topic.db !== db) {
    throw invalidArgument("a topic operation's topic must be a topic opened on this database");
  }
  return topic;
}


