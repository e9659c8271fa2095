/**
 * Entry point for browsers (the `browser` and `default` export conditions). `open` returns the
 * Promise API of the Node package, backed by a dedicated worker that the package starts itself:
 * the database lives in the Origin Private File System, and tabs of one origin share it (the
 * first to open it owns it and serves the others; another takes over when it goes).
 *
 * @module
 */
import { option, optionsObject } from "./arguments/checks.js";
import { checkBrowserOpen, requestPersistence, type BrowserOpenOptions } from "./browser/open-options.js";
import { ShaleError, invalidArgument } from "./errors.js";
import { loadWasm } from "./engine/load-async.js";
import { Connection } from "./browser/page/connection.js";
import { isImportDebug } from "./browser/import-debug.js";
import { acquireLockSoon } from "./browser/locks.js";
import { checkDatabaseName, databaseNames, removeDatabaseDirectory } from "./browser/opfs/directories.js";
import { lockNames, type ImportRequest } from "./browser/messages.js";
import { BrowserDatabaseImpl, type BrowserDatabase } from "./browser/page/browser-database.js";
import { firstMessage, spawnWorker } from "./browser/page/spawn-worker.js";
import { inDedicatedWorker } from "./browser/support.js";
import { moduleUrl } from "./browser/wasm-urls.js";
import { fromWire } from "./transport/wire-error.js";
import type { JsonEncoded, KeyEncoding, KeyOf, ValueEncoding, ValueOf } from "./types.js";

export { version } from "./engine/module-functions.js";
export { ShaleError, type ShaleErrorCode } from "./errors.js";
export type * from "./types.js";
export type { BrowserDatabase } from "./browser/page/browser-database.js";
export type { BrowserStats } from "./browser/messages.js";
export type { BrowserOpenOptions } from "./browser/open-options.js";
export type { EngineModule } from "./browser/wasm-urls.js";
export { openInWorker } from "./browser/own-worker/open-in-worker.js";
export type { WorkerDatabase } from "./browser/own-worker/worker-database.js";

/**
 * Opens (creating it unless `createIfMissing: false`) database `name` of this origin, stored in
 * the Origin Private File System, with the Promise API shared with Node. Needs a browser with
 * OPFS sync access handles in workers (Chromium 108+, Firefox 111+, Safari 16.4+); needs no
 * special headers.
 *
 * @throws {ShaleError} (as a rejection) `LOCKED` if `exclusive` and another tab has it, or
 *   another tab has it exclusively; `NOT_FOUND`, `ALREADY_EXISTS`, `CORRUPTION`,
 *   `INVALID_ARGUMENT`, `QUOTA`, `IO` as in Node.
 */
export async function open<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
  name: string,
  options?: BrowserOpenOptions<KE, VE>,
): Promise<BrowserDatabase<KeyOf<KE>, ValueOf<VE>>>;
/**
 * {@link open} with `"json"` values of type `V`, the caller's word (values read are not checked
 * against it): `open<User>(name, { valueEncoding: "json" })`.
 */
export async function open<V, KE extends KeyEncoding = "utf8">(
  name: string,
  options: JsonEncoded<BrowserOpenOptions<KE, "json">>,
): Promise<BrowserDatabase<KeyOf<KE>, V>>;
export async function open(
  name: string,
  options?: BrowserOpenOptions<KeyEncoding, ValueEncoding>,
): Promise<BrowserDatabase<unknown, unknown>> {
  checkDatabaseName(name);
  const { checked, exclusive, persist, module, engine } = checkBrowserOpen(options);
  const connection = await Connection.open({ type: "open", name, exclusive, module, options: engine });
  requestPersistence(connection.created, persist);
  const db = new BrowserDatabaseImpl(connection, checked.keys, checked.values);
  await BrowserDatabaseImpl.checkEncodings(db);
  return db as unknown as BrowserDatabase<unknown, unknown>;
}

/**
 * Creates database `name` from a tar archive of a database directory: one from `export()`, or
 * `tar -cf` of a directory written by native ShaleDB or Node. The archive's files are stored
 * unchanged (a `LOCK` file is skipped) beside the database, every block of every file is
 * verified and the database opened once to check it; only then does one atomic step make it
 * the database `name`. A damaged archive, a failure, or the tab going away at any moment leaves
 * the database as it was (or absent), never half imported.
 *
 * With `overwrite: true` an existing database is replaced (at that atomic step).
 *
 * @throws {ShaleError} `ALREADY_EXISTS` if the database exists (unless `overwrite: true`);
 *   `LOCKED` if it is open; `INVALID_ARGUMENT` for an archive that is not a tar of one database
 *   directory; `CORRUPTION` and the other errors of opening it.
 */
export async function importDatabase(
  name: string,
  archive: Blob | ArrayBuffer | Uint8Array,
  options?: { overwrite?: boolean },
): Promise<void> {
  checkDatabaseName(name);
  // `debug`: a test hook, not public (below).
  const given = optionsObject(options, ["overwrite", "debug"], "importDatabase options");
  const overwrite = option(given, "overwrite", "boolean", false);
  let blob: Blob;
  if (archive instanceof Blob) {
    blob = archive;
  } else if (archive instanceof ArrayBuffer || archive instanceof Uint8Array) {
    blob = new Blob([archive as BlobPart]);
  } else {
    throw invalidArgument("the archive must be a Blob, an ArrayBuffer or a Uint8Array");
  }
  // A test hook (not public): stop the import at a given step; the worker is then ended.
  const debug: unknown = given["debug"];
  // Checked here first (the worker checks again, holding the lock) so that an import into an
  // open database fails at once, without starting a worker.
  const probe = await acquireLockSoon(lockNames.database(name));
  if (probe === undefined) {
    throw new ShaleError("LOCKED", `shaledb: database "${name}" is open in this or another tab; close it first`);
  }
  probe();
  const request: ImportRequest = { type: "import", name, archive: blob, overwrite };
  if (inDedicatedWorker()) {
    // Here (an application's worker, `openInWorker`'s) the import runs in place: OPFS sync
    // access handles exist in this thread. A nested worker would cost a start, and Firefox's
    // `new Worker()` inside a worker now and then blocks its caller for good.
    // (The test hook, which ends the import's worker at a step, is for pages only.)
    const { runImport } = await import("./browser/worker/import.js");
    await runImport(request, moduleUrl("full"), () => undefined);
    return;
  }
  const worker = spawnWorker();
  try {
    const done = firstMessage(worker);
    worker.postMessage({ ...request, ...(isImportDebug(debug) ? { debug } : {}) } satisfies ImportRequest);
    const reply = await done;
    if (reply.type === "failed") {
      throw fromWire(reply.error);
    }
    if (reply.type === "importHalted") {
      throw new ShaleError("IO", "shaledb: the import was stopped by its test hook");
    }
  } finally {
    worker.terminate();
  }
}

/**
 * Deletes database `name` and all its files. A missing database is not an error.
 *
 * @throws {ShaleError} `LOCKED` if it is open in this or another tab.
 */
export async function deleteDatabase(name: string): Promise<void> {
  checkDatabaseName(name);
  const release = await acquireLockSoon(lockNames.database(name));
  if (release === undefined) {
    throw new ShaleError("LOCKED", `shaledb: database "${name}" is open in this or another tab; close it first`);
  }
  try {
    await removeDatabaseDirectory(name);
  } finally {
    release();
  }
}

/** The names of this origin's databases, sorted. */
export function listDatabases(): Promise<string[]> {
  return databaseNames();
}

/**
 * Loads the WebAssembly module into the page, for the functions that run it there
 * (`version()`, `recordioRoundTrip()`). `open` does not need it: the database runs in its
 * worker. Calling it again returns the same promise.
 *
 * @param wasmUrl Where to fetch `shaledb.wasm` from, if not beside this package (the package
 *   exports the file as `shaledb/shaledb.wasm`).
 */
export function init(wasmUrl?: string | URL): Promise<void> {
  return loadWasm(wasmUrl ?? new URL("../wasm/shaledb_wasm_bg.wasm", import.meta.url));
}
