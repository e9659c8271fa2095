/**
 * Requests of the change feed, change cursors and followers.
 *
 * @module
 */
import { changesReadArguments } from "../../arguments/change-options.js";
import { readChanges } from "../../engine/changes.js";
import { readOrWait } from "./waiting-read.js";
import { row } from "./row.js";
import { bytes, count, int, str } from "./wire-checks.js";

export const changeOps = {
  /**
   * Up to `limit` changes (about `maxBytes`) from `since` on, packed
   * (`../../encoding/changes.ts`), waiting up to `waitMs` for one when there is none yet (woken
   * after every write of the server); `waitId` names the wait for `queueCancelWait`.
   */
  changesRead: row({
    args: [count, count, count, count, count],
    run: (x, client, since, limit, maxBytes, waitMs, waitId) => {
      const db = x.db.db;
      const checked = changesReadArguments(since, limit, maxBytes);
      return readOrWait(x, client, {
        attempt: () => readChanges(db, checked.since, checked.limit, checked.maxBytes),
        waitMs,
        waitId,
        signals: db.commitSignals,
        name: "",
        nextWake: () => undefined,
      });
    },
  }),
  sequence: row({ args: [], run: (x) => x.db.sequence() }),
  /** A read-only database reads its writer's progress. */
  catchUp: row({ args: [], run: (x) => x.db.catchUp() }),
  ackChanges: row({
    args: [str, count],
    createsFiles: true,
    run: (x, _client, cursor, seq) => x.db.ackChanges(cursor, seq),
  }),
  /** Where the cursor stands (-1: no such cursor). */
  changeCursor: row({ args: [str], run: (x, _client, cursor) => x.db.changeCursor(cursor) ?? -1 }),
  removeChangeCursor: row({
    args: [str],
    createsFiles: true,
    run: (x, _client, cursor) => x.db.removeChangeCursor(cursor),
  }),
  /** Applies a change's bytes (`expected` -1: any start). */
  applyChange: row({
    args: [bytes, int],
    createsFiles: true,
    run: (x, _client, change, expected) =>
      x.db.applyChanges(change, expected < 0 ? undefined : { expectedSeq: expected }),
  }),
};
