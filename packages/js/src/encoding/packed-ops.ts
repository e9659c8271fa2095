/**
 * Batch operations packed into one byte array for one call into the instance (layout:
 * `crates/wasm/src/database.rs`, `db_write`). Free of the instance, so browser pages pack
 * batches before they cross to the worker; `../engine/write-packed.ts` applies them.
 *
 * @module
 */
import { batchOperations } from "../arguments/checks.js";

export const OP_PUT = 0;
export const OP_DELETE = 1;
export const OP_DELETE_RANGE = 2;

/** A growable buffer of packed batch operations. */
export class PackedOps {
  #bytes = new Uint8Array(256);
  #view = new DataView(this.#bytes.buffer);
  #length = 0;
  count = 0;

  #reserve(extra: number): void {
    const need = this.#length + extra;
    if (need <= this.#bytes.length) {
      return;
    }
    const grown = new Uint8Array(Math.max(need, this.#bytes.length * 2));
    grown.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = grown;
    this.#view = new DataView(grown.buffer);
  }

  #bytesField(data: Uint8Array): void {
    this.#view.setUint32(this.#length, data.length, true);
    this.#bytes.set(data, this.#length + 4);
    this.#length += 4 + data.length;
  }

  add(op: number, keyspace: number, key: Uint8Array, value?: Uint8Array): void {
    this.#reserve(13 + key.length + (value?.length ?? 0));
    this.#bytes[this.#length] = op;
    this.#view.setUint32(this.#length + 1, keyspace, true);
    this.#length += 5;
    this.#bytesField(key);
    if (value !== undefined) {
      this.#bytesField(value);
    }
    this.count += 1;
  }

  /** The packed operations (a view, valid until the next `add` or `clear`). */
  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }

  clear(): void {
    this.#length = 0;
    this.count = 0;
  }
}

/** What packing needs of a keyspace: its number and its codecs. */
export interface PackingStore {
  readonly keyspaceId: number;
  encodeKey(key: unknown): Uint8Array;
  encodeValue(value: unknown): Uint8Array;
}

/**
 * Packs an array batch (`db.batch([...])`). `storeOf` resolves an operation's `keyspace`
 * (`undefined`: the default keyspace) and rejects one of another database; anything wrong is
 * `INVALID_ARGUMENT`, before anything is written.
 */
export function packOperations(
  storeOf: (keyspace: object | undefined) => PackingStore,
  operations: unknown,
): PackedOps {
  const ops = new PackedOps();
  for (const op of batchOperations(operations)) {
    const store = storeOf(op.keyspace);
    if (op.type === "put") {
      ops.add(OP_PUT, store.keyspaceId, store.encodeKey(op.key), store.encodeValue(op.value));
    } else {
      ops.add(OP_DELETE, store.keyspaceId, store.encodeKey(op.key));
    }
  }
  return ops;
}
