/**
 * `export()`: the database's files as a plain tar archive, read through the slot pool in one
 * request (so it is one consistent state).
 *
 * @module
 */
import type { OpfsPool } from "../opfs/opfs-pool.js";
import { encodeDatabaseName } from "../opfs/directories.js";
import { databaseArchive } from "../../archive/database-archive.js";

/** A tar archive of the files of `pool`, in a directory named after database `name`. */
export function exportArchive(pool: OpfsPool, name: string): Blob {
  // The archive's directory: the database's name where a tar name field (99 bytes) holds it.
  const files = [...pool.files()].map(({ name: file }) => ({ name: file, data: pool.readAll(file) }));
  return databaseArchive(encodeDatabaseName(name), files);
}
