// Raw IndexedDB, the way a careful page uses it: one object store with out-of-line binary keys
// (Uint8Array keys compare bytewise), Uint8Array values (structured clone). A put is one
// readwrite transaction awaited until `complete` (when IndexedDB reports it committed); a batch
// is one transaction of puts; a get is a readonly transaction's `get`; a scan is one
// `getAllRecords({ query, count })` (keys and values in one request; where the browser lacks it,
// `getAllKeys` + `getAll` in one transaction). `durability` is the transaction option: "default"
// (engine `indexeddb`), "relaxed" (`indexeddb-relaxed`); put/sync uses "strict".
const STORE = "kv";

const request = (r) =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });

const committed = (tx) =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("transaction aborted"));
  });

/** Opens (creating) IndexedDB database `name` with the one object store. */
export function openIdb(name) {
  const r = indexedDB.open(name, 1);
  r.onupgradeneeded = () => r.result.createObjectStore(STORE);
  return request(r);
}

/** Deletes IndexedDB database `name` (all connections must be closed). */
export function deleteIdb(name) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.deleteDatabase(name);
    r.onsuccess = () => resolve();
    r.onerror = () => reject(r.error);
    // "blocked" only says a connection is still closing: the deletion goes on once it has.
  });
}

/**
 * @param {string} engine the name in the results
 * @param {"default" | "relaxed"} durability of the write transactions (put/sync: "strict")
 * @returns {import("./index.js").Adapter}
 */
export function createAdapter(engine, durability) {
  /** @type {IDBDatabase} */
  let db;
  let writeOptions = { durability };
  return {
    name: engine,
    // put/sync is IndexedDB's "strict" durability: measured once, as `indexeddb`.
    syncWrites: durability === "default",
    async open(name, options) {
      writeOptions = { durability: options.sync ? "strict" : durability };
      db = await openIdb(name);
    },
    put(key, value) {
      const tx = db.transaction(STORE, "readwrite", writeOptions);
      tx.objectStore(STORE).put(value, key);
      return committed(tx);
    },
    putBatch(entries) {
      const tx = db.transaction(STORE, "readwrite", writeOptions);
      const store = tx.objectStore(STORE);
      for (let i = 0; i < entries.length; i++) store.put(entries[i][1], entries[i][0]);
      return committed(tx);
    },
    get(key) {
      return request(db.transaction(STORE, "readonly").objectStore(STORE).get(key));
    },
    async scan(startKey, n) {
      const store = db.transaction(STORE, "readonly").objectStore(STORE);
      const query = IDBKeyRange.lowerBound(startKey);
      let bytes = 0;
      let count = 0;
      if (typeof store.getAllRecords === "function") {
        const records = await request(store.getAllRecords({ query, count: n }));
        for (const r of records) bytes += r.key.byteLength + r.value.length;
        count = records.length;
      } else {
        const [ks, vs] = await Promise.all([request(store.getAllKeys(query, n)), request(store.getAll(query, n))]);
        for (let i = 0; i < ks.length; i++) bytes += ks[i].byteLength + vs[i].length;
        count = ks.length;
      }
      return bytes >= 0 ? count : -1;
    },
    async close() {
      db.close();
    },
    destroy(name) {
      return deleteIdb(name);
    },
  };
}
