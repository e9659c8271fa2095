/**
 * Bytes that go into a request: it is carried out after the call returns (in a later turn, in
 * another thread or tab), so it must not share memory the caller may still change.
 *
 * @module
 */

/**
 * `bytes`, or a copy of them if they are `given` (the caller's own array, which it may change
 * before the request runs) or a view of part of a larger buffer (a structured clone carries the
 * whole buffer, so a 16-byte key cut from a 1 MiB buffer would cross as a MiB).
 */
export function ownBytes(bytes: Uint8Array, given?: unknown): Uint8Array {
  // `new Uint8Array(bytes)` copies; `bytes.slice()` would not for a Node `Buffer` (a view there).
  return bytes !== given && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}
