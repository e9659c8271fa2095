/**
 * Reading a batch of iterator entries as the WebAssembly instance packs them
 * (`crates/wasm/src/iterators.rs`, `iter_next`): one byte, 1 if the iterator is exhausted after
 * these entries; the number of entries, u32 LE; then per entry `length u32 LE, key` when keys
 * are included and `length u32 LE, value` when values are. Slices are views into the batch's
 * buffer: no copies.
 *
 * @module
 */
import type { Codec } from "./codec.js";
import { ITER_WITH_KEYS, ITER_WITH_VALUES } from "./wire.js";

/** What each step of an iterator yields. */
export type IterationMode = "entries" | "keys" | "values" | "count";

/** The `flags` argument of `iterNext` for each mode. */
export const MODE_FLAGS: Record<IterationMode, number> = {
  entries: ITER_WITH_KEYS | ITER_WITH_VALUES,
  keys: ITER_WITH_KEYS,
  values: ITER_WITH_VALUES,
  count: 0,
};

export class EntryBatch {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  readonly #mode: IterationMode;
  #pos = 5;
  /** Entries not yet taken. */
  remaining: number;
  /** Whether the iterator had nothing more after this batch. */
  readonly exhausted: boolean;

  constructor(bytes: Uint8Array, mode: IterationMode) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#mode = mode;
    this.exhausted = bytes[0] === 1;
    this.remaining = this.#view.getUint32(1, true);
  }

  /** An empty, exhausted batch. */
  static empty(): EntryBatch {
    return new EntryBatch(new Uint8Array([1, 0, 0, 0, 0]), "count");
  }

  #take(): Uint8Array {
    const length = this.#view.getUint32(this.#pos, true);
    const start = this.#pos + 4;
    this.#pos = start + length;
    return this.#bytes.subarray(start, this.#pos);
  }

  /** The next entry decoded as the mode says (`[key, value]`, a key or a value). */
  next(keys: Codec<unknown>, values: Codec<unknown>): unknown {
    this.remaining -= 1;
    const key = this.#mode !== "values" ? keys.decode(this.#take()) : undefined;
    const value = this.#mode !== "keys" ? values.decode(this.#take()) : undefined;
    return this.#mode === "entries" ? [key, value] : this.#mode === "keys" ? key : value;
  }
}
