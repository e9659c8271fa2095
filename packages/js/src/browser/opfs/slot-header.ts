/**
 * The header of an OPFS slot file (docs/FORMAT.md, "OPFS slot files"): the first 4096 bytes of
 * every `slot-NNNNNN.shs` file say which engine file, if any, the slot holds. Two copies, A at
 * offset 0 and B at offset 2048, each (little-endian):
 *
 * ```
 *  0   8  magic "SHDBSLOT"
 *  8   8  generation u64 (pool-wide, strictly increasing with each header write; < 2^53)
 * 16   4  format version u32 = 1
 * 20   2  name length u16 (0 = free slot)
 * 22   2  reserved, 0
 * 24   N  name, UTF-8 (N <= 1024)
 * 24+N 4  CRC-32C of bytes [0, 24+N)
 * ```
 *
 * A copy is valid when its magic, version and CRC check; the slot's state is its valid copy with
 * the higher generation, and a slot without a valid copy is free. This module only encodes and
 * decodes; the rules for writing (which copy, which generation) are `opfs-pool.ts`'s.
 *
 * @module
 */
import { crc32c } from "./crc32c.js";

/** Bytes before an engine file's first byte in its slot file. */
export const SLOT_HEADER_SIZE = 4096;
/** Bytes reserved for each of the two copies (copy B starts here). */
export const HEADER_COPY_SIZE = 2048;
/** The header format version this code writes and reads. */
export const SLOT_HEADER_VERSION = 1;
/** The longest engine file name a slot can hold, in UTF-8 bytes. */
export const MAX_SLOT_NAME_BYTES = 1024;

const MAGIC = new TextEncoder().encode("SHDBSLOT");
const FIXED = 24;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** One valid header copy: `name` is `undefined` for a free slot. */
export interface HeaderCopy {
  readonly generation: number;
  readonly name: string | undefined;
}

/** Both copies of a slot's header, decoded. */
export interface SlotHeader {
  /** Copy A (index 0) and copy B (index 1); `undefined` where the copy is not valid. */
  readonly copies: readonly [HeaderCopy | undefined, HeaderCopy | undefined];
  /** Which copy is the slot's state (the valid one with the higher generation; A on a tie). */
  readonly current: 0 | 1 | undefined;
}

/**
 * The UTF-8 bytes of `name` if a slot can hold it: not empty, at most
 * {@link MAX_SLOT_NAME_BYTES} bytes, and well-formed (no lone surrogate, which UTF-8 cannot
 * carry); otherwise `undefined`.
 */
export function slotNameBytes(name: string): Uint8Array | undefined {
  if (name === "") {
    return undefined;
  }
  const bytes = encoder.encode(name);
  if (bytes.length > MAX_SLOT_NAME_BYTES || decoder.decode(bytes) !== name) {
    return undefined;
  }
  return bytes;
}

/**
 * One header copy, {@link HEADER_COPY_SIZE} bytes (zero after the CRC), holding `name` or, with
 * `undefined`, marking the slot free. Throws a `RangeError` for a generation that is not an
 * integer in `[0, 2^53)` or a name {@link slotNameBytes} refuses.
 */
export function encodeHeaderCopy(generation: number, name: string | undefined): Uint8Array {
  if (!Number.isSafeInteger(generation) || generation < 0) {
    throw new RangeError(`slot header: bad generation ${generation}`);
  }
  const nameBytes = name === undefined ? new Uint8Array(0) : slotNameBytes(name);
  if (nameBytes === undefined) {
    throw new RangeError(`slot header: a slot cannot hold the name ${JSON.stringify(name)}`);
  }
  const bytes = new Uint8Array(HEADER_COPY_SIZE);
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint32(8, generation % 2 ** 32, true);
  view.setUint32(12, Math.floor(generation / 2 ** 32), true);
  view.setUint32(16, SLOT_HEADER_VERSION, true);
  view.setUint16(20, nameBytes.length, true);
  bytes.set(nameBytes, FIXED);
  const end = FIXED + nameBytes.length;
  view.setUint32(end, crc32c(bytes.subarray(0, end)), true);
  return bytes;
}

/**
 * Decodes one copy from `bytes` (the copy's bytes; fewer than {@link HEADER_COPY_SIZE} if the
 * file is short). `undefined` when the copy is not valid: bad magic, version or CRC, a name
 * longer than the limit or not UTF-8, a generation of 2^53 or more, or too few bytes.
 */
export function decodeHeaderCopy(bytes: Uint8Array): HeaderCopy | undefined {
  if (bytes.length < FIXED + 4) {
    return undefined;
  }
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) {
      return undefined;
    }
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(16, true) !== SLOT_HEADER_VERSION) {
    return undefined;
  }
  const nameLength = view.getUint16(20, true);
  const end = FIXED + nameLength;
  if (nameLength > MAX_SLOT_NAME_BYTES || end + 4 > bytes.length) {
    return undefined;
  }
  if (view.getUint32(end, true) !== crc32c(bytes.subarray(0, end))) {
    return undefined;
  }
  const high = view.getUint32(12, true);
  if (high >= 2 ** 21) {
    return undefined;
  }
  const generation = high * 2 ** 32 + view.getUint32(8, true);
  if (nameLength === 0) {
    return { generation, name: undefined };
  }
  try {
    return { generation, name: decoder.decode(bytes.subarray(FIXED, end)) };
  } catch {
    return undefined;
  }
}

/** Decodes both copies from the first bytes of a slot file (up to {@link SLOT_HEADER_SIZE}). */
export function decodeSlotHeader(bytes: Uint8Array): SlotHeader {
  const a = decodeHeaderCopy(bytes.subarray(0, HEADER_COPY_SIZE));
  const b = decodeHeaderCopy(bytes.subarray(HEADER_COPY_SIZE, SLOT_HEADER_SIZE));
  let current: 0 | 1 | undefined;
  if (a !== undefined && (b === undefined || a.generation >= b.generation)) {
    current = 0;
  } else if (b !== undefined) {
    current = 1;
  }
  return { copies: [a, b], current };
}

/** The file name of slot `index`: `slot-` and the number zero-padded to 6 digits, `.shs`. */
export function slotFileName(index: number): string {
  return `slot-${String(index).padStart(6, "0")}.shs`;
}

/** The slot number of a slot file name, or `undefined` for any other name. */
export function parseSlotFileName(name: string): number | undefined {
  const match = /^slot-(\d{6,})\.shs$/.exec(name);
  if (match === null) {
    return undefined;
  }
  const index = Number(match[1]);
  // Only the canonical spelling ("slot-0000017.shs" is not slot 17's name).
  return Number.isSafeInteger(index) && slotFileName(index) === name ? index : undefined;
}
