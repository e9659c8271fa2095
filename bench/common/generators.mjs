// The workload data of the Node and browser suites (and, mirrored, of the native programs):
// every engine gets the same operations on the same bytes. Environment-free: keys and values
// are made in buffers from `alloc` (Node passes Buffer.alloc, a page the Uint8Array default).

/** Key size in bytes. */
export const KEY_SIZE = 16;
/** Entries a scan reads. */
export const SCAN_LEN = 1000;
/** Value sizes by name, as in the case names. */
export const SIZES = { "100B": 100, "1KiB": 1024 };
/** Seeds of the generators (the same in the native program). */
export const SEED = { order: 1, gets: 2, scans: 3, values: 7 };

/** @param {number} n */
const uint8 = (n) => new Uint8Array(n);

/**
 * xorshift32 (Marsaglia 13/17/5): small, fast in JS without BigInt, and trivially mirrored in
 * Rust. Deterministic per seed.
 */
export class Rng {
  /** @param {number} seed */
  constructor(seed) {
    this.x = (Math.imul(seed + 1, 0x9e3779b9) ^ 0x5bd1e995) >>> 0 || 1;
  }

  /** The next number in 0..2^32. */
  next() {
    let x = this.x;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.x = x >>> 0;
    return this.x;
  }

  /** A number in 0..n. */
  below(n) {
    return this.next() % n;
  }
}

/** 0..n in a random order (Fisher-Yates), deterministic per seed. */
export function permutation(n, seed) {
  const p = new Uint32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  const rng = new Rng(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    const t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

/**
 * The 16-byte keys of entries 0..n: eight zero bytes, then the entry number as a big-endian
 * u64, so key order (bytewise, as every engine here compares binary keys) is number order.
 * One buffer, one view per key (made before timing).
 * @template {Uint8Array} T
 * @param {number} n
 * @param {(size: number) => T} [alloc]
 * @returns {T[]}
 */
export function makeKeys(n, alloc = /** @type {(size: number) => T} */ (uint8)) {
  const all = alloc(n * KEY_SIZE);
  const view = new DataView(all.buffer, all.byteOffset, all.byteLength);
  const keys = new Array(n);
  for (let i = 0; i < n; i++) {
    const off = i * KEY_SIZE;
    view.setUint32(off + 8, Math.floor(i / 2 ** 32));
    view.setUint32(off + 12, i >>> 0);
    keys[i] = all.subarray(off, off + KEY_SIZE);
  }
  return keys;
}

/**
 * Values as db_bench makes them: a pool of about 1 MiB where every 100-byte stretch is 50
 * random bytes written twice (so values compress to about half), cut into consecutive windows
 * of `len` bytes. The j-th put of a case writes window j mod (number of windows).
 * @template {Uint8Array} T
 * @param {number} len
 * @param {number} [seed]
 * @param {(size: number) => T} [alloc]
 * @returns {T[]}
 */
export function makeValues(len, seed = SEED.values, alloc = /** @type {(size: number) => T} */ (uint8)) {
  const rng = new Rng(seed);
  const stretches = Math.ceil((1 << 20) / 100);
  const pool = alloc(stretches * 100);
  for (let s = 0; s < stretches; s++) {
    for (let b = 0; b < 50; b++) {
      const byte = rng.next() >>> 24;
      pool[s * 100 + b] = byte;
      pool[s * 100 + 50 + b] = byte;
    }
  }
  const windows = [];
  for (let pos = 0; pos + len <= pool.length; pos += len) windows.push(pool.subarray(pos, pos + len));
  return windows;
}
