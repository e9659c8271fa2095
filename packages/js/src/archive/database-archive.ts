/**
 * The export archive of a database (docs/FORMAT.md, "Export archive"): a plain tar of the
 * database directory's files, written by `export()` and read by `importDatabase()` — the same
 * in browsers (files of an OPFS slot pool) and in Node.js (files of a directory).
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import { readTar, type TarFile } from "./tar/reader.js";
import { TarWriter } from "./tar/writer.js";

/** Files of a database directory that an archive leaves out or skips (the lock is a process's). */
const SKIPPED = new Set(["LOCK"]);

/**
 * The archive of `files` (a database directory's, in one consistent state), in a directory
 * named `directory` where a tar name field (99 bytes) holds it, else `database`.
 */
export function databaseArchive(directory: string, files: Iterable<{ name: string; data: Uint8Array }>): Blob {
  const tar = new TarWriter(
    new TextEncoder().encode(directory).length <= 99 ? directory : "database",
    Math.floor(Date.now() / 1000),
  );
  for (const { name, data } of files) {
    if (!SKIPPED.has(name)) {
      tar.addFile(name, data);
    }
  }
  return tar.finish();
}

/** The database files of archive `bytes`; `INVALID_ARGUMENT` if it is not one database's. */
export function archiveDatabaseFiles(bytes: Uint8Array): TarFile[] {
  const files = readTar(bytes).files.filter((file) => !SKIPPED.has(file.name));
  if (!files.some((file) => file.name === "CURRENT")) {
    throw new ShaleError("INVALID_ARGUMENT", "shaledb: the archive holds no database (no CURRENT file)");
  }
  return files;
}
