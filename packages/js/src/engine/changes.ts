/**
 * The change feed, change cursors and a follower's apply on the engine (the synchronous API,
 * and what the Promise API's server calls). Reads never wait: the Promise API's
 * `changes({ follow: true })` waits on its server (`../server/queue-waits.ts`), woken by
 * {@link DatabaseHandle.commitSignals} after every write of this thread.
 *
 * @module
 */
import {
  applyChangeArguments,
  CHANGES_CHUNK,
  CHANGES_CHUNK_BYTES,
  changesOptions,
  cursorName,
  seqArgument,
} from "../arguments/change-options.js";
import { decodeChanges } from "../encoding/changes.js";
import type { Change, ApplyChangeResult } from "../types.js";
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./instance.js";
import { requirePart } from "./module-parts.js";

/**
 * Up to `limit` changes from `since` on (about `maxBytes` at most, at least one), packed
 * (`../encoding/changes.ts`); empty when none is newer yet.
 */
export function readChanges(db: DatabaseHandle, since: number, limit: number, maxBytes: number): Uint8Array {
  requirePart("changes");
  return db.call(() => wasm.dbChangesRead(db.id, since, limit, maxBytes));
}

/**
 * The changes committed so far from `options.since` on, read lazily in chunks (the synchronous
 * `changes()`). Bad options are `INVALID_ARGUMENT`, thrown here rather than at the first read.
 */
export function syncChanges(db: DatabaseHandle, options: unknown): Generator<Change, undefined, undefined> {
  const { since, limit } = changesOptions(options, false);
  db.check();
  return readAll(db, since, limit);
}

function* readAll(db: DatabaseHandle, since: number, limit: number): Generator<Change, undefined, undefined> {
  let next = since;
  let left = limit;
  while (left > 0) {
    const changes = decodeChanges(readChanges(db, next, Math.min(left, CHANGES_CHUNK), CHANGES_CHUNK_BYTES));
    if (changes.length === 0) {
      return undefined;
    }
    for (const change of changes) {
      next = change.lastSeq + 1;
      left -= 1;
      yield change;
    }
  }
  return undefined;
}

/** The sequence number of the last committed operation. */
export function sequence(db: DatabaseHandle): number {
  return db.call(() => wasm.dbSequence(db.id));
}

/** Moves change cursor `cursor` to `seq` (checked here). */
export function ackChanges(db: DatabaseHandle, cursor: unknown, seq: unknown): void {
  const name = cursorName(cursor);
  const checked = seqArgument(seq, "the sequence number");
  requirePart("changes");
  db.write(() => wasm.dbAckChanges(db.id, name, checked));
  db.afterWrite();
}

/** Where change cursor `cursor` stands. */
export function changeCursor(db: DatabaseHandle, cursor: unknown): number | undefined {
  const name = cursorName(cursor);
  requirePart("changes");
  const seq = db.call(() => wasm.dbChangeCursor(db.id, name));
  return seq < 0 ? undefined : seq;
}

/** Removes change cursor `cursor`. */
export function removeChangeCursor(db: DatabaseHandle, cursor: unknown): boolean {
  const name = cursorName(cursor);
  requirePart("changes");
  const removed = db.write(() => wasm.dbRemoveChangeCursor(db.id, name));
  db.afterWrite();
  return removed;
}

/** Applies a change (a `Change` or its bytes, checked here) to follower `db`. */
export function applyChanges(db: DatabaseHandle, change: unknown, options: unknown): ApplyChangeResult {
  const { bytes, expected } = applyChangeArguments(change, options);
  return applyChangeBytes(db, bytes, expected);
}

/** Applies the change encoded in `bytes` to follower `db` (`expected` -1: any). */
export function applyChangeBytes(db: DatabaseHandle, bytes: Uint8Array, expected: number): ApplyChangeResult {
  requirePart("changes");
  const [applied, lastSeq] = db.write(() => wasm.dbApplyChange(db.id, bytes, expected));
  db.afterWrite();
  return { applied: applied === 1, lastSeq: lastSeq ?? 0 };
}
