/**
 * Entry point for Node.js (the `node` export condition): the database on Node's `fs`, with a
 * synchronous API (`openSync`) and the Promise API (`open`) that browsers share.
 *
 * @module
 */
import { resolve } from "node:path";

import { PromiseDatabase } from "./api/database.js";
import { settle } from "./api/settle.js";
import { pathArgument } from "./arguments/checks.js";
import { checkOpenOptions } from "./arguments/open-options.js";
import { version as coreVersion } from "./engine/module-functions.js";
import { openDatabaseSync } from "./engine/sync-database.js";
import { nodeEnvironment } from "./node/environment.js";
import { useNodeLoader } from "./node/load-wasm.js";
import { importDirectory } from "./node/node-archive.js";
import { InThreadTransport } from "./node/in-thread-transport.js";
import { MaintenanceRunner } from "./node/maintenance-runner.js";
import { openNodeServer } from "./node/node-server.js";
import { WorkerTransport } from "./node/worker-transport.js";
import type {
  Database,
  JsonEncoded,
  KeyEncoding,
  KeyOf,
  OpenOptions,
  SyncDatabase,
  ValueEncoding,
  ValueOf,
} from "./types.js";

export { ShaleError, type ShaleErrorCode } from "./errors.js";
export { init, type WasmSource } from "./node/load-wasm.js";
export type * from "./types.js";

// Every function here registers the module's loader itself rather than relying on this module
// doing it when imported: the package says `"sideEffects": false`, so a bundler may leave out
// this module's top-level code when only some of its functions are imported. (It is registered
// at import too, for what reaches the engine directly, as some tests do.)
useNodeLoader();

/**
 * Writes the database archive `archive` (what `export()` gives, in Node or a browser) as the
 * database in directory `location`: verified, then moved into place. Errors: `LOCKED` if a
 * database there is open, `ALREADY_EXISTS` unless `overwrite`, `INVALID_ARGUMENT` for a bad
 * archive or option.
 */
export async function importDatabase(
  location: string,
  archive: Blob | ArrayBuffer | Uint8Array,
  options?: { overwrite?: boolean },
): Promise<void> {
  useNodeLoader();
  return importDirectory(location, archive, options);
}

/** The version of the ShaleDB core compiled into the WebAssembly module. */
export function version(): string {
  useNodeLoader();
  return coreVersion();
}

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
): SyncDatabase<KeyOf<KE>, ValueOf<VE>>;
/**
 * {@link openSync} with `"json"` values of type `V`, the caller's word (values read are not
 * checked against it): `openSync<User>(location, { valueEncoding: "json" })`.
 */
export function openSync<V, KE extends KeyEncoding = "utf8">(
  location: string,
  options: JsonEncoded<OpenOptions<KE, "json">>,
): SyncDatabase<KeyOf<KE>, V>;
export function openSync(
  location: string,
  options?: OpenOptions<KeyEncoding, ValueEncoding>,
): SyncDatabase<unknown, unknown> {
  useNodeLoader();
  return openDatabaseSync(nodeEnvironment, location, options) as unknown as SyncDatabase<unknown, unknown>;
}

/**
 * Opens the database in directory `location` with the Promise API, the same as in browsers: the
 * engine runs in a worker thread, so no call holds up the event loop (or, with
 * `engineThread: "caller"`, in this thread: see {@link OpenOptions.engineThread}). Errors as
 * {@link openSync}, as a rejected promise.
 */
export function open<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
  location: string,
  options?: OpenOptions<KE, VE>,
): Promise<Database<KeyOf<KE>, ValueOf<VE>>>;
/**
 * {@link open} with `"json"` values of type `V`, the caller's word (values read are not checked
 * against it): `open<User>(location, { valueEncoding: "json" })`.
 */
export function open<V, KE extends KeyEncoding = "utf8">(
  location: string,
  options: JsonEncoded<OpenOptions<KE, "json">>,
): Promise<Database<KeyOf<KE>, V>>;
export function open(
  location: string,
  options?: OpenOptions<KeyEncoding, ValueEncoding>,
): Promise<Database<unknown, unknown>> {
  useNodeLoader();
  return settle(async () => {
    pathArgument(location, "the location");
    const checked = checkOpenOptions(options);
    const directory = resolve(location);
    const transport =
      checked.engineThread === "caller"
        ? new InThreadTransport(
            openNodeServer(directory, options, { jobs: new MaintenanceRunner(directory), asyncSync: true }),
          )
        : await WorkerTransport.open(directory, options);
    const db = new PromiseDatabase(transport, checked.keys, checked.values);
    await PromiseDatabase.checkEncodings(db);
    return db as unknown as Database<unknown, unknown>;
  });
}
