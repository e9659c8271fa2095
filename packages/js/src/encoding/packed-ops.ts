/**
 * Batch operations packed into one byte array for one call into the instance (layout and op
 * codes: `./wire.ts`). Free of the instance, so browser pages pack
 * batches before they cross to the worker; `../engine/write-packed.ts` applies them.
 *
 * @module
 */
import { batchOperations } from "../arguments/checks.js";
import { leaseArgument, pushOptions } from "../arguments/queue-options.js";
import { offsetArgument, topicGroup } from "../arguments/topic-options.js";
import { invalidArgument } from "../errors.js";
import { maxWrittenBytes, writeUtf8 } from "./utf8-into.js";
import {
  LEASE_LEN,
  OP_ACK,
  OP_APPEND,
  OP_COMMIT_OFFSET,
  OP_DELETE,
  OP_META,
  OP_PUSH,
  OP_PUT,
  PUSH_OPTIONS_LEN,
} from "./wire.js";

/** The offset field of an `OP_COMMIT_OFFSET`. */
export function offsetBytes(offset: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(offset), true);
  return out;
}

/** The options field of an `OP_PUSH`: delay and ttl in ms, f64 LE (-1: none). */
export function pushOptionBytes(delayMs: number, ttlMs: number): Uint8Array {
  const out = new Uint8Array(PUSH_OPTIONS_LEN);
  const view = new DataView(out.buffer);
  view.setFloat64(0, delayMs, true);
  view.setFloat64(8, ttlMs, true);
  return out;
}

/** The lease field of an `OP_ACK`: the id u64 LE and the delivery u32 LE. */
export function leaseBytes(id: number, delivery: number): Uint8Array {
  const out = new Uint8Array(LEASE_LEN);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(id), true);
  view.setUint32(8, delivery, true);
  return out;
}

/** Keys and values up to this many bytes are copied by a loop; longer ones by `TypedArray#set`. */
const LOOP_COPY_MAX = 64;

/** A growable buffer of packed batch operations. */
export class PackedOps {
  #bytes = new Uint8Array(256);
  #view = new DataView(this.#bytes.buffer);
  #length = 0;
  count = 0;
  /**
   * Queue and topic operations among them (`OP_PUSH`, `OP_ACK`, `OP_APPEND`,
   * `OP_COMMIT_OFFSET`): the batch must go through `dbWriteIds`.
   */
  queueOps = 0;

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

  /** A field: `data`'s bytes, or the UTF-8 of text `data` (checked by its codec). */
  #bytesField(data: Uint8Array | string): void {
    const at = this.#length + 4;
    if (typeof data === "string") {
      const written = writeUtf8(this.#bytes, at, data);
      this.#view.setUint32(this.#length, written, true);
      this.#length = at + written;
      return;
    }
    const n = data.length;
    this.#view.setUint32(this.#length, n, true);
    if (n > LOOP_COPY_MAX) {
      this.#bytes.set(data, at);
    } else {
      // A few bytes copy faster by a loop than by `set` (a runtime call).
      const bytes = this.#bytes;
      for (let i = 0; i < n; i++) {
        bytes[at + i] = data[i] as number;
      }
    }
    this.#length = at + n;
  }

  /** Adds an operation; a string key or value is UTF-8 text its codec checked (`packedForm`). */
  add(op: number, keyspace: number, key: Uint8Array | string, value?: Uint8Array | string): void {
    this.#reserve(13 + maxWrittenBytes(key) + (value === undefined ? 0 : maxWrittenBytes(value)));
    this.#bytes[this.#length] = op;
    this.#view.setUint32(this.#length + 1, keyspace, true);
    this.#length += 5;
    this.#bytesField(key);
    if (value !== undefined) {
      this.#bytesField(value);
    }
    if (op === OP_META) {
      return;
    }
    this.count += 1;
    if (op >= OP_PUSH) {
      this.queueOps += 1;
    }
  }

  /**
   * Makes room for `more` operations the size of those added so far: one growth for a batch
   * instead of a doubling every few operations (which copied the buffer ~7 times for 100 puts).
   */
  expect(more: number): void {
    if (this.count > 0 && more > 0) {
      this.#reserve(Math.ceil((this.#length / this.count) * more));
    }
  }

  /** The packed operations (a view, valid until the next `add` or `clear`). */
  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }

  clear(): void {
    this.#length = 0;
    this.count = 0;
    this.queueOps = 0;
  }
}

/**
 * What packing needs of a keyspace: its number, and its keys and values checked, as bytes or as
 * text (`packedForm`): packing copies them at once, so they may be the caller's own memory.
 */
export interface PackingStore {
  readonly keyspaceId: number;
  packKey(key: unknown): Uint8Array | string;
  packValue(value: unknown): Uint8Array | string;
}

/** What packing needs of a queue: its number in the packed batch and its value codec. */
export interface PackingQueue {
  readonly queueNumber: number;
  encodeValue(value: unknown): Uint8Array;
}

/** What packing needs of a topic: its number in the packed batch and its record encoding. */
export interface PackingTopic {
  readonly topicNumber: number;
  /** One record packed (`packRecords` of one), from unchecked arguments. */
  packRecord(value: unknown, key: unknown, headers: unknown, what: string): Uint8Array;
}

/**
 * Packs an array batch (`db.batch([...])`). `storeOf` resolves an operation's `keyspace`
 * (`undefined`: the default keyspace) and rejects one of another database; `queueOf` resolves
 * the `queue` of a push or ack the same way; `meta` is the batch's (`OP_META`). Anything wrong is `INVALID_ARGUMENT`, before
 * anything is written.
 */
export function packOperations(
  storeOf: (keyspace: object | undefined) => PackingStore,
  operations: unknown,
  queueOf?: (queue: unknown) => PackingQueue,
  topicOf?: (topic: unknown) => PackingTopic,
  meta?: Uint8Array,
): PackedOps {
  const ops = new PackedOps();
  if (meta !== undefined) {
    ops.add(OP_META, 0, meta);
  }
  const checked = batchOperations(operations);
  for (const op of checked) {
    if (op.index === 1) {
      ops.expect(checked.length - 1);
    }
    if (op.type === "append" || op.type === "commitOffset") {
      if (topicOf === undefined) {
        throw invalidArgument(`batch operation ${op.index}: topic operations are not supported here`);
      }
      const topic = topicOf(op.op["topic"]);
      if (op.type === "append") {
        const what = `batch operation ${op.index}'s value`;
        ops.add(OP_APPEND, topic.topicNumber, topic.packRecord(op.value, op.op["key"], op.op["headers"], what));
      } else {
        const group = new TextEncoder().encode(topicGroup(op.op["group"]));
        const offset = offsetArgument(op.op["offset"], `batch operation ${op.index}'s offset`);
        ops.add(OP_COMMIT_OFFSET, topic.topicNumber, group, offsetBytes(offset));
      }
      continue;
    }
    if (op.type === "push" || op.type === "ack") {
      if (queueOf === undefined) {
        throw invalidArgument(`batch operation ${op.index}: queue operations are not supported here`);
      }
      const queue = queueOf(op.op["queue"]);
      if (op.type === "push") {
        const { delayMs, ttlMs } = pushOptions({ delayMs: op.op["delayMs"], ttlMs: op.op["ttlMs"] });
        ops.add(OP_PUSH, queue.queueNumber, queue.encodeValue(op.value), pushOptionBytes(delayMs, ttlMs));
      } else {
        const lease = leaseArgument(op.op["lease"], `batch operation ${op.index}'s lease`);
        ops.add(OP_ACK, queue.queueNumber, leaseBytes(lease.id, lease.delivery));
      }
      continue;
    }
    const store = storeOf(op.keyspace);
    if (op.type === "put") {
      ops.add(OP_PUT, store.keyspaceId, store.packKey(op.key), store.packValue(op.value));
    } else {
      ops.add(OP_DELETE, store.keyspaceId, store.packKey(op.key));
    }
  }
  return ops;
}
