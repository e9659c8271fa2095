/**
 * Topic records as they cross the WebAssembly boundary and transports (layout:
 * `crates/wasm/src/topics.rs`): records to append packed one after another, records read back
 * packed the same way after their offset and time, decoded here for both APIs.
 *
 * @module
 */
import type { Codec } from "./codec.js";
import { NO_FIELD } from "./wire.js";
import { headersArgument, recordsArray } from "../arguments/topic-options.js";
import type { TopicRecord } from "../types.js";

const encoder = new TextEncoder();

/** One record to append: encoded key (or none), headers, value. */
export interface EncodedRecord {
  key: Uint8Array | undefined;
  headers: [string, Uint8Array][];
  value: Uint8Array;
}

/** What packing and decoding need of a topic handle: its codecs. */
export interface RecordCodecs {
  readonly valueCodec: Codec<unknown>;
  readonly keyCodec: Codec<unknown>;
}

/**
 * `value` with `key` and `headers` (unchecked arguments) encoded by `codecs`; `what` names the
 * value in messages.
 */
export function encodeRecord(codecs: RecordCodecs, value: unknown, key: unknown, headers: unknown, what: string): EncodedRecord {
  return {
    value: codecs.valueCodec.encode(value, what),
    key: key === undefined ? undefined : codecs.keyCodec.encode(key, `${what}'s key`),
    headers: headersArgument(headers, `${what}'s headers`),
  };
}

/** `records` packed for `topicAppend` (or one of them for a batch's or transaction's append). */
export function packRecords(records: readonly EncodedRecord[]): Uint8Array {
  const names = records.map((r) => r.headers.map(([name]) => encoder.encode(name)));
  let total = 0;
  records.forEach((r, i) => {
    total += 12 + (r.key?.length ?? 0) + r.value.length;
    r.headers.forEach(([, v], j) => (total += 8 + (names[i]?.[j]?.length ?? 0) + v.length));
  });
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  const field = (bytes: Uint8Array): void => {
    view.setUint32(at, bytes.length, true);
    out.set(bytes, at + 4);
    at += 4 + bytes.length;
  };
  records.forEach((r, i) => {
    if (r.key === undefined) {
      view.setUint32(at, NO_FIELD, true);
      at += 4;
    } else {
      field(r.key);
    }
    view.setUint32(at, r.headers.length, true);
    at += 4;
    r.headers.forEach(([, v], j) => {
      field(names[i]?.[j] ?? new Uint8Array(0));
      field(v);
    });
    field(r.value);
  });
  return out;
}

const decoder = new TextDecoder();

/**
 * The records packed in `bytes` (which the caller owns: `"binary"` values, keys and headers
 * are views of it), decoded by `codecs`.
 */
export function decodeRecords<V, K>(bytes: Uint8Array, codecs: RecordCodecs): TopicRecord<V, K>[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: TopicRecord<V, K>[] = [];
  let at = 0;
  const field = (): Uint8Array => {
    const n = view.getUint32(at, true);
    const slice = bytes.subarray(at + 4, at + 4 + n);
    at += 4 + n;
    return slice;
  };
  while (at + 28 <= bytes.length) {
    const offset = view.getFloat64(at, true);
    const time = view.getFloat64(at + 8, true);
    at += 16;
    let key: K | undefined;
    if (view.getUint32(at, true) === NO_FIELD) {
      at += 4;
    } else {
      key = codecs.keyCodec.decode(field()) as K;
    }
    const count = view.getUint32(at, true);
    at += 4;
    const headers: Record<string, Uint8Array> = {};
    for (let i = 0; i < count; i++) {
      const name = decoder.decode(field());
      headers[name] = field();
    }
    const value = codecs.valueCodec.decode(field()) as V;
    out.push({ offset, time, key, headers, value });
  }
  return out;
}

/** A record given to `appendMany`: a `{ value, key?, headers? }` object, else a bare value. */
export function isRecordObject(item: unknown): item is { value: unknown; key?: unknown; headers?: unknown } {
  return (
    typeof item === "object" &&
    item !== null &&
    !(item instanceof Uint8Array) &&
    !Array.isArray(item) &&
    Object.prototype.hasOwnProperty.call(item, "value")
  );
}

/**
 * The records of `appendMany(values)`, encoded. A `"json"` topic's values that are objects with
 * a `value` property are taken as records: wrap such a value as `{ value }`.
 */
export function encodeMany(codecs: { valueCodec: Codec<unknown>; keyCodec: Codec<unknown> }, values: unknown): EncodedRecord[] {
  return recordsArray(values).map((item, i) =>
    isRecordObject(item)
      ? encodeRecord(codecs, item.value, item.key, item.headers, `values[${i}]`)
      : encodeRecord(codecs, item, undefined, undefined, `values[${i}]`),
  );
}
