/**
 * The change feed (`db.changes()`), change cursors and followers (`db.applyChanges()`), shared by both APIs.
 *
 * @module
 */
/**
 * One write of a change. `keyspace` is the keyspace's name (`"default"` for the default one;
 * names starting with `"\u0000"` are ShaleDB's own: queues, topics, applied-write records);
 * keys and values are the stored bytes, whatever the keyspace's encodings.
 */
export type ChangeOp =
  | { type: "put"; keyspace: string; key: Uint8Array; value: Uint8Array }
  | { type: "delete"; keyspace: string; key: Uint8Array }
  /** Deletes keys in `[start, end)`; an empty `end`: to the keyspace's end. */
  | { type: "deleteRange"; keyspace: string; start: Uint8Array; end: Uint8Array };

/** One committed batch (a write, a batch, a transaction, a queue or topic operation). */
export interface Change {
  /** The sequence number of its first operation. */
  seq: number;
  /** The sequence number of its last operation (the next change starts at `lastSeq + 1`). */
  lastSeq: number;
  /** When it was committed (ms since the epoch), if the writer's database was opened with `changes`. */
  time: number | null;
  /** What the writer attached (`batch(ops, { meta })`), if anything. */
  meta: Uint8Array | null;
  /** Its operations, in order (decoded on first read; an ordinary property after that). */
  ops: ChangeOp[];
  /** Its portable encoding: what a follower's `applyChanges` takes, e.g. over a network. */
  bytes: Uint8Array;
}

/** Options of the synchronous `db.changes()`. */
export interface ChangesOptions {
  /** The first sequence number wanted (default 1): changes starting at or after it. */
  since?: number;
  /** At most this many changes (a positive integer; default: no limit). */
  limit?: number;
}

/** Options of the Promise API's `db.changes()`. */
export interface ChangesFollowOptions extends ChangesOptions {
  /**
   * `false` (default): the iteration ends at the last change committed so far. `true`: it
   * then waits for newer changes (without polling) until `signal` aborts, the loop breaks, or
   * the database closes.
   */
  follow?: boolean;
  /** Ends the iteration when aborted. */
  signal?: AbortSignal;
}

/** Options of `db.applyChanges()`. */
export interface ApplyChangeOptions {
  /** Refuse (`CHANGE_GAP`) a change that does not start at this sequence number. */
  expectedSeq?: number;
}

/** What `db.applyChanges()` did. */
export interface ApplyChangeResult {
  /** `false`: the change was applied before (at or below the follower's sequence), and skipped. */
  applied: boolean;
  /**
   * The follower's sequence number after the call: the change's last when it was applied; when
   * it was skipped, the follower's own (at or past the change's last): where it stands, so the
   * next change it needs starts at `lastSeq + 1`.
   */
  lastSeq: number;
}

/** What `db.checkpoint()` made. */
export interface CheckpointResult {
  /**
   * The sequence number the copy is consistent at: a follower opened on it continues with
   * `changes({ since: seq + 1 })` of the original.
   */
  seq: number;
}

/** The `changes` open option: keep committed batches for the change feed after their flush. */
export interface ChangeRetentionOptions {
  /** Keep batches committed in the last this many ms. */
  retainMs?: number;
  /** Keep the newest logs up to this many bytes. */
  retainBytes?: number;
}
