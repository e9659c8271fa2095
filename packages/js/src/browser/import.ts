/**
 * `importDatabase` inside a worker: a tar archive of a database directory (from `export()`, or
 * `tar -cf` of a directory written natively or by Node) becomes database `name` in OPFS. The
 * files are written as they are, then the database is opened once to check it; a failure
 * leaves nothing behind.
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import { loadWasm } from "../init-async.js";
import { OpenMode } from "../storage-host.js";
import { openDatabaseSync } from "../sync-database.js";
import { acquireLock } from "./locks.js";
import { OpfsPool, opfsPoolDirectory } from "./opfs-pool.js";
import { checkDatabaseName, databaseDirectory, opfsError, removeDatabaseDirectory } from "./opfs-directories.js";
import { lockNames, type ImportRequest } from "./protocol.js";
import { readTar } from "./tar.js";

/** Files of a native database directory that have no meaning in OPFS (Web Locks replace it). */
const SKIPPED = new Set(["LOCK"]);

export async function runImport(request: ImportRequest, wasmUrl: URL): Promise<void> {
  const name = checkDatabaseName(request.name);
  const wasmReady = loadWasm(wasmUrl);
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await request.archive.arrayBuffer());
  } catch (error) {
    throw opfsError("cannot read the archive", error);
  }
  const archive = readTar(bytes);
  const files = archive.files.filter((file) => !SKIPPED.has(file.name));
  if (!files.some((file) => file.name === "CURRENT")) {
    throw new ShaleError("INVALID_ARGUMENT", "shaledb: the archive holds no database (no CURRENT file)");
  }
  const release = await acquireLock(lockNames.database(name), { ifAvailable: true });
  if (release === undefined) {
    throw new ShaleError("LOCKED", `shaledb: database "${name}" is open in this or another tab`);
  }
  let pool: OpfsPool | undefined;
  let written = false;
  try {
    pool = await OpfsPool.open(opfsPoolDirectory(await databaseDirectory(name, true)));
    if (pool.list().length > 0) {
      if (!request.overwrite) {
        throw new ShaleError(
          "ALREADY_EXISTS",
          `shaledb: database "${name}" already exists (pass { overwrite: true } to replace it)`,
        );
      }
      for (const existing of pool.list()) {
        pool.remove(existing);
      }
    }
    written = true;
    await pool.reserve(files.length + 4);
    for (const file of files) {
      const id = pool.open(file.name, OpenMode.CreateNew);
      try {
        pool.write(id, 0, file.data);
        pool.sync(id);
      } finally {
        pool.close(id);
      }
    }
    pool.syncDir();
    await wasmReady;
    // Opening checks the manifest and replays the logs; it closes the pool when done.
    const target = pool;
    pool = undefined;
    openDatabaseSync({ resolve: (n) => n, storage: () => target }, name, {
      createIfMissing: false,
      autoMaintenance: false,
    }).close();
  } catch (error) {
    pool?.releaseAll();
    if (written) {
      await removeDatabaseDirectory(name).catch(() => undefined);
    }
    throw error;
  } finally {
    pool?.releaseAll();
    release();
  }
}
