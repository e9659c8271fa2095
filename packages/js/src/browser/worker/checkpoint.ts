/**
 * `checkpoint()` in browsers: a consistent copy of the open database into a new database of the
 * origin, written through a slot pool of its own.
 *
 * @module
 */
import { checkpointTo, type SyncDatabaseImpl } from "../../engine/sync-database.js";
import { ShaleError } from "../../errors.js";
import { acquireLockSoon } from "../locks.js";
import { lockNames } from "../messages.js";
import type { OpfsPool } from "../opfs/opfs-pool.js";
import { checkDatabaseName, databaseDirectory, removeDatabaseDirectory } from "../opfs/directories.js";
import { SLOTS_KEPT, SLOTS_LOW, openPool } from "./slot-reserve.js";

/**
 * Writes a consistent copy of `db` (database `name`, whose files `pool` holds) into new database
 * `destination`, which must not exist (`ALREADY_EXISTS`) nor be open (`LOCKED`). A failure
 * removes what it created. Resolves with the sequence number the copy is consistent at.
 */
export async function checkpointInto(
  db: SyncDatabaseImpl,
  pool: OpfsPool,
  name: string,
  destination: string,
): Promise<number> {
  checkDatabaseName(destination);
  if (destination === name) {
    throw new ShaleError("ALREADY_EXISTS", `shaledb: cannot checkpoint database "${destination}" into itself`);
  }
  const release = await acquireLockSoon(lockNames.database(destination));
  if (release === undefined) {
    throw new ShaleError("LOCKED", `shaledb: database "${destination}" is open in this or another tab`);
  }
  let target: OpfsPool | undefined;
  let created = false;
  try {
    target = await openPool(await databaseDirectory(destination, true));
    if (target.list().length > 0) {
      throw new ShaleError("ALREADY_EXISTS", `shaledb: database "${destination}" already exists`);
    }
    created = true;
    await target.reserve(pool.usedSlots + SLOTS_LOW);
    const seq = checkpointTo(db, target);
    await target.trim(SLOTS_KEPT);
    return seq;
  } catch (error) {
    target?.releaseAll();
    target = undefined;
    if (created) {
      await removeDatabaseDirectory(destination).catch(() => undefined);
    }
    throw error;
  } finally {
    target?.releaseAll();
    release();
  }
}
