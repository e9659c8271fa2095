// ShaleDB's synchronous API inside a dedicated worker of the application (`openInWorker`), the
// counterpart of sqlite-wasm-direct: the page sends the whole workload here once (`run`), and
// every operation is a synchronous call, no page<->worker hop. Unlike sqlite-wasm-direct this
// is something a page can do: an application's own worker opens the database this way (and
// still serves the page's `open()` of it).
//
// A write that finds no OPFS file ready for what it may create fails with BUSY, writing
// nothing; as the API documents, the adapter then awaits `db.ready()` and retries.
import { deleteDatabase, openInWorker } from "shaledb";

import { runWorkload } from "../workloads.js";

const SYNC = { sync: true };
/** @type {any} */ let db;
let sync = false;

/** Runs `write`; after BUSY (nothing written), waits for the pool and runs it again. */
async function retryBusy(write) {
  for (;;) {
    try {
      return write();
    } catch (err) {
      if (err?.code !== "BUSY") throw err;
      await db.ready();
    }
  }
}

const direct = {
  name: "shaledb-direct",
  syncWrites: true,
  async open(name, options) {
    sync = options.sync;
    db = await openInWorker(name, {
      keyEncoding: "binary",
      valueEncoding: "binary",
      memtableSize: options.memtableBytes,
      blockCacheSize: options.cacheBytes,
      compression: true,
      bloomBitsPerKey: 10,
    });
  },
  put(key, value) {
    return retryBusy(() => (sync ? db.put(key, value, SYNC) : db.put(key, value)));
  },
  putBatch(entries) {
    return retryBusy(() => {
      const batch = db.batch();
      for (let i = 0; i < entries.length; i++) batch.put(entries[i][0], entries[i][1]);
      batch.write();
    });
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
  async close() {
    await db.close();
    db = undefined;
  },
  destroy(name) {
    return deleteDatabase(name);
  },
};

onmessage = async (event) => {
  const { id, cfg } = event.data;
  try {
    const figures = [];
    await runWorkload(direct, cfg, (f) => figures.push(f), (line) => postMessage({ log: line }));
    postMessage({ id, result: figures });
  } catch (err) {
    postMessage({ id, error: String(err?.stack ?? err) });
  }
};
postMessage({ started: true });
