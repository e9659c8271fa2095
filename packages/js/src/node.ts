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
import { openDatabaseSync } from "./engine/sync-database.js";
import { nodeEnvironment } from "./node/environment.js";
import { useNodeLoader } from "./node/load-wasm.js";
import { InThreadTransport } from "./node/in-thread-transport.js";
import { openNodeServer } from "./node/node-server.js";
import { WorkerTransport } from "./node/worker-transport.js";
import type {
  Database,
  KeyEncoding,
  KeyOf,
  OpenOptions,
  SyncDatabase,
  ValueEncoding,
  ValueOf,
} from "./types.js";

export { version } from "./engine/module-functions.js";
export { ShaleError, type ShaleErrorCode } from "./errors.js";
export { init } from "./node/load-wasm.js";
export { importDirectory as importDatabase } from "./node/node-archive.js";
export type * from "./types.js";

useNodeLoader();

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
 * Opens the database in directory `location` with the Promise API, the same as in browsers: the
 * engine runs in a worker thread, so no call holds up the event loop (or, with
 * `engineThread: "caller"`, in this thread: see {@link OpenOptions.engineThread}). Errors as
 * {@link openSync}, as a rejected promise.
 */
export function open<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
  location: string,
  options?: OpenOptions<KE, VE>,
): Promise<Database<KeyOf<KE>, ValueOf<VE>>> {
  return settle(async () => {
    pathArgument(location, "the location");
    const checked = checkOpenOptions(options);
    const transport =
      checked.engineThread === "caller"
        ? new InThreadTransport(openNodeServer(resolve(location), options))
        : await WorkerTransport.open(resolve(location), options);
    return new PromiseDatabase(transport, checked.keys, checked.values) as unknown as Database<
      KeyOf<KE>,
      ValueOf<VE>
    >;
  });
}
