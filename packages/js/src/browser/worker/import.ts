/**
 * `importDatabase` inside a worker: a tar archive of a database directory (from `export()`, or
 * `tar -cf` of a directory written natively or by Node) becomes database `name` in OPFS.
 *
 * Crash-safe and all-or-nothing (`../opfs/live-pool.ts`): the files are written aside, into a new slot
 * pool of the database's directory, then every block of every file is verified
 * (`verifyStorage`, the core's `shaledb::verify`) and the database opened once there; only
 * then does one atomic step (the `POOL` marker) make the new pool live, and the old one is
 * removed. A damaged archive, a failure, or the tab going away at any point leaves the old
 * database (or none) as it was; leftovers go at the next open or import.
 *
 * @module
 */
import { call, wasm } from "../../engine/instance.js";
import { requirePart } from "../../engine/module-parts.js";
import { ShaleError } from "../../errors.js";
import { loadWasm } from "../../engine/load-async.js";
import { openDatabaseSync } from "../../engine/sync-database.js";
import type { ImportDebug, ImportHalt } from "../import-debug.js";
import {
  poolDirectory,
  readDirectoryState,
  removeLeftovers,
  switchLivePool,
  type DirectoryState,
} from "../opfs/live-pool.js";
import { acquireLockSoon } from "../locks.js";
import { OpfsPool, opfsPoolDirectory } from "../opfs/opfs-pool.js";
import {
  checkDatabaseName,
  databaseDirectory,
  opfsError,
  removeDatabaseDirectory,
} from "../opfs/directories.js";
import { lockNames, type ImportRequest } from "../messages.js";
import type { TarFile } from "../../archive/tar/reader.js";
import { archiveDatabaseFiles } from "../../archive/database-archive.js";


/** The database files of a tar archive; `INVALID_ARGUMENT` if it is not one database's. */
async function archiveFiles(archive: Blob): Promise<TarFile[]> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await archive.arrayBuffer());
  } catch (error) {
    throw opfsError("cannot read the archive", error);
  }
  // A native directory's LOCK has no meaning in OPFS (Web Locks replace it): skipped.
  return archiveDatabaseFiles(bytes);
}

/** What `verifyStorage` reports (crates/wasm/src/verify.rs). */
interface VerifyReport {
  problems: { file: string; offset?: number; code: string; message: string }[];
}

/**
 * Reads every file of the database in `pool` and checks every block; throws the first problem
 * as a typed error naming the file and offset (`CORRUPTION`, `VERSION_UNSUPPORTED`, ...).
 */
function verify(pool: OpfsPool): void {
  requirePart("verify");
  const report = call(() => wasm.verifyStorage(pool, true)) as VerifyReport;
  const [first, ...more] = report.problems;
  if (first !== undefined) {
    const others = more.length === 0 ? "" : ` (and ${more.length} more problem${more.length === 1 ? "" : "s"})`;
    throw new ShaleError(first.code as ShaleError["code"], `shaledb: the archive is damaged: ${first.message}${others}`);
  }
}

/** Waits forever after telling the page (a test hook: the page then ends this worker). */
async function haltIf(debug: ImportDebug | undefined, at: ImportHalt, halted: () => void): Promise<void> {
  if (debug?.halt === at) {
    halted();
    await new Promise<never>(() => undefined);
  }
}

/** Writes `files` into the new pool `dir`, verifies them, and opens them once as `label`. */
async function writeAside(
  dir: FileSystemDirectoryHandle,
  label: string,
  files: readonly TarFile[],
  debug: ImportDebug | undefined,
  halted: () => void,
): Promise<void> {
  const pool = await OpfsPool.open(opfsPoolDirectory(dir));
  try {
    await pool.reserve(files.length + 4);
    // In archive order: nothing reads this pool before the switch, so the order is free.
    for (const [i, file] of files.entries()) {
      pool.writeNewFile(file.name, file.data); // each written and flushed
      if (i + 1 === Math.ceil(files.length / 2)) {
        await haltIf(debug, "writing", halted);
      }
    }
    pool.syncDir();
    verify(pool);
    // Opening checks what verification does not (options, keyspaces), and replays the logs
    // into a table; closing releases the pool's files. As raw bytes: binary neither checks nor
    // records the keyspaces' encodings.
    openDatabaseSync({ resolve: (n) => n, storage: () => pool }, label, {
      createIfMissing: false,
      autoMaintenance: false,
      keyEncoding: "binary",
      valueEncoding: "binary",
    }).close();
  } finally {
    pool.releaseAll();
  }
}

/**
 * Carries out `request`. `halted` tells the page that a test hook stopped the import
 * (`request.debug`).
 */
export async function runImport(request: ImportRequest, wasmUrl: URL, halted: () => void): Promise<void> {
  const name = checkDatabaseName(request.name);
  const files = await archiveFiles(request.archive);
  const release = await acquireLockSoon(lockNames.database(name));
  if (release === undefined) {
    throw new ShaleError("LOCKED", `shaledb: database "${name}" is open in this or another tab`);
  }
  try {
    await loadWasm(wasmUrl);
    const dir = await databaseDirectory(name, true);
    const state = await readDirectoryState(dir);
    const exists = await holdsDatabase(dir, state);
    if (exists && !request.overwrite) {
      throw new ShaleError(
        "ALREADY_EXISTS",
        `shaledb: database "${name}" already exists (pass { overwrite: true } to replace it)`,
      );
    }
    await removeLeftovers(dir, state);
    const next = Math.max(state.live, ...state.pools) + 1;
    try {
      await writeAside(await poolDirectory(dir, next, true), name, files, request.debug, halted);
      await haltIf(request.debug, "verified", halted);
      await switchLivePool(dir, state.marker, next);
    } catch (error) {
      await discardPool(dir, name, next, exists);
      throw error;
    }
    await haltIf(request.debug, "switched", halted);
    // The old pool is garbage now (and would be removed at the next open anyway).
    await removeLeftovers(dir, await readDirectoryState(dir)).catch(() => undefined);
  } finally {
    release();
  }
}

/**
 * After a failed import: removes the new pool `next` of database `name` (directory `dir`), or
 * the whole directory if the database did not exist before (`existed`) — unless the switch to
 * `next` took place after all (a failure while flushing the marker, say).
 */
async function discardPool(dir: FileSystemDirectoryHandle, name: string, next: number, existed: boolean): Promise<void> {
  try {
    const now = await readDirectoryState(dir);
    if (now.live === next) {
      return; // The new database is the live one: nothing to undo.
    }
    if (existed) {
      await removeLeftovers(dir, now);
    } else {
      await removeDatabaseDirectory(name);
    }
  } catch {
    // Left for the next open or import to remove.
  }
}

/** Whether the live pool of `dir` holds any file (a database, or what is left of one). */
async function holdsDatabase(dir: FileSystemDirectoryHandle, state: DirectoryState): Promise<boolean> {
  if (state.live === 0) {
    // The slot files are there; whether one holds a file, their headers tell.
    if (state.topSlots.length === 0) {
      return false;
    }
  }
  const pool = await OpfsPool.open(opfsPoolDirectory(await poolDirectory(dir, state.live, false)), { minFree: 0 });
  try {
    return pool.list().length > 0;
  } finally {
    pool.releaseAll();
  }
}
