/**
 * What the tar reader and writer share: the block size, the largest octal field, the UTF-8
 * decoder and the archive's error (`INVALID_ARGUMENT`, "tar archive: ...").
 *
 * @module
 */
import { invalidArgument } from "../../errors.js";
import type { ShaleError } from "../../errors.js";

export const BLOCK = 512;
/** The largest size or mtime an 11-digit octal field holds (8 GiB - 1 for a size). */
export const MAX_OCTAL_11 = 8 ** 11 - 1;

export const encoder = new TextEncoder();
export const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function tarError(message: string): ShaleError {
  return invalidArgument(`tar archive: ${message}`);
}
