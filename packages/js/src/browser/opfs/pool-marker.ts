/**
 * The bytes of a database directory's `POOL` marker, which names its live slot pool
 * (`live-pool.ts`; docs/FORMAT.md, "Live pool marker"). Two copies of one 32-byte layout, copy A
 * at offset 0 and copy B at offset 32:
 *
 * | offset | size | field                                              |
 * |--------|------|----------------------------------------------------|
 * | 0      | 8    | magic `"SHDBPOOL"`                                 |
 * | 8      | u32  | marker format version, `1`                         |
 * | 12     | u32  | reserved, `0`                                      |
 * | 16     | u64  | the live pool's number (below 2^53)                |
 * | 24     | u32  | CRC-32C of bytes `0..24` of this copy              |
 * | 28     | u32  | reserved, `0`                                      |
 *
 * Little-endian. A copy is valid when its magic, version and CRC check. The live pool is the
 * higher number of the valid copies, and pool 0 when neither is valid (the first write of the
 * marker was torn). A writer overwrites the copy that does not hold the live number, with a
 * higher number, and flushes: a torn write leaves the other copy, and so the previous pool. The
 * first write fills both copies (A, flushed, then B), so that damage to one copy never loses
 * the pool both name.
 *
 * @module
 */
import { crc32c } from "./crc32c.js";

export const MARKER_SIZE = 64;
const COPY_SIZE = 32;
const MAGIC = new TextEncoder().encode("SHDBPOOL");
const VERSION = 1;

/** What a marker holds: each copy's pool number (`undefined`: not valid), and the live one. */
export interface DecodedMarker {
  copies: [number | undefined, number | undefined];
  live: number;
}

/** Decodes marker bytes (any length: missing bytes make a copy invalid). */
export function decodeMarker(bytes: Uint8Array): DecodedMarker {
  const copies: [number | undefined, number | undefined] = [decodeCopy(bytes, 0), decodeCopy(bytes, COPY_SIZE)];
  return { copies, live: Math.max(copies[0] ?? 0, copies[1] ?? 0) };
}

function decodeCopy(bytes: Uint8Array, at: number): number | undefined {
  if (bytes.length < at + COPY_SIZE) {
    return undefined;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, COPY_SIZE);
  for (let i = 0; i < MAGIC.length; i++) {
    if (view.getUint8(i) !== MAGIC[i]) return undefined;
  }
  if (view.getUint32(8, true) !== VERSION) {
    return undefined;
  }
  if (view.getUint32(24, true) !== crc32c(bytes.subarray(at, at + 24))) {
    return undefined;
  }
  const pool = view.getBigUint64(16, true);
  return pool < BigInt(Number.MAX_SAFE_INTEGER) ? Number(pool) : undefined;
}

/**
 * The writes, in order, each to be flushed before the next, that make pool `next` live in a
 * marker now holding `current`: one copy (the one not holding the live number), or both when
 * neither copy is valid yet.
 */
export function markerWrites(current: DecodedMarker, next: number): { at: number; bytes: Uint8Array }[] {
  const first = markerWrite(current, next);
  if (current.copies[0] !== undefined || current.copies[1] !== undefined) {
    return [first];
  }
  return [first, { at: first.at === 0 ? COPY_SIZE : 0, bytes: first.bytes }];
}

/**
 * The write that makes pool `next` live in a marker now holding `current`: the bytes of one
 * copy and their offset (the copy that does not hold the live number).
 */
export function markerWrite(current: DecodedMarker, next: number): { at: number; bytes: Uint8Array } {
  if (!Number.isSafeInteger(next) || next <= current.live) {
    throw new RangeError(`a new live pool must have a higher number than ${current.live}, not ${next}`);
  }
  const [a, b] = current.copies;
  // Overwrite the copy not holding the live state: B if A holds it, else A.
  const at = a !== undefined && a === current.live && (b === undefined || b < a) ? COPY_SIZE : 0;
  const bytes = new Uint8Array(COPY_SIZE);
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint32(8, VERSION, true);
  view.setBigUint64(16, BigInt(next), true);
  view.setUint32(24, crc32c(bytes.subarray(0, 24)), true);
  return { at, bytes };
}
