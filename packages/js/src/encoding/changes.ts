/**
 * Changes of the feed as they cross the WebAssembly boundary and transports (layout:
 * `crates/wasm/src/changes.rs`): packed one after another, decoded here for both APIs.
 *
 * @module
 */
import type { Change, ChangeOp } from "../engine/change-types.js";

/** The length that says "none" (meta). */
const NONE = 0xffff_ffff;
/** Bytes of a change before its meta: seq, lastSeq, time (f64 each). */
const HEAD = 24;

const decoder = new TextDecoder();

/**
 * The changes packed in `bytes` (which the caller owns: keys, values, meta and `bytes` of the
 * changes are views of it).
 */
export function decodeChanges(bytes: Uint8Array): Change[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Change[] = [];
  let at = 0;
  const field = (): Uint8Array => {
    const n = view.getUint32(at, true);
    const slice = bytes.subarray(at + 4, at + 4 + n);
    at += 4 + n;
    return slice;
  };
  while (at + HEAD + 8 <= bytes.length) {
    const seq = view.getFloat64(at, true);
    const lastSeq = view.getFloat64(at + 8, true);
    const time = view.getFloat64(at + 16, true);
    at += HEAD;
    let meta: Uint8Array | null = null;
    if (view.getUint32(at, true) === NONE) {
      at += 4;
    } else {
      meta = field();
    }
    const count = view.getUint32(at, true);
    at += 4;
    const ops: ChangeOp[] = [];
    for (let i = 0; i < count; i++) {
      const kind = view.getUint8(at);
      at += 1;
      const keyspace = decoder.decode(field());
      const key = field();
      if (kind === 0) {
        ops.push({ type: "put", keyspace, key, value: field() });
      } else if (kind === 1) {
        ops.push({ type: "delete", keyspace, key });
      } else {
        ops.push({ type: "deleteRange", keyspace, start: key, end: field() });
      }
    }
    out.push({ seq, lastSeq, time: time < 0 ? null : time, meta, ops, bytes: field() });
  }
  return out;
}
