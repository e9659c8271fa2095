/**
 * Batch operations packed into one byte array for one call into the instance (layout:
 * `crates/wasm/src/database.rs`, `db_write`). Free of the instance, so browser pages pack
 * batches before they cross to the worker; `write-packed.ts` applies them.
 *
 * @module
 */
import { invalidArgument } from "./errors.js";
import type { WriteOptions } from "./types.js";

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

/** `options.sync`, checked: a boolean or absent. */
export function syncOption(options: WriteOptions | undefined): boolean {
  const sync: unknown = options?.sync;
  if (sync !== undefined && typeof sync !== "boolean") {
    throw invalidArgument(`options.sync must be a boolean, got ${typeof sync}`);
  }
  return sync === true;
}

/** What packing needs of a keyspace: its number and its codecs. */
export interface PackingStore {
  readonly keyspaceId: number;
  encodeKey(key: unknown): Uint8Array;
  encodeValue(value: unknown): Uint8Array;
}

/** Packs an array batch (`db.batch([...])`) of `store`; a bad operation is `INVALID_ARGUMENT`. */
export function packOperations(
  store: PackingStore,
  operations: readonly { type: string; key: unknown; value?: unknown }[],
): PackedOps {
  const ops = new PackedOps();
  if (!Array.isArray(operations)) {
    throw invalidArgument("batch operations must be an array");
  }
  for (const op of operations) {
    if (op?.type === "put") {
      ops.add(OP_PUT, store.keyspaceId, store.encodeKey(op.key), store.encodeValue(op.value));
    } else if (op?.type === "delete") {
      ops.add(OP_DELETE, store.keyspaceId, store.encodeKey(op.key));
    } else {
      throw invalidArgument(`a batch operation's type must be "put" or "delete"`);
    }
  }
  return ops;
}
