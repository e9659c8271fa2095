/**
 * Applying packed batch operations (`../encoding/packed-ops.ts`) to a database in one call.
 *
 * @module
 */
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./instance.js";
import { syncOption } from "../arguments/checks.js";
import type { PackedOps } from "../encoding/packed-ops.js";
import type { WriteOptions } from "./types.js";

/** Applies `ops` to `db` atomically (none: checks `options` and that `db` is open). */
export function writePacked(db: DatabaseHandle, ops: PackedOps, options?: WriteOptions): void {
  const sync = syncOption(options);
  if (ops.count === 0) {
    db.check();
    return;
  }
  writePackedBytes(db, ops.bytes(), sync);
}

/** Applies packed operations `bytes` (possibly none) to `db` atomically. */
export function writePackedBytes(db: DatabaseHandle, bytes: Uint8Array, sync: boolean): void {
  db.write(() => wasm.dbWrite(db.id, bytes, sync));
  db.afterWrite();
}
