/**
 * Changes of the feed as they cross the WebAssembly boundary and transports (layout:
 * `crates/wasm/src/changes.rs`, constants `./wire.ts`): packed one after another, decoded here for both APIs.
 *
 * @module
 */
import { CHANGE_DELETE, CHANGE_HEAD_LEN, CHANGE_PUT, NO_FIELD } from "./wire.js";
import type { Change, ChangeOp } from "../types.js";


const decoder = new TextDecoder();

/** Reads the packed layout from `at` on. */
class PackedReader {
  readonly #bytes: Uint8Array;
  readonly view: DataView;
  at: number;

  constructor(bytes: Uint8Array, at = 0) {
    this.#bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.at = at;
  }

  u8(): number {
    return this.view.getUint8(this.at++);
  }

  u32(): number {
    const n = this.view.getUint32(this.at, true);
    this.at += 4;
    return n;
  }

  f64(): number {
    const n = this.view.getFloat64(this.at, true);
    this.at += 8;
    return n;
  }

  /** A length-prefixed field, as a view of the packed bytes. */
  field(): Uint8Array {
    const n = this.u32();
    this.at += n;
    return this.#bytes.subarray(this.at - n, this.at);
  }

  skipField(): void {
    const n = this.u32(); // before `this.at` is read: u32() moves it
    this.at += n;
  }
}

/**
 * The changes packed in `bytes` (which the caller owns: keys, values, meta and `bytes` of the
 * changes are views of it). Each change's `ops` is decoded on first read (an own enumerable
 * property: spreading, `JSON.stringify` and structured clones see it), so a forwarder that only
 * sends `bytes` on never pays for the ops' objects.
 */
export function decodeChanges(bytes: Uint8Array): Change[] {
  const r = new PackedReader(bytes);
  const out: Change[] = [];
  while (r.at + CHANGE_HEAD_LEN + 8 <= bytes.length) {
    const seq = r.f64();
    const lastSeq = r.f64();
    const time = r.f64();
    let meta: Uint8Array | null = null;
    if (r.view.getUint32(r.at, true) === NO_FIELD) {
      r.at += 4;
    } else {
      meta = r.field();
    }
    const count = r.u32();
    const opsAt = r.at;
    for (let i = 0; i < count; i++) {
      const kind = r.u8();
      r.skipField(); // keyspace
      r.skipField(); // key, or a range's start
      if (kind !== CHANGE_DELETE) r.skipField(); // value, or a range's end
    }
    const change = { seq, lastSeq, time: time < 0 ? null : time, meta, bytes: r.field() } as Change;
    lazyOps(change, bytes, opsAt, count);
    out.push(change);
  }
  return out;
}

/** Defines `change.ops`: the `count` ops packed in `bytes` from `at`, decoded once, when read. */
function lazyOps(change: Change, bytes: Uint8Array, at: number, count: number): void {
  const settle = (ops: ChangeOp[]): void => {
    Object.defineProperty(change, "ops", { value: ops, writable: true, configurable: true, enumerable: true });
  };
  Object.defineProperty(change, "ops", {
    configurable: true,
    enumerable: true,
    get(): ChangeOp[] {
      const ops = decodeOps(new PackedReader(bytes, at), count);
      settle(ops);
      return ops;
    },
    set: settle,
  });
}

/** `count` ops from where `r` stands. */
function decodeOps(r: PackedReader, count: number): ChangeOp[] {
  const ops: ChangeOp[] = [];
  for (let i = 0; i < count; i++) {
    const kind = r.u8();
    const keyspace = decoder.decode(r.field());
    const key = r.field();
    if (kind === CHANGE_PUT) {
      ops.push({ type: "put", keyspace, key, value: r.field() });
    } else if (kind === CHANGE_DELETE) {
      ops.push({ type: "delete", keyspace, key });
    } else {
      ops.push({ type: "deleteRange", keyspace, start: key, end: r.field() });
    }
  }
  return ops;
}
