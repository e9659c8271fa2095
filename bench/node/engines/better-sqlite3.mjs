// better-sqlite3 12 (SQLite 3.53): a key/value table with a BLOB primary key (an ordinary rowid
// table plus its key index, the usual schema; WITHOUT ROWID measured slower here for 1 KiB values
// and for batches, since its B-tree leaves hold the whole rows), WAL mode. synchronous=NORMAL without
// sync (a commit reaches the OS; fsync only at checkpoints), FULL with sync (every commit
// flushes the WAL). Page cache budget as the others' block cache. Single puts are autocommit
// statements; a batch is one transaction.
import { join } from "node:path";

import Database from "better-sqlite3";

/** @returns {import("./index.mjs").Adapter} */
export function createAdapter() {
  /** @type {import("better-sqlite3").Database} */
  let db;
  /** @type {import("better-sqlite3").Statement} */
  let put;
  /** @type {import("better-sqlite3").Statement} */
  let get;
  /** @type {import("better-sqlite3").Statement} */
  let range;
  /** @type {(entries: [Buffer, Buffer][]) => void} */
  let batch;
  return {
    name: "better-sqlite3",
    async: { put: false, batch: false, get: false, scan: false, sync: false },
    async open(dir, { sync, cacheBytes }) {
      db = new Database(join(dir, "kv.sqlite"));
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${sync ? "FULL" : "NORMAL"}`);
      db.pragma(`cache_size = -${Math.floor(cacheBytes / 1024)}`);
      db.exec("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL)");
      put = db.prepare("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)");
      get = db.prepare("SELECT v FROM kv WHERE k = ?").pluck();
      range = db.prepare("SELECT k, v FROM kv WHERE k >= ? ORDER BY k LIMIT ?").raw();
      batch = db.transaction((entries) => {
        for (let i = 0; i < entries.length; i++) put.run(entries[i][0], entries[i][1]);
      });
    },
    putSingle(key, value) {
      put.run(key, value);
    },
    putBatch(entries) {
      batch(entries);
    },
    get(key) {
      return get.get(key);
    },
    scan(startKey, n) {
      const rows = range.all(startKey, n);
      let bytes = 0;
      for (const [k, v] of rows) bytes += k.length + v.length;
      return bytes >= 0 ? rows.length : -1;
    },
    syncedPut(key, value) {
      put.run(key, value);
    },
    async close() {
      db.close();
    },
  };
}
