/**
 * Explicit snapshots.
 *
 * @module
 */
import type { DatabaseHandle } from "./database-handle.js";
import { closedError, invalidArgument } from "../errors.js";
import { wasm } from "./instance.js";
import type { Snapshot } from "../types.js";

export class SnapshotImpl implements Snapshot {
  #closed = false;

  private constructor(
    readonly db: DatabaseHandle,
    readonly id: number,
  ) {}

  /** A snapshot of `db` now. */
  static open(db: DatabaseHandle): SnapshotImpl {
    const id = db.call(() => wasm.snapshotOpen(db.id));
    const snapshot = new SnapshotImpl(db, id);
    db.track("snapshot", id, snapshot);
    return snapshot;
  }

  get closed(): boolean {
    return this.#closed || this.db.closed;
  }

  close(): void {
    if (!this.#closed) {
      this.#closed = true;
      this.db.release("snapshot", this.id, this);
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** The snapshot id a read of `db` should use: 0 (latest) unless `options.snapshot` is given. */
export function snapshotId(db: DatabaseHandle, snapshot: unknown): number {
  if (snapshot === undefined) {
    return 0;
  }
  if (!(snapshot instanceof SnapshotImpl) || snapshot.db !== db) {
    throw invalidArgument("options.snapshot must be a snapshot of this database");
  }
  db.check();
  if (snapshot.closed) {
    throw closedError("the snapshot");
  }
  return snapshot.id;
}
