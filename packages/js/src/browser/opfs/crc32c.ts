/**
 * CRC-32C (Castagnoli), the standard reflected form used by every ShaleDB format (polynomial
 * `0x82F63B78` reflected, init `0xFFFFFFFF`, final xor `0xFFFFFFFF`; `"123456789"` →
 * `0xE3069283`). Byte-at-a-time with one table: it checks small headers, not bulk data.
 *
 * @module
 */

const TABLE = makeTable();

function makeTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) {
      c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    }
    table[n] = c >>> 0;
  }
  return table;
}

/** The CRC-32C of `data`, as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) {
    crc = TABLE[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}
