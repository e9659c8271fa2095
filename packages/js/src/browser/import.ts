/**
 * `importDatabase` inside a worker: a tar archive of a database directory (from `export()`, or
 * `tar -cf` of a directory written natively or by Node) becomes database `name` in OPFS. The
 * files are written as they are, then the database is opened once to check it. A failure leaves
 * nothing behind; and when the import replaces a database (`overwrite`), the archive is checked
 * in a scratch directory first, so that a bad one leaves the old database as it was.
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import { loadWasm } from "../init-async.js";
import { openDatabaseSync } from "../sync-database.js";
import { acquireLock } from "./locks.js";
import { OpfsPool, opfsPoolDirectory } from "./opfs-pool.js";
import {
  checkDatabaseName,
  databaseDirectory,
  opfsError,
  removeDatabaseDirectory,
  removeScratchDirectory,
  scratchDirectory,
} from "./opfs-directories.js";
import { lockNames, type ImportRequest } from "./protocol.js";
import { readTar, type TarFile } from "./tar.js";

/** Files of a native database directory that have no meaning in OPFS (Web Locks replace it). */
const SKIPPED = new Set(["LOCK"]);

/** The database files of a tar archive; `INVALID_ARGUMENT` if it is not one database's. */
async function archiveFiles(archive: Blob): Promise<TarFile[]> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await archive.arrayBuffer());
  } catch (error) {
    throw opfsError("cannot read the archive", error);
  }
  const files = readTar(bytes).files.filter((file) => !SKIPPED.has(file.name));
  if (!files.some((file) => file.name === "CURRENT")) {
    throw new ShaleError("INVALID_ARGUMENT", "shaledb: the archive holds no database (no CURRENT file)");
  }
  return files;
}

/** Whether `dir` holds any file (a database, or what is left of one). */
async function holdsFiles(dir: FileSystemDirectoryHandle): Promise<boolean> {
  const pool = await OpfsPool.open(opfsPoolDirectory(dir), { minFree: 0 });
  try {
    return pool.list().length > 0;
  } finally {
    pool.releaseAll();
  }
}

/** Writes `files` into the (empty) pool of `dir`, then opens them as database `label`. */
async function writeAndCheck(
  dir: FileSystemDirectoryHandle,
  label: string,
  files: readonly TarFile[],
): Promise<void> {
  const pool = await OpfsPool.open(opfsPoolDirectory(dir));
  try {
    await pool.reserve(files.length + 4);
    for (const file of files) {
      pool.writeNewFile(file.name, file.data);
    }
    pool.syncDir();
    // Opening checks the manifest and replays the logs; closing releases the pool.
    openDatabaseSync({ resolve: (n) => n, storage: () => pool }, label, {
      createIfMissing: false,
      autoMaintenance: false,
    }).close();
  } finally {
    pool.releaseAll();
  }
}

export async function runImport(request: ImportRequest, wasmUrl: URL): Promise<void> {
  const name = checkDatabaseName(request.name);
  const files = await archiveFiles(request.archive);
  const release = await acquireLock(lockNames.database(name), { ifAvailable: true });
  if (release === undefined) {
    throw new ShaleError("LOCKED", `shaledb: database "${name}" is open in this or another tab`);
  }
  try {
    await loadWasm(wasmUrl);
    const exists = await holdsFiles(await databaseDirectory(name, true));
    if (exists && !request.overwrite) {
      throw new ShaleError(
        "ALREADY_EXISTS",
        `shaledb: database "${name}" already exists (pass { overwrite: true } to replace it)`,
      );
    }
    if (exists) {
      const scratch = await scratchDirectory();
      try {
        await writeAndCheck(scratch.dir, name, files);
      } finally {
        await removeScratchDirectory(scratch.entry).catch(() => undefined);
      }
      await removeDatabaseDirectory(name);
    }
    try {
      await writeAndCheck(await databaseDirectory(name, true), name, files);
    } catch (error) {
      await removeDatabaseDirectory(name).catch(() => undefined);
      throw error;
    }
  } finally {
    release();
  }
}
