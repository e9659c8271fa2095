/**
 * The error type of the whole API.
 *
 * @module
 */

/**
 * Stable error codes, shared with the Rust core (`shaledb::Error::code`). New codes may be added
 * in minor versions.
 * - `LOCKED`: another process (or another open in this one) has the database; close it first.
 * - `CORRUPTION`: a file is damaged; the message names the file and offset.
 * - `CLOSED`: the database, iterator, snapshot or transaction was closed.
 * - `INVALID_ARGUMENT`: a wrong type, an oversize key or value, a bad option.
 * - `CONFLICT`: a transaction's read was changed by another writer; retry it.
 * - `POISONED`: an earlier I/O failure stopped writes; close and reopen the database.
 * - `QUOTA`: out of space (disk full, or the browser's storage quota).
 * - `PANIC`: a bug inside the WebAssembly module; every handle of it is dead, open again.
 * - `NOT_INITIALIZED`: `init()` has not completed (browser).
 * - `QUEUE_FULL`: a push met a queue's `maxItems` or `maxBytes` limit (`whenFull: "reject"`);
 *   nothing was pushed.
 * - `UNKNOWN_RESERVATION`: an ack, release or extend named no open reservation: never made,
 *   already acked, or released by its holder (while the item waits to be delivered again).
 * - `LEASE_EXPIRED`: the reservation's lease ran out first, or the item has been delivered again
 *   since; it went back to the queue (or on to another consumer).
 * - `OFFSET_OUT_OF_RANGE`: a topic read or subscription asked for an offset below the first
 *   record the topic still holds (retention dropped it) or past the next one; `details.first`
 *   and `details.next` say where the log is now.
 * - `CHANGES_TRUNCATED`: `changes({ since })` asked for batches no longer kept (their logs went
 *   after their flush: keep them with a change cursor, `ackChanges`, or the `changes` open
 *   option); `details.oldest` is the first sequence number still kept.
 * - `CHANGE_GAP`: `applyChanges` was given a change that does not continue what the follower
 *   holds (or does not start at `expectedSeq`); nothing was written. `details.expected` is the
 *   sequence number the next change must start at, `details.got` the one it starts at.
 * - `READ_ONLY`: a write to a database opened with `follower: true` (only `applyChanges`
 *   writes) or `readOnly: true` (nothing writes).
 * - `BUSY` (JavaScript only): the write cannot run without waiting, and the synchronous API
 *   cannot wait: in a browser worker (`openInWorker`), the OPFS files a write may create must be
 *   made first, which takes an `await`. Nothing was written; `await db.ready()` and retry.
 * - `DECODE` (JavaScript only): a stored value does not decode with the keyspace's
 *   `valueEncoding` (a `"json"` read of bytes that are not JSON: written with another encoding,
 *   or by another program).
 * - `ENCODING_MISMATCH` (JavaScript only): a keyspace (or `open()`'s default keyspace) was
 *   opened with other encodings than those recorded for it in the database (the message names
 *   the keyspace, the recorded and the requested ones); its data is untouched. Open it with
 *   those, or with `"binary"` to read the stored bytes.
 * - `NOT_IN_MODULE` (JavaScript only): a queue, topic, change-feed or verify call on
 *   the key-value module (`module: "kv"` in browsers, or `init()` given `shaledb_kv_bg.wasm`),
 *   which leaves those out to be smaller. Nothing was done.
 */
export type ShaleErrorCode =
  | "IO"
  | "NOT_FOUND"
  | "ALREADY_EXISTS"
  | "LOCKED"
  | "CORRUPTION"
  | "VERSION_UNSUPPORTED"
  | "UNSUPPORTED_COMPRESSION"
  | "RECORD_TOO_LARGE"
  | "INVALID_ARGUMENT"
  | "CLOSED"
  | "CONFLICT"
  | "POISONED"
  | "QUOTA"
  | "PANIC"
  | "NOT_INITIALIZED"
  | "QUEUE_FULL"
  | "UNKNOWN_RESERVATION"
  | "LEASE_EXPIRED"
  | "OFFSET_OUT_OF_RANGE"
  | "CHANGES_TRUNCATED"
  | "CHANGE_GAP"
  | "READ_ONLY"
  | "BUSY"
  | "DECODE"
  | "ENCODING_MISMATCH"
  | "NOT_IN_MODULE";

/** Every error thrown by `shaledb`. Test `code`, not the message: codes are stable. */
export class ShaleError extends Error {
  /** The stable code of this error. */
  readonly code: ShaleErrorCode;
  /**
   * Figures about the failure, for the codes that have them (`OFFSET_OUT_OF_RANGE`: `first`,
   * `next`; `CHANGES_TRUNCATED`: `since`, `oldest`; `CHANGE_GAP`: `expected`, `got`);
   * `undefined` otherwise.
   */
  readonly details: Readonly<Record<string, number>> | undefined;

  constructor(
    code: ShaleErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Readonly<Record<string, number>> | undefined },
  ) {
    super(message, options);
    this.name = "ShaleError";
    this.code = code;
    this.details = options?.details;
  }
}

/** An `INVALID_ARGUMENT` error. */
export function invalidArgument(message: string): ShaleError {
  return new ShaleError("INVALID_ARGUMENT", `shaledb: ${message}`);
}

/** A `CLOSED` error for `what` (e.g. "the database"). */
export function closedError(what: string): ShaleError {
  return new ShaleError("CLOSED", `shaledb: ${what} is closed; open it again to use it`);
}
