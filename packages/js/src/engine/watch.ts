/**
 * Watches on the engine: the change feed read from a position and filtered down to the writes
 * in one keyspace's ranges (`readWatched`), what both APIs' `watch()` deliver — the synchronous
 * API here in its thread ({@link localWatchSource}), the Promise API through its server's
 * `watchRead` (`../server/operations/change-ops.ts`). Only matching writes leave this module:
 * a write elsewhere wakes no watcher's caller.
 *
 * @module
 */
import { CHANGES_CHUNK, CHANGES_CHUNK_BYTES } from "../arguments/change-options.js";
import { keyInBounds, rangeMeetsBounds, type ByteBounds } from "../encoding/bounds.js";
import { decodeChanges } from "../encoding/changes.js";
import { CHANGE_DELETE, CHANGE_DELETE_RANGE, CHANGE_PUT } from "../encoding/wire.js";
import { ShaleError } from "../errors.js";
import type { Change } from "../types.js";
import { readChanges, sequence } from "./changes.js";
import type { DatabaseHandle } from "./database-handle.js";

/** What a watch looks for: writes to keyspace `keyspace` (by name) that meet one of `ranges`. */
export interface WatchSpec {
  keyspace: string;
  ranges: ByteBounds[];
  /** Whether puts carry their values. */
  values: boolean;
}

/**
 * A matching write, its kind as the change feed's (`CHANGE_*`): a put (value when asked), a
 * delete, or a range delete `[key, end)`.
 */
export type WireWatchOp =
  | [kind: typeof CHANGE_PUT, key: Uint8Array, value: Uint8Array | undefined]
  | [kind: typeof CHANGE_DELETE, key: Uint8Array, unused: undefined]
  | [kind: typeof CHANGE_DELETE_RANGE, start: Uint8Array, end: Uint8Array];

/** One read of a watch, as it crosses (structured-clonable; its bytes are copies). */
export interface WatchBatch {
  /** The first sequence number the next read looks at. */
  next: number;
  /** Commits from the position on could not be read (no longer kept): `ops` may miss writes. */
  overflow: boolean;
  /** The read stopped early (its budget) with commits left: read again at once. */
  more: boolean;
  ops: WireWatchOp[];
}

/** Chunks of the feed one read goes through before it returns (with `more`) to let others in. */
const CHUNKS_PER_READ = 4;

/** Whether a read found nothing to deliver (a waiting read then waits on). */
export function isEmptyWatchBatch(batch: WatchBatch): boolean {
  return batch.ops.length === 0 && !batch.overflow && !batch.more;
}

/** A chunk of the feed: its changes from `since`, read when the last commit was `sequence`. */
interface Chunk {
  since: number;
  sequence: number;
  changes: Change[];
}

/** The last chunk read for watches, per database: what the next watch at the same position reuses. */
const lastRead = new WeakMap<DatabaseHandle, Chunk>();

/**
 * A chunk of the feed from `since`: read, or — when the watch before read the same one and
 * nothing was committed since (several watches woken by one commit) — the same, decoded once.
 */
function chunkFrom(db: DatabaseHandle, since: number): Chunk {
  const now = sequence(db);
  const last = lastRead.get(db);
  if (last !== undefined && last.since === since && last.sequence === now) {
    return last;
  }
  const chunk = { since, sequence: now, changes: decodeChanges(readChanges(db, since, CHANGES_CHUNK, CHANGES_CHUNK_BYTES)) };
  lastRead.set(db, chunk);
  return chunk;
}

/**
 * The writes matching `spec` committed from `since` on (`0`: from the next commit), at most
 * about a feed chunk's bytes of them. Never waits.
 */
export function readWatched(db: DatabaseHandle, spec: WatchSpec, since: number): WatchBatch {
  let next = since === 0 ? sequence(db) + 1 : since;
  const ops: WireWatchOp[] = [];
  let bytes = 0;
  for (let read = 0; read < CHUNKS_PER_READ; read++) {
    let chunk;
    try {
      chunk = chunkFrom(db, next);
    } catch (error) {
      if (error instanceof ShaleError && error.code === "CHANGES_TRUNCATED") {
        return { next: sequence(db) + 1, overflow: true, more: false, ops };
      }
      throw error;
    }
    for (const change of chunk.changes) {
      for (const op of change.ops) {
        if (op.keyspace !== spec.keyspace) continue;
        if (op.type === "deleteRange") {
          if (spec.ranges.some((r) => rangeMeetsBounds(op.start, op.end, r))) {
            ops.push([CHANGE_DELETE_RANGE, op.start.slice(), op.end.slice()]);
            bytes += op.start.length + op.end.length;
          }
        } else if (spec.ranges.some((r) => keyInBounds(op.key, r))) {
          if (op.type === "put") {
            const value = spec.values ? op.value.slice() : undefined;
            ops.push([CHANGE_PUT, op.key.slice(), value]);
            bytes += op.key.length + (value?.length ?? 0);
          } else {
            ops.push([CHANGE_DELETE, op.key.slice(), undefined]);
            bytes += op.key.length;
          }
        }
      }
      next = change.lastSeq + 1;
      if (bytes >= CHANGES_CHUNK_BYTES) break;
    }
    // Done with something to deliver, or at what was committed when the chunk was read.
    if (ops.length > 0 || next > chunk.sequence) {
      return { next, overflow: false, more: false, ops };
    }
  }
  return { next, overflow: false, more: true, ops };
}

/** The reads of one watch (`undefined`: the watch ended: stopped, or its database closed). */
export interface WatchSource {
  /**
   * The matching writes from `since` on (`0`: from now). With `wait`, waits while there are
   * none (a waiting read may still end empty, after a long wait: read again from its `next`).
   */
  read(since: number, wait: boolean): Promise<WatchBatch | undefined>;
  /** Ends the watch: a read under way resolves `undefined`. Idempotent. */
  stop(): void;
}

/**
 * A watch of the synchronous API: reads in this thread, waiting for the database's commit
 * signal (after every write call of this thread, and at its close) between empty reads.
 */
export function localWatchSource(db: DatabaseHandle, spec: WatchSpec): WatchSource {
  let stopped = false;
  let wake: (() => void) | undefined;
  return {
    async read(since, wait) {
      let position = since;
      while (!stopped && !db.closed) {
        const batch = readWatched(db, spec, position);
        if (!wait || !isEmptyWatchBatch(batch)) return batch;
        position = batch.next;
        await new Promise<void>((resolve) => {
          const unlisten = db.commitSignals.listen("", () => {
            wake = undefined;
            unlisten();
            resolve();
          });
          wake = () => {
            unlisten();
            resolve();
          };
        });
      }
      return undefined;
    },
    stop() {
      stopped = true;
      wake?.();
      wake = undefined;
    },
  };
}
