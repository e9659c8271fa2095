/**
 * An iterator inside the WebAssembly instance, fetched in packed batches (`../encoding/entry-batch.ts`).
 * The synchronous iterators decode its batches in place; the browser worker ships them to the
 * page as they are.
 *
 * @module
 */
import { encodeBounds } from "../encoding/bounds.js";
import type { Codec } from "../encoding/codec.js";
import type { DatabaseHandle } from "./database-handle.js";
import { MODE_FLAGS, type IterationMode } from "../encoding/entry-batch.js";
import { wasm } from "./instance.js";
import { readOutput } from "./scratch.js";
import { snapshotId } from "./snapshot.js";
import type { IteratorOptions } from "../types.js";

/** The most bytes one batch packs (at least one entry is always returned). */
export const MAX_BATCH_BYTES = 256 << 10;

export class NativeIterator {
  #id: number;
  /**
   * Whether the instance reported that nothing is left. The native iterator stays open (a
   * {@link seek} may move it back) until {@link close}.
   */
  exhausted = false;

  /**
   * Opens an iterator over keyspace `keyspace` of `db`: `options`' range (encoded with `keys`),
   * direction and snapshot. `limit` is the caller's business.
   */
  constructor(
    readonly db: DatabaseHandle,
    keyspace: number,
    options: IteratorOptions<unknown>,
    keys: Codec<unknown>,
  ) {
    const b = encodeBounds(options, keys);
    const snapshot = snapshotId(db, options.snapshot);
    this.#id = db.call(() =>
      wasm.iterOpen(
        db.id,
        keyspace,
        snapshot,
        b.lower,
        b.lowerInclusive,
        b.upper,
        b.upperInclusive,
        b.prefix,
        options.reverse === true,
      ),
    );
    db.track("iterator", this.#id, this);
  }

  /**
   * The next batch of at most `want` entries, packed (`../encoding/entry-batch.ts`). Once a batch says it is
   * the last, later calls return empty, exhausted batches (until a {@link seek}).
   */
  fetch(want: number, mode: IterationMode): Uint8Array {
    if (this.#id === 0 || this.exhausted) {
      this.db.check();
      return new Uint8Array([1, 0, 0, 0, 0]);
    }
    const id = this.#id;
    const batch = this.db.call(() => readOutput(wasm.iterNext(id, want, MAX_BATCH_BYTES, MODE_FLAGS[mode])));
    if (batch[0] === 1) {
      this.exhausted = true;
    }
    return batch;
  }

  /**
   * Moves to the first key `>= key` (reverse: the last key `<= key`) within the range, at the
   * iterator's snapshot; the next {@link fetch} starts there. A closed iterator stays closed.
   */
  seek(key: Uint8Array): void {
    if (this.#id === 0) {
      this.db.check();
      return;
    }
    const id = this.#id;
    this.db.call(() => wasm.iterSeek(id, key));
    this.exhausted = false;
  }

  /** Releases the native iterator (and the snapshot and tables it pins). Idempotent. */
  close(): void {
    if (this.#id !== 0) {
      const id = this.#id;
      this.#id = 0;
      this.db.release("iterator", id, this);
    }
  }
}
