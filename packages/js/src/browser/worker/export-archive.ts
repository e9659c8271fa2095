/**
 * `export()`: the database's files as a plain tar archive, read through the slot pool in one
 * request (so it is one consistent state).
 *
 * @module
 */
import type { OpfsPool } from "../opfs/opfs-pool.js";
import { encodeDatabaseName } from "../opfs/directories.js";
import { TarWriter } from "./tar/writer.js";

/** A tar archive of the files of `pool`, in a directory named after database `name`. */
export function exportArchive(pool: OpfsPool, name: string): Blob {
  // The archive's directory: the database's name where a tar name field (99 bytes) holds it.
  const encoded = encodeDatabaseName(name);
  const directory = encoded.length <= 99 ? encoded : "database";
  const tar = new TarWriter(directory, Math.floor(Date.now() / 1000));
  for (const { name: file } of pool.files()) {
    tar.addFile(file, pool.readAll(file));
  }
  return tar.finish();
}
