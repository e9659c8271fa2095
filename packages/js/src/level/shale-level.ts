/**
 * `ShaleLevel`: an `abstract-level` (v3) database over ShaleDB's Promise API, so the Level
 * ecosystem (sublevels, hooks, encodings, `level-read-stream`, ...) runs on ShaleDB. Keys and
 * values are stored as bytes (format `view`); abstract-level encodes and decodes every other
 * encoding. Iterators read from a snapshot taken when they are made, and explicit snapshots
 * (`db.snapshot()`) are ShaleDB snapshots.
 *
 * Where the database comes from (Node's file system or a browser's OPFS) is the subclass's
 * business: `level-node.ts` and `level-browser.ts`.
 *
 * @module
 */
import { AbstractLevel, type AbstractDatabaseOptions, type AbstractOpenOptions } from "abstract-level";

import { closedError } from "../errors.js";
import type { OpenOptions, ReadOptions } from "../types.js";
import { takeSnapshot, type ByteDatabase, type CursorSnapshot } from "./cursor.js";
import { ShaleEntryIterator, ShaleKeyIterator, ShaleValueIterator, type PrivateIteratorOptions } from "./iterators.js";
import { shaleBounds, levelRange, successor, type LevelRangeOptions } from "./range.js";
import { ShaleLevelSnapshot } from "./snapshot.js";

/** ShaleDB's open options a `ShaleLevel` passes on (it sets the encodings and open modes itself). */
export type ShaleOpenOptions = Omit<OpenOptions<"binary", "binary">, "keyEncoding" | "valueEncoding" | "createIfMissing" | "errorIfExists">;

/** Options of `new ShaleLevel(location, options)`. */
export interface ShaleLevelOptions<K, V> extends AbstractDatabaseOptions<K, V> {
  /** ShaleDB's own open options (memtable size, `engineThread`, ...). */
  shaledb?: ShaleOpenOptions;
}

/** An operation of `_batch`, encoded by abstract-level. */
interface PrivateOperation {
  type: "put" | "del";
  key: Uint8Array;
  value?: Uint8Array;
}

/** Read options as abstract-level hands them to the private API. */
interface PrivateReadOptions {
  snapshot?: unknown;
}

/** Clear options as abstract-level hands them to `_clear`. */
interface PrivateClearOptions extends LevelRangeOptions, PrivateReadOptions {
  reverse?: boolean;
  limit?: number;
}

/** Keys deleted per batch by a `clear` that cannot be one range deletion. */
const CLEAR_CHUNK = 1000;

export abstract class ShaleLevelBase<K = string, V = string> extends AbstractLevel<Uint8Array, K, V> {
  /** Where the database is: a directory (Node) or a database name (browsers). */
  readonly location: string;
  readonly #shaleOptions: ShaleOpenOptions;
  #store: ByteDatabase | undefined;

  constructor(location: string, options?: ShaleLevelOptions<K, V>) {
    const { shaledb, ...levelOptions } = options ?? {};
    super(
      {
        encodings: { view: true },
        implicitSnapshots: true,
        explicitSnapshots: true,
        seek: true,
        permanence: true,
        createIfMissing: true,
        errorIfExists: true,
        has: true,
      },
      levelOptions,
    );
    if (typeof location !== "string" || location === "") {
      throw new TypeError("The first argument 'location' must be a non-empty string");
    }
    this.location = location;
    this.#shaleOptions = shaledb ?? {};
  }

  /** Opens the ShaleDB database at `location` (Node: `open`; browsers: the browser `open`). */
  protected abstract openStore(location: string, options: OpenOptions<"binary", "binary">): Promise<ByteDatabase>;

  /** The open ShaleDB database. */
  get store(): ByteDatabase {
    if (this.#store === undefined) {
      throw closedError("the database");
    }
    return this.#store;
  }

  async _open(options: AbstractOpenOptions): Promise<void> {
    this.#store = await this.openStore(this.location, {
      ...this.#shaleOptions,
      keyEncoding: "binary",
      valueEncoding: "binary",
      createIfMissing: options.createIfMissing !== false,
      errorIfExists: options.errorIfExists === true,
    });
  }

  async _close(): Promise<void> {
    const store = this.#store;
    this.#store = undefined;
    await store?.close();
  }

  async #readOptions(options: PrivateReadOptions | undefined): Promise<ReadOptions> {
    const s = options?.snapshot;
    return s instanceof ShaleLevelSnapshot ? { snapshot: await s.shale } : {};
  }

  async _get(key: Uint8Array, options?: PrivateReadOptions): Promise<Uint8Array | undefined> {
    return this.store.get(key, await this.#readOptions(options));
  }

  async _getMany(keys: Uint8Array[], options?: PrivateReadOptions): Promise<(Uint8Array | undefined)[]> {
    return this.store.getMany(keys, await this.#readOptions(options));
  }

  async _has(key: Uint8Array, options?: PrivateReadOptions): Promise<boolean> {
    return this.store.has(key, await this.#readOptions(options));
  }

  async _hasMany(keys: Uint8Array[], options?: PrivateReadOptions): Promise<boolean[]> {
    const ro = await this.#readOptions(options);
    const values = await this.store.getMany(keys, ro);
    return values.map((v) => v !== undefined);
  }

  _put(key: Uint8Array, value: Uint8Array): Promise<void> {
    return this.store.put(key, value);
  }

  _del(key: Uint8Array): Promise<void> {
    return this.store.delete(key);
  }

  async _batch(operations: PrivateOperation[]): Promise<void> {
    const batch = this.store.batch();
    for (const op of operations) {
      if (op.type === "put") {
        batch.put(op.key, op.value ?? new Uint8Array());
      } else {
        batch.delete(op.key);
      }
    }
    await batch.write();
  }

  async _clear(options: PrivateClearOptions): Promise<void> {
    const store = this.store;
    const limit = options.limit === undefined || options.limit < 0 ? Infinity : options.limit;
    const { lower, upper } = levelRange(options);
    const explicit = options.snapshot instanceof ShaleLevelSnapshot ? options.snapshot.shale : undefined;
    if (explicit === undefined && limit === Infinity && lower !== undefined && upper !== undefined) {
      // One range tombstone: [gte, lt), an inclusive end made exclusive by its successor.
      const gte = lower.inclusive ? lower.key : successor(lower.key);
      const lt = upper.inclusive ? successor(upper.key) : upper.key;
      await store.deleteRange({ gte, lt });
      return;
    }
    // The keys to delete are those the snapshot (given, or taken now) sees.
    const snapshot = await (explicit ?? store.snapshot());
    try {
      const keys = store.keys({
        ...shaleBounds({ lower, upper }),
        reverse: options.reverse === true,
        snapshot,
        ...(limit === Infinity ? {} : { limit }),
      });
      let batch = store.batch();
      for await (const key of keys) {
        batch.delete(key);
        if (batch.length >= CLEAR_CHUNK) {
          await batch.write();
          batch = store.batch();
        }
      }
      await batch.write();
    } finally {
      if (explicit === undefined) {
        snapshot.close();
      }
    }
  }

  #cursorSnapshot(options: PrivateReadOptions): CursorSnapshot {
    const s = options.snapshot;
    if (s instanceof ShaleLevelSnapshot) {
      return { snapshot: s.shale, owned: false };
    }
    return { snapshot: takeSnapshot(this.store), owned: true };
  }

  _iterator(options: PrivateIteratorOptions & PrivateReadOptions): ShaleEntryIterator<this> {
    return new ShaleEntryIterator(this, this.store, options, this.#cursorSnapshot(options));
  }

  _keys(options: PrivateIteratorOptions & PrivateReadOptions): ShaleKeyIterator<this> {
    return new ShaleKeyIterator(this, this.store, options, this.#cursorSnapshot(options));
  }

  _values(options: PrivateIteratorOptions & PrivateReadOptions): ShaleValueIterator<this> {
    return new ShaleValueIterator(this, this.store, options, this.#cursorSnapshot(options));
  }

  _snapshot(options: { owner: object }): ShaleLevelSnapshot {
    return new ShaleLevelSnapshot(options, this.store);
  }
}
