/**
 * Applying packed batch operations (`../encoding/packed-ops.ts`) to a database in one call.
 *
 * @module
 */
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./instance.js";
import type { PackedOps } from "../encoding/packed-ops.js";

/**
 * Applies `ops` to `db` atomically (none: checks that `db` is open). Returns the ids of its
 * queue pushes, in order (`[]` for a batch without).
 */
export function writePacked(db: DatabaseHandle, ops: PackedOps, sync: boolean): number[] {
  if (ops.count === 0) {
    db.check();
    return [];
  }
  if (ops.queueOps === 0) {
    writePackedBytes(db, ops.bytes(), sync);
    return [];
  }
  return writePackedIds(db, ops.bytes(), sync);
}

/**
 * Applies packed operations `bytes` with queue and topic operations to `db` atomically.
 * Returns the ids of the pushes and offsets of the appends, in order.
 */
export function writePackedIds(db: DatabaseHandle, bytes: Uint8Array, sync: boolean): number[] {
  const ids = db.write(() => wasm.dbWriteIds(db.id, bytes, sync));
  db.afterWrite();
  return Array.from(ids);
}

/** Applies packed operations `bytes` (possibly none) to `db` atomically. */
export function writePackedBytes(db: DatabaseHandle, bytes: Uint8Array, sync: boolean): void {
  db.write(() => wasm.dbWrite(db.id, bytes, sync));
  db.afterWrite();
}
