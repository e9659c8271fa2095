// SQLite Wasm on opfs-sahpool, seen from the page: SQLite lives in a dedicated worker of the
// bench (sqlite-worker.js), started by `open` (so open time counts the worker's start and the
// wasm compile, as ShaleDB's does) and ended by `close`; every operation is one postMessage
// round trip, keys and values structured-cloned across, a get's value transferred back.
//
// `sqlite-wasm-direct` runs the same workload inside that worker, calling SQLite synchronously:
// what SQLite costs without the page<->worker hop (not how a page can call it). Labelled as such
// in the results.

/** A worker running sqlite-worker.js, with one pending Promise per request. */
class SqliteWorker {
  constructor(onLog) {
    this.worker = new Worker(new URL("./sqlite-worker.js", import.meta.url), { type: "module", name: "sqlite" });
    this.pending = new Map();
    this.next = 1;
    this.started = new Promise((resolve, reject) => {
      this.worker.onerror = (e) => {
        e.preventDefault();
        const err = new Error(`sqlite worker failed: ${e.message}`);
        reject(err);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      };
      this.worker.onmessage = (e) => {
        const m = e.data;
        if (m.started) return resolve();
        if (m.log !== undefined) return onLog?.(m.log);
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.result);
      };
    });
  }

  call(op, ...args) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  terminate() {
    this.worker.terminate();
  }
}

/** Pragma overrides from the bench config (`sqliteJournal`, `sqliteLocking`), for experiments. */
function settingsOf(cfg) {
  const s = {};
  if (cfg?.sqliteJournal) s.journalMode = cfg.sqliteJournal;
  if (cfg?.sqliteLocking) s.lockingMode = cfg.sqliteLocking;
  return s;
}

/** @returns {import("./index.js").Adapter} */
export function createAdapter(cfg) {
  /** @type {SqliteWorker} */
  let w;
  const settings = settingsOf(cfg);
  return {
    name: "sqlite-wasm",
    syncWrites: true,
    async open(name, options) {
      w = new SqliteWorker();
      try {
        await w.call("settings", settings);
        await w.call("open", name, options);
      } catch (err) {
        w.terminate();
        throw err;
      }
    },
    put(key, value) {
      return w.call("put", key, value);
    },
    putBatch(entries) {
      return w.call("putBatch", entries);
    },
    get(key) {
      return w.call("get", key);
    },
    async scan(startKey, n) {
      const rows = await w.call("rows", startKey, n);
      let bytes = 0;
      for (const [k, v] of rows) bytes += k.length + v.length;
      return bytes >= 0 ? rows.length : -1;
    },
    async close() {
      try {
        await w.call("close");
      } finally {
        w.terminate();
      }
    },
    async destroy(name) {
      const d = new SqliteWorker();
      try {
        await d.call("destroy", name);
      } finally {
        d.terminate();
      }
    },
  };
}

/** @returns {import("./index.js").Adapter} */
export function createDirectAdapter(cfg) {
  return {
    name: "sqlite-wasm-direct",
    async runInWorker(runCfg, log) {
      const w = new SqliteWorker(log);
      try {
        await w.call("settings", settingsOf(cfg));
        return await w.call("runDirect", runCfg);
      } finally {
        w.terminate();
      }
    },
  };
}
