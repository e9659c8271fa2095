// ShaleDB through its synchronous Node API (`openSync`, packages/js/src/types.ts).
const SYNC = { sync: true };

/** @returns {import("./index.mjs").Adapter} */
export function createAdapter() {
  /** @type {any} */
  let db;
  return {
    name: "shaledb",
    async: { put: false, batch: false, get: false, scan: false, sync: false },
    async open(dir, { cacheBytes, memtableBytes }) {
      const shaledb = await import("shaledb");
      if (typeof shaledb.init === "function") await shaledb.init();
      if (typeof shaledb.openSync !== "function") throw new Error("shaledb has no openSync yet");
      db = shaledb.openSync(dir, {
        keyEncoding: "binary",
        valueEncoding: "binary",
        blockCacheSize: cacheBytes,
        memtableSize: memtableBytes,
        compression: true,
        bloomBitsPerKey: 10,
      });
    },
    putSingle(key, value) {
      db.put(key, value);
    },
    putBatch(entries) {
      const batch = db.batch();
      for (let i = 0; i < entries.length; i++) batch.put(entries[i][0], entries[i][1]);
      batch.write();
    },
    get(key) {
      return db.get(key);
    },
    scan(startKey, n) {
      let count = 0;
      let bytes = 0;
      for (const [k, v] of db.iterator({ gte: startKey, limit: n })) {
        bytes += k.length + v.length;
        count++;
      }
      return bytes >= 0 ? count : -1;
    },
    syncedPut(key, value) {
      db.put(key, value, SYNC);
    },
    async close() {
      db.close();
    },
  };
}
