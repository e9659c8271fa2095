/**
 * The Level iterators of a `ShaleLevel`: entries, keys and values, each over a {@link Cursor}.
 *
 * @module
 */
import { AbstractIterator, AbstractKeyIterator, AbstractValueIterator } from "abstract-level";

import { Cursor, type ByteDatabase, type CursorSnapshot } from "./cursor.js";
import type { LevelRangeOptions } from "./range.js";

/** The options abstract-level hands to `_iterator`, `_keys` and `_values` (keys already encoded). */
export interface PrivateIteratorOptions extends LevelRangeOptions {
  reverse?: boolean;
  limit?: number;
}

// abstract-level's private iterator API (`_next`, `_nextv`, `_seek`, `_close`) is not in its
// type declarations: these classes add it.

/** Entries the limit still allows. */
function left(limit: number, count: number): number {
  return limit - count;
}

export class ShaleEntryIterator<D> extends AbstractIterator<D, Uint8Array, Uint8Array> {
  readonly #cursor: Cursor<"entries">;

  constructor(db: D, store: ByteDatabase, options: PrivateIteratorOptions, snapshot: CursorSnapshot) {
    super(db, options);
    this.#cursor = new Cursor(store, "entries", options, snapshot);
  }

  async _next(): Promise<[Uint8Array, Uint8Array] | undefined> {
    return (await this.#cursor.nextv(1, left(this.limit, this.count)))[0];
  }

  _nextv(size: number): Promise<[Uint8Array, Uint8Array][]> {
    return this.#cursor.nextv(size, left(this.limit, this.count));
  }

  _seek(target: Uint8Array): void {
    this.#cursor.seek(target);
  }

  _close(): Promise<void> {
    return this.#cursor.close();
  }
}

export class ShaleKeyIterator<D> extends AbstractKeyIterator<D, Uint8Array> {
  readonly #cursor: Cursor<"keys">;

  constructor(db: D, store: ByteDatabase, options: PrivateIteratorOptions, snapshot: CursorSnapshot) {
    super(db, options);
    this.#cursor = new Cursor(store, "keys", options, snapshot);
  }

  async _next(): Promise<Uint8Array | undefined> {
    return (await this.#cursor.nextv(1, left(this.limit, this.count)))[0];
  }

  _nextv(size: number): Promise<Uint8Array[]> {
    return this.#cursor.nextv(size, left(this.limit, this.count));
  }

  _seek(target: Uint8Array): void {
    this.#cursor.seek(target);
  }

  _close(): Promise<void> {
    return this.#cursor.close();
  }
}

export class ShaleValueIterator<D> extends AbstractValueIterator<D, Uint8Array, Uint8Array> {
  readonly #cursor: Cursor<"values">;

  constructor(db: D, store: ByteDatabase, options: PrivateIteratorOptions, snapshot: CursorSnapshot) {
    super(db, options);
    this.#cursor = new Cursor(store, "values", options, snapshot);
  }

  async _next(): Promise<Uint8Array | undefined> {
    return (await this.#cursor.nextv(1, left(this.limit, this.count)))[0];
  }

  _nextv(size: number): Promise<Uint8Array[]> {
    return this.#cursor.nextv(size, left(this.limit, this.count));
  }

  _seek(target: Uint8Array): void {
    this.#cursor.seek(target);
  }

  _close(): Promise<void> {
    return this.#cursor.close();
  }
}
