// The engines of the suite, each behind the same small adapter interface.
//
// An adapter's operations are synchronous where the engine has a synchronous API (ShaleDB's
// openSync, lmdb, better-sqlite3, classic-level's getSync) and return Promises where it has only
// an asynchronous one (classic-level's writes and iterators); `async` says which, so the
// workloads await only what must be awaited (an `await` on a plain value would cost every sync
// engine a microtask per operation).

/**
 * @typedef {object} OpenOptions
 * @property {boolean} sync         open for durable writes (lmdb, better-sqlite3 choose at open)
 * @property {number} cacheBytes    block/page cache budget, where the engine has one
 * @property {number} memtableBytes memtable/write buffer size, where the engine has one
 */

/**
 * @typedef {object} Adapter
 * @property {string} name                      engine name in the results
 * @property {{ put: boolean, batch: boolean, get: boolean, scan: boolean, sync: boolean }} async
 *   which operations return Promises
 * @property {(dir: string, options: OpenOptions) => Promise<void>} open
 * @property {(key: Buffer, value: Buffer) => void | Promise<void>} putSingle
 * @property {(entries: [Buffer, Buffer][]) => void | Promise<void>} putBatch  one atomic batch
 * @property {(key: Buffer) => Uint8Array | undefined | Promise<Uint8Array | undefined>} get
 * @property {(startKey: Buffer, n: number) => number | Promise<number>} scan
 *   reads up to n entries from the first key >= startKey, touching key and value; returns how many
 * @property {(key: Buffer, value: Buffer) => void | Promise<void>} syncedPut  a durable put
 * @property {() => Promise<void>} close
 * @property {() => Promise<void>} [compact]  compacts the whole key range (Promise APIs only)
 * @property {Record<string, (key: Buffer) => Promise<unknown>>} [extraGets]
 *   other ways of getting, measured as extra cases (`get/random-<name>/<size>`)
 */

/** Engine name -> module that exports `createAdapter(): Adapter`. */
export const ENGINES = {
  shaledb: "./shaledb.mjs",
  "shaledb-promise": "./shaledb-promise.mjs",
  "shaledb-promise-caller": "./shaledb-promise-caller.mjs",
  "classic-level": "./classic-level.mjs",
  lmdb: "./lmdb.mjs",
  "better-sqlite3": "./better-sqlite3.mjs",
};

/** @returns {Promise<Adapter>} */
export async function createAdapter(name) {
  const path = ENGINES[name];
  if (!path) throw new Error(`unknown engine ${name} (known: ${Object.keys(ENGINES).join(", ")})`);
  const mod = await import(path);
  return mod.createAdapter();
}
