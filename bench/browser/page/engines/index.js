// The engines of the browser suite, each behind the same async adapter interface, loaded on
// demand (a page imports only the engine it measures).

/**
 * @typedef {object} OpenOptions
 * @property {boolean} sync         open for durable writes (put/sync: flushed to storage)
 * @property {number} cacheBytes    block/page cache budget, where the engine has one
 * @property {number} memtableBytes memtable size, where the engine has one
 */

/**
 * @typedef {object} Adapter
 * @property {string} name                                   engine name in the results
 * @property {(name: string, options: OpenOptions) => Promise<void>} open
 *   opens (creating) database `name`; resolves when it can serve
 * @property {(key: Uint8Array, value: Uint8Array) => Promise<void>} put  one write, resolved when done
 * @property {(entries: [Uint8Array, Uint8Array][]) => Promise<void>} putBatch  one atomic batch
 * @property {(key: Uint8Array) => Promise<Uint8Array | undefined>} get
 * @property {((startKey: Uint8Array, n: number) => Promise<number>) | undefined} scan
 *   reads up to n entries (key and value) from the first key >= startKey; returns how many
 *   (undefined: the engine has no range reads)
 * @property {boolean} syncWrites                            whether put/sync applies
 * @property {() => Promise<void>} close
 * @property {(name: string) => Promise<void>} destroy       removes closed database `name`
 * @property {(cfg: object, log: (line: string) => void) => Promise<object[]>} [runInWorker]
 *   runs the whole workload elsewhere and returns its figures (sqlite-wasm-direct: inside
 *   SQLite's worker; shaledb-direct: in a worker that opened ShaleDB with openInWorker); such an
 *   adapter has none of the other operations
 */

/** Engine name -> a function making its adapter. */
export const ENGINES = {
  shaledb: () => import("./shaledb.js").then((m) => m.createAdapter()),
  indexeddb: () => import("./indexeddb.js").then((m) => m.createAdapter("indexeddb", "default")),
  "indexeddb-relaxed": () => import("./indexeddb.js").then((m) => m.createAdapter("indexeddb-relaxed", "relaxed")),
  "idb-keyval": () => import("./idb-keyval.js").then((m) => m.createAdapter()),
  "sqlite-wasm": (cfg) => import("./sqlite-wasm.js").then((m) => m.createAdapter(cfg)),
  "sqlite-wasm-direct": (cfg) => import("./sqlite-wasm.js").then((m) => m.createDirectAdapter(cfg)),
  "shaledb-direct": () => import("./shaledb-direct.js").then((m) => m.createDirectAdapter()),
};

/** @returns {Promise<Adapter>} */
export async function createAdapter(name, cfg) {
  const make = ENGINES[name];
  if (!make) throw new Error(`unknown engine ${name} (known: ${Object.keys(ENGINES).join(", ")})`);
  return make(cfg);
}
