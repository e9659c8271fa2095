// idb-keyval 6.3.0: a custom store per database (`createStore(name, "kv")`), `set` per put (one
// readwrite transaction, resolved on `complete`), `setMany` per batch, `get`. It uses IndexedDB's
// default durability and has no way to choose another, no range reads (scan/1000 is not
// available: `entries()` reads the whole store) and no close (the adapter closes the connection
// it reaches through a store callback, so the database can be deleted).
import { createStore, get, set, setMany } from "idb-keyval";

import { deleteIdb } from "./indexeddb.js";

/** @returns {import("./index.js").Adapter} */
export function createAdapter() {
  /** @type {import("idb-keyval").UseStore} */
  let store;
  return {
    name: "idb-keyval",
    syncWrites: false,
    async open(name) {
      store = createStore(name, "kv");
      // createStore opens lazily: the database is open once a store callback runs.
      await store("readonly", () => undefined);
    },
    put(key, value) {
      return set(key, value, store);
    },
    putBatch(entries) {
      return setMany(entries, store);
    },
    get(key) {
      return get(key, store);
    },
    scan: undefined,
    async close() {
      const db = await store("readonly", (s) => s.transaction.db);
      db.close();
      store = undefined;
    },
    destroy(name) {
      return deleteIdb(name);
    },
  };
}
