/**
 * Requests on the database as a whole: maintenance, copies, figures, and the test hooks.
 *
 * @module
 */
import { row } from "./row.js";
import { errorCode, num, optionalBytes, str } from "./wire-checks.js";

export const databaseOps = {
  flush: row({ args: [], createsFiles: true, run: (x) => x.db.flush() }),
  compact: row({
    args: [optionalBytes, optionalBytes],
    createsFiles: true,
    run: (x, _client, start, end) => x.services.compact(start, end),
  }),
  maintain: row({ args: [num], createsFiles: true, run: (x, _client, budget) => x.db.maintain(budget) }),
  /** A consistent copy (the checkpoint flushes the memtable first); resolves with its sequence number. */
  checkpoint: row({
    args: [str],
    createsFiles: true,
    run: (x, _client, destination) => x.services.checkpoint(destination),
  }),
  /** The engine's figures (browsers add theirs: `BrowserStats`). */
  stats: row({ args: [], run: (x) => x.services.stats() }),
  /** A tar archive of a checkpoint of the database (`../../archive/export-database.ts`). */
  export: row({ args: [], createsFiles: true, run: (x) => x.services.exportArchive() }),
  /** Panics inside the WebAssembly module (tests of the panic path only). */
  debugPanic: row({ args: [str], run: (x, _client, message) => x.services.debugPanic(message) }),
  /**
   * Tests only: the owner carries out this client's next message of requests but does not send
   * its replies (as if the owner's tab went away right after committing).
   */
  debugLoseReplies: row({ args: [], run: (x, client) => x.services.debugLoseReplies(client) }),
  /** Tests only: the next merged write (a group of writes applied together) fails with `code`. */
  debugFailMergedWrite: row({
    args: [errorCode],
    run: (x, _client, code) => x.services.debugFailMergedWrite(code),
  }),
};

