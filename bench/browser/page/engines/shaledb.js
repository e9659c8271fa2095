// ShaleDB through its browser entry, as a page uses it: `open` returns the Promise API backed by
// the dedicated worker the package starts itself (OPFS sync access handles). Every call is one
// page<->worker round trip; a put resolves once the write has reached OPFS (not flushed), a put
// with `{ sync: true }` once it is also flushed (FileSystemSyncAccessHandle.flush).
import { deleteDatabase, open } from "shaledb";

const SYNC = { sync: true };

/** @returns {import("./index.js").Adapter} */
export function createAdapter() {
  /** @type {any} */
  let db;
  let sync = false;
  return {
    name: "shaledb",
    syncWrites: true,
    async open(name, options) {
      sync = options.sync;
      db = await open(name, {
        keyEncoding: "binary",
        valueEncoding: "binary",
        memtableSize: options.memtableBytes,
        blockCacheSize: options.cacheBytes,
        compression: true,
        bloomBitsPerKey: 10,
      });
    },
    put(key, value) {
      return sync ? db.put(key, value, SYNC) : db.put(key, value);
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
      let count = 0;
      let bytes = 0;
      for await (const [k, v] of db.iterator({ gte: startKey, limit: n })) {
        bytes += k.length + v.length;
        count++;
      }
      return bytes >= 0 ? count : -1;
    },
    async close() {
      await db.close();
      db = undefined;
    },
    destroy(name) {
      return deleteDatabase(name);
    },
  };
}
