/**
 * UTF-8 text written straight into a byte array (WebAssembly memory, a packed batch) instead of
 * `TextEncoder.encode`, which makes a fresh array each call: in Node 20 that took 0.7–1.1 µs
 * for a 15- or 100-character string, against 0.1–0.2 µs for `encodeInto` and 0.08 µs for a loop
 * over 15 ASCII characters.
 *
 * @module
 */
const encoder = new TextEncoder();

/** Strings up to this many UTF-16 code units are tried as ASCII by a loop first. */
const ASCII_LOOP_MAX = 32;

/** The most bytes `data` takes written: its length, or for text 3 per UTF-16 code unit. */
export function maxWrittenBytes(data: Uint8Array | string): number {
  return typeof data === "string" ? data.length * 3 : data.length;
}

/**
 * Writes `text` (well-formed UTF-16: checked by its codec) as UTF-8 into `target` at `at`, which
 * must have room for {@link maxWrittenBytes}; returns the bytes written.
 */
export function writeUtf8(target: Uint8Array, at: number, text: string): number {
  const n = text.length;
  if (n <= ASCII_LOOP_MAX) {
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) {
        break;
      }
      target[at + i] = c;
    }
    if (i === n) {
      return n;
    }
  }
  return encoder.encodeInto(text, target.subarray(at, at + 3 * n)).written;
}
