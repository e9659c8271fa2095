/**
 * The walk behind a Level iterator: a ShaleDB iterator over a range at one snapshot. A seek
 * moves it (ShaleDB's `seek`); after its end (a ShaleDB iterator closes itself there) a seek opens
 * another at the same snapshot, from the target on, so it sees what the first one saw.
 *
 * @module
 */
import type { AsyncEntryIterator, Database, Snapshot } from "../types.js";
import { levelRange, seekRange, shaleBounds, type ByteRange, type LevelRangeOptions } from "./range.js";

/** What an iterator yields: entries, keys or values. */
export type CursorMode = "entries" | "keys" | "values";

/** A ShaleDB database with keys and values as bytes, the store of a `ShaleLevel`. */
export type ByteDatabase = Database<Uint8Array, Uint8Array>;

/** An item of a cursor of `mode`. */
export type CursorItem<M extends CursorMode> = M extends "entries" ? [Uint8Array, Uint8Array] : Uint8Array;

/** Where a cursor reads: a snapshot it owns (made when it was created) or one it borrows. */
export interface CursorSnapshot {
  snapshot: Promise<Snapshot>;
  owned: boolean;
}

/** A snapshot of `db` taken now; its failure surfaces at the first read. */
export function takeSnapshot(db: ByteDatabase): Promise<Snapshot> {
  const snapshot = db.snapshot();
  snapshot.catch(() => undefined);
  return snapshot;
}

export class Cursor<M extends CursorMode> {
  readonly #db: ByteDatabase;
  readonly #mode: M;
  readonly #reverse: boolean;
  readonly #snapshot: CursorSnapshot;
  readonly #range: ByteRange;
  /** Where a reopened iterator starts (the last seek's target). */
  #from: Uint8Array | undefined;
  #it: AsyncEntryIterator<CursorItem<M>, Uint8Array> | undefined;
  #ended = false;

  constructor(db: ByteDatabase, mode: M, options: LevelRangeOptions & { reverse?: boolean }, snapshot: CursorSnapshot) {
    this.#db = db;
    this.#mode = mode;
    this.#reverse = options.reverse === true;
    this.#range = levelRange(options);
    this.#snapshot = snapshot;
  }

  /** Up to `size` next items; fewer (or none) only at the end. `remaining`: what the limit allows. */
  async nextv(size: number, remaining: number): Promise<CursorItem<M>[]> {
    const items: CursorItem<M>[] = [];
    if (this.#ended) {
      return items;
    }
    const it = this.#it ?? (await this.#open(remaining));
    while (items.length < size) {
      const r = await it.next();
      if (r.done === true) {
        this.#ended = true;
        break;
      }
      items.push(r.value);
    }
    return items;
  }

  /** Moves to the first key `>= target` (reverse: the last `<= target`) within the range. */
  seek(target: Uint8Array): void {
    if (this.#it !== undefined && !this.#ended) {
      this.#it.seek(target);
      return;
    }
    this.#from = target;
    this.#ended = false;
    this.#drop();
  }

  async close(): Promise<void> {
    this.#drop();
    if (this.#snapshot.owned) {
      const snapshot = await this.#snapshot.snapshot.catch(() => undefined);
      snapshot?.close();
    }
  }

  async #open(remaining: number): Promise<AsyncEntryIterator<CursorItem<M>, Uint8Array>> {
    const snapshot = await this.#snapshot.snapshot;
    const options = {
      ...shaleBounds(this.#from === undefined ? this.#range : seekRange(this.#range, this.#from, this.#reverse)),
      reverse: this.#reverse,
      snapshot,
      ...(Number.isFinite(remaining) ? { limit: Math.max(0, remaining) } : {}),
    };
    const db = this.#db;
    const it = (
      this.#mode === "entries" ? db.iterator(options) : this.#mode === "keys" ? db.keys(options) : db.values(options)
    ) as AsyncEntryIterator<CursorItem<M>, Uint8Array>;
    this.#it = it;
    return it;
  }

  #drop(): void {
    const it = this.#it;
    this.#it = undefined;
    it?.close().catch(() => undefined);
  }
}
