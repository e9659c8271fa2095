/**
 * `openInWorker`: ShaleDB's synchronous API inside a dedicated worker of the application's own,
 * the way sqlite-wasm's users reach SQLite there — no page↔worker round trip per call. The worker
 * owns the database as the package's own worker would (its Web Lock, its OPFS file pool, the
 * same engine) and, unless `exclusive`, serves the `open()` of other tabs and pages meanwhile.
 *
 * @module
 */
import { ShaleError } from "../../errors.js";
import { loadWasm } from "../../engine/load-async.js";
import type { JsonEncoded, KeyEncoding, KeyOf, ValueEncoding, ValueOf } from "../../types.js";
import { acquireLockSoon } from "../locks.js";
import { lockNames, type OpenRequest } from "../messages.js";
import { moduleUrl } from "../wasm-urls.js";
import { checkBrowserOpen, requestPersistence, type BrowserOpenOptions } from "../open-options.js";
import { checkDatabaseName } from "../opfs/directories.js";
import { inDedicatedWorker, requireStorageApis } from "../support.js";
import { Owner } from "../worker/owner.js";
import { SYNC_SLOTS } from "../worker/slot-reserve.js";
import { WorkerDatabaseImpl, type WorkerDatabase } from "./worker-database.js";

/**
 * Opens (creating it unless `createIfMissing: false`) database `name` of this origin with the
 * synchronous API, in the calling dedicated worker, which then owns it: the same database that
 * `open(name)` in a page reaches, and the same files. Other tabs' and pages' `open(name)` are
 * served by this worker while it has it (in the moments it awaits something); when it closes the
 * database (or ends), one of them takes over.
 *
 * Writes need OPFS files ready for what they may create, and files are made only while the
 * worker awaits: a write that finds none fails with `BUSY` and writes nothing — `await
 * db.ready()` and retry (see {@link WorkerDatabase.ready}).
 *
 * @throws {ShaleError} (as a rejection) `LOCKED` if another tab or worker has the database open
 *   (this worker must own it; `open()` would share it); `INVALID_ARGUMENT` outside a dedicated
 *   worker or for bad options; `NOT_FOUND`, `ALREADY_EXISTS`, `CORRUPTION`, `QUOTA`, `IO` as
 *   `open` does.
 */
export async function openInWorker<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
  name: string,
  options?: BrowserOpenOptions<KE, VE>,
): Promise<WorkerDatabase<KeyOf<KE>, ValueOf<VE>>>;
/** {@link openInWorker} with `"json"` values of type `V` (the caller's word, not checked). */
export async function openInWorker<V, KE extends KeyEncoding = "utf8">(
  name: string,
  options: JsonEncoded<BrowserOpenOptions<KE, "json">>,
): Promise<WorkerDatabase<KeyOf<KE>, V>>;
export async function openInWorker(
  name: string,
  options?: BrowserOpenOptions<KeyEncoding, ValueEncoding>,
): Promise<WorkerDatabase<unknown, unknown>> {
  checkDatabaseName(name);
  const { checked, exclusive, persist, module, engine } = checkBrowserOpen(options);
  requireDedicatedWorker();
  requireStorageApis();
  const release = await acquireLockSoon(lockNames.database(name));
  if (release === undefined) {
    throw new ShaleError(
      "LOCKED",
      `shaledb: database "${name}" is open in another tab or worker, and openInWorker must own it: ` +
        "close it there first (open() in a page shares it instead)",
    );
  }
  const url = moduleUrl(module);
  const wasmReady = loadWasm(url).catch((error: unknown) => {
    throw new ShaleError("IO", `shaledb: cannot load the WebAssembly module (${String(url)}): ${String(error)}`, {
      cause: error,
    });
  });
  const request: OpenRequest = { type: "open", name, client: crypto.randomUUID(), exclusive, module, options: engine };
  // Owner.open lets go of the lock if it fails.
  const { owner, created } = await Owner.open(request, release, false, wasmReady, SYNC_SLOTS);
  requestPersistence(created, persist);
  const db = new WorkerDatabaseImpl(owner, checked.keys, checked.values);
  // A first burst of writes finds its files ready. Failing to grow (quota) is for writes to report.
  await db.ready().catch(() => undefined);
  return db as unknown as WorkerDatabase<unknown, unknown>;
}

/** Throws `INVALID_ARGUMENT` outside a dedicated worker (the only place with sync access handles). */
function requireDedicatedWorker(): void {
  if (!inDedicatedWorker()) {
    throw new ShaleError(
      "INVALID_ARGUMENT",
      "shaledb: openInWorker runs in a dedicated worker (OPFS sync access handles exist only there); in a page, use open()",
    );
  }
}
