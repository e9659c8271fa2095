/**
 * Bytes about to cross to the worker.
 *
 * @module
 */

/**
 * `bytes`, or a copy if it is a view of part of a larger buffer: a structured clone carries the
 * whole buffer, so a 16-byte key cut from a 1 MiB buffer would cross as a MiB.
 */
export function ownBytes(bytes: Uint8Array): Uint8Array {
  return bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}
