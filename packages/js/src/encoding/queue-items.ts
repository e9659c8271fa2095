/**
 * Queue values and items as they cross the WebAssembly boundary and transports (layouts:
 * `./wire.ts`): values to push packed one after another, items read back packed
 * the same way, decoded here for both the synchronous and the Promise API.
 *
 * @module
 */
import type { Codec } from "./codec.js";
import { ITEM_HEADER_LEN } from "./wire.js";
import type { QueueItem } from "../types.js";


/** `values` packed for `queuePush`: each its length (u32 LE), then its bytes. */
export function packValues(values: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const v of values) total += 4 + v.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const v of values) {
    view.setUint32(at, v.length, true);
    out.set(v, at + 4);
    at += 4 + v.length;
  }
  return out;
}

/**
 * The items packed in `bytes` (which the caller owns: `"binary"` values are views of it), their
 * values decoded by `codec`.
 */
export function decodeItems<V>(bytes: Uint8Array, codec: Codec<unknown>): QueueItem<V>[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const items: QueueItem<V>[] = [];
  let at = 0;
  while (at + ITEM_HEADER_LEN <= bytes.length) {
    const id = view.getFloat64(at, true);
    const until = view.getFloat64(at + 16, true);
    const deliveries = view.getUint32(at + 24, true);
    const length = view.getUint32(at + 28, true);
    const start = at + ITEM_HEADER_LEN;
    items.push({
      id,
      value: codec.decode(bytes.subarray(start, start + length)) as V,
      pushedAt: view.getFloat64(at + 8, true),
      deliveries,
      leaseUntil: until < 0 ? undefined : until,
      lease: { id, delivery: deliveries },
    });
    at = start + length;
  }
  return items;
}
