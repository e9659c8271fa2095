/**
 * Requests of the change feed, change cursors and followers.
 *
 * @module
 */
import { changesReadArguments } from "../../arguments/change-options.js";
import { rangeBounds } from "../../arguments/watch-options.js";
import { readChanges } from "../../engine/changes.js";
import { isEmptyWatchBatch, readWatched, type WatchBatch } from "../../engine/watch.js";
import { waitForItems } from "../queue-waits.js";
import { readOrWait } from "./waiting-read.js";
import { row } from "./row.js";
import { bool, boundsList, bytes, count, int, str } from "./wire-checks.js";

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
  /**
   * The writes to the client's keyspace `ks` matching `ranges` from `since` on (`0`: from now),
   * waiting up to `waitMs` for one (woken after every write of the server, answering only
   * when one matches); `waitId` names the wait for `queueCancelWait`.
   */
  watchRead: row({
    args: [count, boundsList, bool, count, count, count],
    run: (x, client, ks, ranges, values, since, waitMs, waitId) => {
      const db = x.db.db;
      const spec = { keyspace: x.store(client, ks).name, ranges: rangeBounds(ranges), values };
      let position = since;
      const attempt = (): WatchBatch => {
        const batch = readWatched(db, spec, position);
        position = batch.next;
        return batch;
      };
      const first = attempt();
      if (!isEmptyWatchBatch(first) || waitMs <= 0) {
        return first;
      }
      const target = { name: "", attempt, empty: isEmptyWatchBatch, nextWake: () => undefined };
      return waitForItems(target, first, waitMs, client, waitId, db.commitSignals, (job) => x.services.run(job));
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
