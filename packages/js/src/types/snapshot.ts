/**
 * Snapshots: a consistent view of the database at one moment, for reads and iterators.
 *
 * @module
 */

/** A consistent, read-only view of the database at one moment; pass it as `{ snapshot }`. */
export interface Snapshot extends Disposable {
  /** Releases it, so compaction may drop what only it saw. Idempotent. */
  close(): void;
  readonly closed: boolean;
}
