/**
 * Reads and writes of one keyspace, the Promise API (the database object is its default
 * keyspace's store). Keys and values are encoded here, before anything is sent: a value of the
 * wrong type fails at once, and the server sees bytes only.
 *
 * @module
 */
import { isEmptyRange, type RangeBytes } from "../encoding/bounds.js";
import { liveQueryArguments, watchArguments } from "../arguments/watch-options.js";
import type { WatchSource } from "../engine/watch.js";
import type { LiveQuery, WatchEvent, WatchOptions, Watcher } from "../types/watch.js";
import { liveQuery } from "../watch/live-query.js";
import { remoteWatchSource } from "../watch/remote-source.js";
import { startWatch, WatcherImpl } from "../watch/watcher.js";
import type { Waits } from "./waits.js";
import { deleteRangeArgument, keyspaceArgument, keysArray, readSnapshot, syncOption } from "../arguments/checks.js";
import { packedForm, type Codec } from "../encoding/codec.js";
import type { IterationMode } from "../encoding/entry-batch.js";
import { ownBytes } from "../encoding/own-bytes.js";
import { PackedOps } from "../encoding/packed-ops.js";
import { OP_DELETE_RANGE } from "../encoding/wire.js";
import { closedError, invalidArgument } from "../errors.js";
import type { Transport } from "../transport/transport.js";
import type { AsyncEntryIterator, IteratorOptions, Keyspace, ReadOptions, WriteOptions } from "../types.js";
import { PromiseIterator, wireRange } from "./iterator.js";
import { settle } from "./settle.js";
import { snapshotTarget } from "./snapshot.js";

export class PromiseStore implements Keyspace<unknown, unknown> {
  constructor(
    readonly transport: Transport,
    /** The keyspace's number on this transport (0 = default). */
    readonly keyspaceId: number,
    readonly name: string,
    readonly keyCodec: Codec<unknown>,
    readonly valueCodec: Codec<unknown>,
    /** The database's waiting reads (a watch's are among them). */
    readonly waits: Waits,
  ) {}

  watch(ranges?: unknown, options?: WatchOptions): Watcher<unknown, unknown>;
  watch(ranges: unknown, listener: (event: WatchEvent<unknown, unknown>) => void, options?: WatchOptions): () => void;
  watch(ranges?: unknown, second?: unknown, third?: unknown): Watcher<unknown, unknown> | (() => void) {
    const checked = watchArguments(this.keyCodec, ranges, second, third);
    this.#checkOpen();
    return startWatch(this.#watchSource(checked.ranges, checked.values), this, checked);
  }

  liveQuery<T>(ranges: unknown, read: () => T | Promise<T>, options?: Omit<WatchOptions, "values">): LiveQuery<T> {
    const checked = liveQueryArguments<T>(this.keyCodec, ranges, read, options);
    this.#checkOpen();
    return liveQuery(checked.read, () => new WatcherImpl(this.#watchSource(checked.ranges, false), this, checked));
  }

  #watchSource(ranges: RangeBytes[], values: boolean): WatchSource {
    return remoteWatchSource(this.transport, this.waits, this.keyspaceId, ranges, values);
  }

  #checkOpen(): void {
    if (this.transport.closed) {
      throw closedError("the database");
    }
  }

  /** The bytes of `key` for a request (never memory the caller may change meanwhile). */
  encodeKey(key: unknown): Uint8Array {
    return ownBytes(this.keyCodec.encode(key, "key"), key);
  }

  /** The bytes of `value` for a request. */
  encodeValue(value: unknown): Uint8Array {
    return ownBytes(this.valueCodec.encode(value, "value"), value);
  }

  /**
   * `key` for a single read or write request: checked text (sent as it is: strings are
   * immutable, and the server writes them straight into the engine's memory), else its own bytes.
   */
  #requestKey(key: unknown): Uint8Array | string {
    const k = this.packKey(key);
    return typeof k === "string" ? k : ownBytes(k, key);
  }

  /** `value` for a single write request, as {@link #requestKey}. */
  #requestValue(value: unknown): Uint8Array | string {
    const v = this.packValue(value);
    return typeof v === "string" ? v : ownBytes(v, value);
  }

  /** `key` checked, for a packed batch (which copies it at once). */
  packKey(key: unknown): Uint8Array | string {
    return packedForm(this.keyCodec, key, "key");
  }

  /** `value` checked, for a packed batch (which copies it at once). */
  packValue(value: unknown): Uint8Array | string {
    return packedForm(this.valueCodec, value, "value");
  }

  #decode(value: Uint8Array | undefined): unknown {
    return value === undefined ? undefined : this.valueCodec.decode(value);
  }

  get(key: unknown, options?: ReadOptions): Promise<unknown> {
    return settle(() => {
      const k = this.#requestKey(key);
      const [snapshot, server] = snapshotTarget(this.transport, readSnapshot(options));
      return this.transport
        .request("get", [this.keyspaceId, k, snapshot], server)
        .then((v) => this.#decode(v));
    });
  }

  getMany(keys: readonly unknown[], options?: ReadOptions): Promise<unknown[]> {
    return settle(() => {
      const encoded = keysArray(keys).map((k) => this.encodeKey(k));
      const [snapshot, server] = snapshotTarget(this.transport, readSnapshot(options));
      return this.transport
        .request("getMany", [this.keyspaceId, encoded, snapshot], server)
        .then((values) => values.map((v) => this.#decode(v)));
    });
  }

  has(key: unknown, options?: ReadOptions): Promise<boolean> {
    return settle(() => {
      const k = this.#requestKey(key);
      const [snapshot, server] = snapshotTarget(this.transport, readSnapshot(options));
      return this.transport.request("has", [this.keyspaceId, k, snapshot], server);
    });
  }

  put(key: unknown, value: unknown, options?: WriteOptions): Promise<void> {
    return settle(() => {
      const args: [number, Uint8Array | string, Uint8Array | string, boolean] = [
        this.keyspaceId,
        this.#requestKey(key),
        this.#requestValue(value),
        syncOption(options),
      ];
      return this.transport.request("put", args);
    });
  }

  delete(key: unknown, options?: WriteOptions): Promise<void> {
    return settle(() =>
      this.transport.request("delete", [this.keyspaceId, this.#requestKey(key), syncOption(options)]),
    );
  }

  deleteRange(range: { gte: unknown; lt: unknown }, options?: WriteOptions): Promise<void> {
    return settle(() => {
      const { gte, lt } = deleteRangeArgument(range);
      const start = this.keyCodec.encode(gte, "range.gte");
      const end = this.keyCodec.encode(lt, "range.lt");
      const sync = syncOption(options);
      if (isEmptyRange(start, end)) {
        // Nothing to delete (the Level rule); a closed database still rejects.
        return this.transport.closed ? Promise.reject(closedError("the database")) : Promise.resolve();
      }
      const ops = new PackedOps();
      ops.add(OP_DELETE_RANGE, this.keyspaceId, start, end);
      return this.transport.request("write", [ops.bytes().slice(), sync]);
    });
  }

  #iterate<T>(mode: IterationMode, options: IteratorOptions<unknown> | undefined): PromiseIterator<T> {
    return new PromiseIterator<T>(this.transport, this.keyspaceId, options, mode, this.keyCodec, this.valueCodec);
  }

  iterator(options?: IteratorOptions<unknown>): AsyncEntryIterator<[unknown, unknown]> {
    return this.#iterate("entries", options);
  }

  keys(options?: IteratorOptions<unknown>): AsyncEntryIterator<unknown> {
    return this.#iterate("keys", options);
  }

  values(options?: IteratorOptions<unknown>): AsyncEntryIterator<unknown> {
    return this.#iterate("values", options);
  }

  count(options?: IteratorOptions<unknown>): Promise<number> {
    return settle(() => {
      const { range, server } = wireRange(this.transport, options, this.keyCodec);
      if (range.limit === 0) {
        return Promise.resolve(0);
      }
      return this.transport.request("count", [this.keyspaceId, range], server);
    });
  }
}

/**
 * The store a keyspace argument names: `fallback` when it is absent, else the keyspace behind
 * `keyspace`, which must be a keyspace object of `fallback`'s database (`INVALID_ARGUMENT`
 * otherwise: `null`, a name, a keyspace of another database or of the synchronous API).
 */
export function storeOf(fallback: PromiseStore, keyspace: unknown): PromiseStore {
  if (keyspaceArgument(keyspace) === undefined) {
    return fallback;
  }
  if (!(keyspace instanceof PromiseStore) || keyspace.transport !== fallback.transport) {
    throw invalidArgument("the keyspace must be one opened on this database");
  }
  return keyspace;
}
