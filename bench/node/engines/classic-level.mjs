// classic-level 3 (LevelDB 1.20): writes and iterators only through Promises, awaited one at a
// time as its users do; gets through `getSync` (new in 3.0), its fastest read path. The Promise
// `get` is measured too, as case get/random-promise/<size>.
import { ClassicLevel } from "classic-level";

const SYNC = { sync: true };

/** @returns {import("./index.mjs").Adapter} */
export function createAdapter() {
  /** @type {ClassicLevel<Buffer, Buffer>} */
  let db;
  return {
    name: "classic-level",
    async: { put: true, batch: true, get: false, scan: true, sync: true },
    async open(dir, { cacheBytes, memtableBytes }) {
      db = new ClassicLevel(dir, {
        keyEncoding: "buffer",
        valueEncoding: "buffer",
        cacheSize: cacheBytes,
        writeBufferSize: memtableBytes,
        compression: true, // Snappy, as ShaleDB; the binding always sets a 10 bits/key Bloom filter
      });
      await db.open();
    },
    putSingle(key, value) {
      return db.put(key, value);
    },
    putBatch(entries) {
      const batch = db.batch();
      for (let i = 0; i < entries.length; i++) batch.put(entries[i][0], entries[i][1]);
      return batch.write();
    },
    get(key) {
      return db.getSync(key);
    },
    async scan(startKey, n) {
      const entries = await db.iterator({ gte: startKey, limit: n }).all();
      let bytes = 0;
      for (const [k, v] of entries) bytes += k.length + v.length;
      return bytes >= 0 ? entries.length : -1;
    },
    syncedPut(key, value) {
      return db.put(key, value, SYNC);
    },
    compact() {
      return db.compactRange(Buffer.alloc(0), Buffer.alloc(16, 0xff));
    },
    async close() {
      await db.close();
    },
    extraGets: {
      promise: (key) => db.get(key),
    },
  };
}
