/**
 * Moving large results across a `postMessage` instead of copying them.
 *
 * @module
 */

/** Below this size a buffer is copied rather than transferred (cheaper, for small ones). */
const TRANSFER_FROM = 16 << 10;

/**
 * Adds to `into` the buffers of the large `Uint8Array`s in `result` (or in arrays of it) that
 * own their whole buffer: the server's results are fresh copies, safe to move.
 */
export function transferables(result: unknown, into: ArrayBuffer[]): void {
  if (result instanceof Uint8Array) {
    if (
      result.byteLength >= TRANSFER_FROM &&
      result.byteOffset === 0 &&
      result.byteLength === result.buffer.byteLength
    ) {
      into.push(result.buffer as ArrayBuffer);
    }
  } else if (Array.isArray(result)) {
    for (const item of result) {
      transferables(item, into);
    }
  }
}
