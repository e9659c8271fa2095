// ShaleDB through its Promise API (`open`, packages/js/src/types.ts: the API browsers get too),
// every call awaited one at a time, as classic-level's Promise API is. `engineThread` is the open
// option: "own" (the default: the engine in a worker thread) or "caller" (in this thread).
const SYNC = { sync: true };

/**
 * @param {"own" | "caller"} [engineThread]
 * @returns {import("./index.mjs").Adapter}
 */
export function createAdapter(engineThread = "own") {
  /** @type {any} */
  let db;
  return {
    name: engineThread === "own" ? "shaledb-promise" : "shaledb-promise-caller",
    async: { put: true, batch: true, get: true, scan: true, sync: true },
    async open(dir, { cacheBytes, memtableBytes }) {
      const shaledb = await import("shaledb");
      db = await shaledb.open(dir, {
        keyEncoding: "binary",
        valueEncoding: "binary",
        blockCacheSize: cacheBytes,
        memtableSize: memtableBytes,
        compression: true,
        bloomBitsPerKey: 10,
        engineThread,
      });
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
      return db.get(key);
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
      return db.compact();
    },
    async close() {
      await db.close();
    },
  };
}
