// lmdb (lmdb-js 3, LMDB 0.9.90): synchronous gets and range reads; writes through `putSync` and
// `transactionSync`. lmdb-js's default `put` is asynchronous and batches every write of an event
// turn into one transaction committed later on a worker thread; `putSync` commits a transaction
// per call, as every other engine here does per put.
//
// Durability, to match the others: without sync, `noSync` (commits reach the OS, no fsync);
// with sync, the LMDB default (each commit is flushed to disk before it returns) and
// `overlappingSync: false` (lmdb-js's default would return before the flush completes).
import { open } from "lmdb";

/** @returns {import("./index.mjs").Adapter} */
export function createAdapter() {
  /** @type {import("lmdb").RootDatabase<Buffer, Buffer>} */
  let db;
  return {
    name: "lmdb",
    async: { put: false, batch: false, get: false, scan: false, sync: false },
    async open(dir, { sync }) {
      db = open({
        path: dir,
        keyEncoding: "binary",
        encoding: "binary",
        compression: false,
        noSync: !sync,
        overlappingSync: false,
      });
    },
    putSingle(key, value) {
      db.putSync(key, value);
    },
    putBatch(entries) {
      db.transactionSync(() => {
        for (let i = 0; i < entries.length; i++) db.putSync(entries[i][0], entries[i][1]);
      });
    },
    get(key) {
      return db.get(key);
    },
    scan(startKey, n) {
      let count = 0;
      let bytes = 0;
      for (const { key, value } of db.getRange({ start: startKey, limit: n })) {
        bytes += key.length + value.length;
        count++;
      }
      return bytes >= 0 ? count : -1;
    },
    syncedPut(key, value) {
      db.putSync(key, value);
    },
    async close() {
      await db.close();
    },
  };
}
