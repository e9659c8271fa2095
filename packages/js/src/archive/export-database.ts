/**
 * `export()`, in Node.js and in browsers alike: a checkpoint of the open database (everything
 * acknowledged flushed into tables, an empty log; `crates/core/src/db/checkpoint.rs`) written
 * into JS memory, then archived. So an archive's log holds no writes, and damage anywhere in
 * it is refused at import like damage in a table.
 *
 * @module
 */
import { checkpointTo, type SyncDatabaseImpl } from "../engine/sync-database.js";
import { databaseArchive } from "./database-archive.js";
import { MemoryHost } from "./memory-host.js";

/** The archive of `db`, in a directory named `directory`: one consistent state. */
export function exportDatabase(db: SyncDatabaseImpl, directory: string): Blob {
  const copy = new MemoryHost();
  checkpointTo(db, copy);
  const files = [...copy.names]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, inode]) => ({ name, data: inode.bytes() }));
  return databaseArchive(directory, files);
}
