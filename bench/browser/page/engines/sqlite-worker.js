// SQLite Wasm (@sqlite.org/sqlite-wasm) on its opfs-sahpool VFS, in a dedicated worker of the
// bench page (the VFS needs OPFS sync access handles, which only workers have). The page talks to
// it with one postMessage round trip per awaited operation (sqlite-wasm.js), as a page using
// SQLite would; `runDirect` instead runs the whole workload here, calling SQLite synchronously
// (engine `sqlite-wasm-direct`).
//
// Settings (see README.md): table `kv (k BLOB PRIMARY KEY, v BLOB NOT NULL)` as in the Node
// suite; `locking_mode = EXCLUSIVE` (one connection owns the file, as the VFS's pool does anyway,
// so the rollback journal stays open between transactions instead of being created and deleted
// by each: the VFS flushes its slot header on every create, close and delete);
// `journal_mode = PERSIST` (a rollback journal: a crash mid-transaction rolls back);
// `synchronous = OFF` for the ordinary cases (every commit has reached OPFS, nothing is flushed:
// consistent after a tab crash, like ShaleDB's default write) and `FULL` for put/sync (journal and
// database flushed at each commit); `cache_size` = the block cache of the others.
import sqlite3InitModule from "@sqlite.org/sqlite-wasm";

import { runWorkload } from "../workloads.js";

const VFS_DIRECTORY = ".shaledb-bench-sahpool";

/** @type {any} */ let sqlite3;
/** @type {any} */ let pool;
/** @type {any} */ let db;
/** @type {Record<string, any>} */ let st = {};
/** Pragmas chosen by the page (`settings`), defaults above. */
let settings = { journalMode: "PERSIST", lockingMode: "EXCLUSIVE" };

async function ready() {
  if (!sqlite3) sqlite3 = await sqlite3InitModule();
  if (!pool) pool = await sqlite3.installOpfsSAHPoolVfs({ directory: VFS_DIRECTORY });
  return pool;
}

const pathOf = (name) => `/${name}.sqlite3`;

/** The adapter on SQLite itself (synchronous calls), shared by the page's requests and runDirect. */
const direct = {
  name: "sqlite-wasm-direct",
  syncWrites: true,
  async open(name, options) {
    await ready();
    db = new pool.OpfsSAHPoolDb(pathOf(name));
    try {
      for (const sql of [
        `PRAGMA locking_mode = ${settings.lockingMode}`,
        `PRAGMA journal_mode = ${settings.journalMode}`,
        `PRAGMA synchronous = ${options.sync ? "FULL" : "OFF"}`,
        `PRAGMA cache_size = -${Math.floor(options.cacheBytes / 1024)}`,
        "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL)",
      ]) {
        db.exec(sql);
      }
    } catch (err) {
      db.close();
      db = undefined;
      throw err;
    }
    st = {
      put: db.prepare("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)"),
      get: db.prepare("SELECT v FROM kv WHERE k = ?"),
      range: db.prepare("SELECT k, v FROM kv WHERE k >= ? ORDER BY k LIMIT ?"),
      begin: db.prepare("BEGIN"),
      commit: db.prepare("COMMIT"),
    };
  },
  put(key, value) {
    st.put.bind(1, key).bind(2, value).stepReset();
  },
  putBatch(entries) {
    st.begin.stepReset();
    try {
      const put = st.put;
      for (let i = 0; i < entries.length; i++) put.bind(1, entries[i][0]).bind(2, entries[i][1]).stepReset();
      st.commit.stepReset();
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
  },
  get(key) {
    const s = st.get.bind(1, key);
    try {
      return s.step() ? s.get(0) : undefined;
    } finally {
      s.reset();
    }
  },
  /** Up to n [key, value] rows from the first key >= startKey. */
  rows(startKey, n) {
    const s = st.range.bind(1, startKey).bind(2, n);
    const rows = [];
    try {
      while (s.step()) rows.push([s.get(0), s.get(1)]);
    } finally {
      s.reset();
    }
    return rows;
  },
  scan(startKey, n) {
    const rows = direct.rows(startKey, n);
    let bytes = 0;
    for (const [k, v] of rows) bytes += k.length + v.length;
    return bytes >= 0 ? rows.length : -1;
  },
  close() {
    for (const s of Object.values(st)) s.finalize();
    st = {};
    db?.close();
    db = undefined;
  },
  async destroy(name) {
    await ready();
    for (const path of [pathOf(name), `${pathOf(name)}-journal`, `${pathOf(name)}-wal`]) pool.unlink(path);
  },
};

const ops = {
  settings(s) {
    settings = { ...settings, ...s };
  },
  open: direct.open,
  put: direct.put,
  putBatch: direct.putBatch,
  get: direct.get,
  rows: direct.rows,
  close() {
    direct.close();
    // Let go of the pool's access handles now, so that the next worker can take them.
    pool?.pauseVfs();
  },
  destroy: async (name) => {
    await direct.destroy(name);
    pool?.pauseVfs();
  },
  /** The whole workload of one size here, SQLite called synchronously. */
  async runDirect(cfg) {
    const figures = [];
    await runWorkload(direct, cfg, (f) => figures.push(f), (line) => postMessage({ log: line }));
    pool?.pauseVfs();
    return figures;
  },
};

onmessage = (event) => {
  const { id, op, args } = event.data;
  let result;
  try {
    result = ops[op](...args);
  } catch (err) {
    postMessage({ id, error: String(err?.stack ?? err) });
    return;
  }
  if (result instanceof Promise) {
    result.then(
      (r) => postMessage({ id, result: r }),
      (err) => postMessage({ id, error: String(err?.stack ?? err) }),
    );
  } else if (result instanceof Uint8Array) {
    postMessage({ id, result }, [result.buffer]);
  } else {
    postMessage({ id, result });
  }
};
postMessage({ started: true });
