/**
 * The 512-byte ustar header block, both ways: {@link header} writes one (POSIX ustar), and
 * {@link parseHeader} reads those of `tar -cf` too (GNU, ustar, old-style), checking checksum and
 * magic.
 *
 * @module
 */
import { BLOCK, encoder, tarError, utf8 } from "./fields.js";

export interface Header {
  readonly name: string;
  readonly type: string;
  readonly size: number;
}

/** A 512-byte ustar header. */
export function header(
  name: Uint8Array,
  prefix: Uint8Array,
  type: "0" | "5",
  mode: number,
  size: number,
  mtime: number,
): Uint8Array<ArrayBuffer> {
  const block = new Uint8Array(BLOCK);
  block.set(name, 0);
  writeOctal(block, 100, 8, mode);
  writeOctal(block, 108, 8, 0); // uid
  writeOctal(block, 116, 8, 0); // gid
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, mtime);
  block.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  block[156] = type.charCodeAt(0);
  block.set(encoder.encode("ustar\u000000"), 257); // magic "ustar\0", version "00"
  writeOctal(block, 329, 8, 0); // devmajor
  writeOctal(block, 337, 8, 0); // devminor
  block.set(prefix, 345);
  let sum = 0;
  for (const byte of block) {
    sum += byte;
  }
  writeOctal(block, 148, 7, sum); // six digits and NUL; the eighth byte stays a space
  return block;
}

/** Checks a header block's checksum and magic and reads its name, type and size. */
export function parseHeader(block: Uint8Array, offset: number): Header {
  const stored = parseNumber(block, 148, 8, "checksum", offset);
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const byte = i >= 148 && i < 156 ? 0x20 : block[i]!;
    unsigned += byte;
    signed += byte < 0x80 ? byte : byte - 0x100;
  }
  if (stored !== unsigned && stored !== signed) {
    throw tarError(`bad header checksum at byte ${offset} (not a tar archive, or damaged)`);
  }
  const magic = String.fromCharCode(...block.subarray(257, 265));
  const posix = magic.startsWith("ustar\0");
  if (!posix && magic !== "ustar  \0" && !isZero(block.subarray(257, 265))) {
    throw tarError(`unknown tar magic at byte ${offset + 257}`);
  }
  let name = decodeName(block.subarray(0, 100), offset);
  if (posix && block[345] !== 0) {
    name = `${decodeName(block.subarray(345, 500), offset)}/${name}`;
  }
  return {
    name,
    type: String.fromCharCode(block[156]!),
    size: parseNumber(block, 124, 12, "size", offset),
  };
}

/**
 * A numeric field: octal digits, optionally surrounded by spaces and ended by NUL or space, or
 * GNU's base-256 form (first byte 0x80). Throws for anything else.
 */
export function parseNumber(
  block: Uint8Array,
  start: number,
  length: number,
  what: string,
  offset: number,
): number {
  const field = block.subarray(start, start + length);
  if (field[0] === 0x80) {
    let value = 0;
    for (let i = 1; i < field.length; i++) {
      value = value * 256 + field[i]!;
    }
    if (!Number.isSafeInteger(value)) {
      throw tarError(`the ${what} field at byte ${offset + start} is too large`);
    }
    return value;
  }
  let i = 0;
  while (i < field.length && field[i] === 0x20) {
    i++;
  }
  let value = 0;
  let digits = 0;
  while (i < field.length && field[i]! >= 0x30 && field[i]! <= 0x37) {
    value = value * 8 + (field[i]! - 0x30);
    digits++;
    i++;
  }
  while (i < field.length && (field[i] === 0x20 || field[i] === 0)) {
    i++;
  }
  if (i !== field.length || (digits === 0 && what === "checksum")) {
    throw tarError(`bad ${what} field at byte ${offset + start} (not a tar archive, or damaged)`);
  }
  return value;
}

/** `value` as `length - 1` zero-padded octal digits and a NUL. */
function writeOctal(block: Uint8Array, start: number, length: number, value: number): void {
  const digits = value.toString(8).padStart(length - 1, "0");
  for (let i = 0; i < length - 1; i++) {
    block[start + i] = digits.charCodeAt(i);
  }
  block[start + length - 1] = 0;
}

export function isZero(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0) {
      return false;
    }
  }
  return true;
}

/** A NUL-terminated UTF-8 name. */
export function decodeName(field: Uint8Array, offset: number): string {
  const end = field.indexOf(0);
  try {
    return utf8.decode(end < 0 ? field : field.subarray(0, end));
  } catch {
    throw tarError(`a name that is not UTF-8 at byte ${offset}`);
  }
}
