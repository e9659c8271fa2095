/**
 * Entry point for Node.js (the `node` export condition): the database on Node's `fs`, with a
 * synchronous API (`openSync`) and the Promise API (`open`) that browsers share.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

import { initSync } from "../wasm/shaledb_wasm.js";
import { AsyncDatabase } from "./async-database.js";
import { ensureLoadedSync, markReady, needsLoad, setSyncLoader } from "./engine/instance.js";
import { NodeFsStorage } from "./node/node-storage.js";
import { setMemory } from "./engine/scratch.js";
import { openDatabaseSync, type Environment } from "./engine/sync-database.js";
import type {
  Database,
  KeyEncoding,
  KeyOf,
  OpenOptions,
  SyncDatabase,
  ValueEncoding,
  ValueOf,
} from "./types.js";

export * from "./core.js";

let wasmBytes: Buffer | undefined;

/** Instantiates the module from the package's own `.wasm` (fresh after a panic). */
function loadSync(): void {
  wasmBytes ??= readFileSync(new URL("../wasm/shaledb_wasm_bg.wasm", import.meta.url));
  const instance = initSync({ module: wasmBytes });
  setMemory(instance.memory);
  markReady();
}

setSyncLoader(loadSync);

/**
 * Loads the WebAssembly module. In Node this finishes synchronously (the returned promise is
 * already settled); `open` and `openSync` call it themselves.
 */
export function init(): Promise<void> {
  try {
    if (needsLoad()) {
      ensureLoadedSync();
    }
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

const nodeEnvironment: Environment = {
  resolve: (location) => resolve(location),
  storage: (location, create) => new NodeFsStorage(location, { create }),
};

/**
 * Opens (creating it unless `createIfMissing: false`) the database in directory `location`, with
 * the synchronous API: every call returns its result directly.
 *
 * @throws {ShaleError} `LOCKED` if another process (or another open in this one) has it;
 *   `CORRUPTION`; `INVALID_ARGUMENT` for bad options; `IO`.
 */
export function openSync<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
  location: string,
  options?: OpenOptions<KE, VE>,
): SyncDatabase<KeyOf<KE>, ValueOf<VE>> {
  return openDatabaseSync(nodeEnvironment, location, options) as unknown as SyncDatabase<
    KeyOf<KE>,
    ValueOf<VE>
  >;
}

/**
 * Opens the database in directory `location` with the Promise API, the same as in browsers.
 * Errors as {@link openSync}, as a rejected promise.
 */
export function open<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
  location: string,
  options?: OpenOptions<KE, VE>,
): Promise<Database<KeyOf<KE>, ValueOf<VE>>> {
  try {
    const db = new AsyncDatabase(openDatabaseSync(nodeEnvironment, location, options));
    return Promise.resolve(db as unknown as Database<KeyOf<KE>, ValueOf<VE>>);
  } catch (error) {
    return Promise.reject(error as Error);
  }
}
