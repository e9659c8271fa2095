/**
 * Explicit snapshots of a `ShaleLevel` (`db.snapshot()`): a ShaleDB snapshot, taken when the
 * Level snapshot is made (ShaleDB's is asynchronous; reads with it wait for it).
 *
 * @module
 */
import { AbstractSnapshot } from "abstract-level";

import type { Snapshot } from "../types.js";
import { takeSnapshot, type ByteDatabase } from "./cursor.js";

// abstract-level's declarations omit the constructor (it takes `{ owner }`, the database).
const SnapshotBase = AbstractSnapshot as unknown as new (options: { owner: object }) => AbstractSnapshot;

export class ShaleLevelSnapshot extends SnapshotBase {
  /** The ShaleDB snapshot (rejects if it could not be taken: the first read with it fails). */
  readonly shale: Promise<Snapshot>;

  constructor(options: { owner: object }, store: ByteDatabase) {
    super(options);
    this.shale = takeSnapshot(store);
  }

  async _close(): Promise<void> {
    const snapshot = await this.shale.catch(() => undefined);
    snapshot?.close();
  }
}
