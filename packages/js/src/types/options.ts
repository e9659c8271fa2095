/**
 * Options of opening a database, of writes, reads and iteration.
 *
 * @module
 */
import type { ChangeRetentionOptions } from "./changes.js";
import type { EncodingOptions, KeyEncoding, ValueEncoding } from "./encodings.js";
import type { Snapshot } from "./snapshot.js";

/** Options of `open` / `openSync`. Sizes are in bytes. */
export interface OpenOptions<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">
  extends EncodingOptions<KE, VE> {
  /** Create the database if the directory holds none (default `true`). */
  createIfMissing?: boolean;
  /** Fail with `ALREADY_EXISTS` if a database is already there (default `false`). */
  errorIfExists?: boolean;
  /** Writes collected in memory before they are flushed to a table (default 4 MiB). */
  memtableSize?: number;
  /** Block cache budget (default 16 MiB). */
  blockCacheSize?: number;
  /** Snappy-compress table blocks where it pays (default `true`). */
  compression?: boolean;
  /** Bloom filter bits per key (default 10; 0 disables filters). */
  bloomBitsPerKey?: number;
  /**
   * Run flush and compaction by themselves, in steps of a few milliseconds when the event loop
   * is idle (default `true`). With `false`, call `maintain()` yourself; writes still do one
   * bounded step inline when the debt grows past its bound.
   */
  autoMaintenance?: boolean;
  /**
   * Node's Promise API (`open`): where the engine runs. `"caller"` (the default): in the calling
   * thread, so an awaited call costs no thread hop; flush and compaction run as jobs in a
   * maintenance worker thread (started on the first job) with its own WebAssembly instance over
   * the same files, and only their installs (one manifest edit each) run on the event loop.
   * `"own"`: the whole engine in a worker thread of its own, so nothing the engine does runs on
   * the event loop (`compact()`, `count()` and long scans included), at the cost of a thread hop
   * per awaited call (requests made in one turn travel together). Ignored by `openSync` (always
   * the calling thread) and in browsers (always the database's worker).
   */
  engineThread?: "own" | "caller";
  /**
   * Open as a follower of another database (default `false`): every write fails with
   * `READ_ONLY` except `applyChanges`, which applies the leader's change feed with the leader's
   * sequence numbers. Reads, snapshots, checkpoints and its own change feed work as usual.
   */
  follower?: boolean;
  /**
   * Keep committed batches for the change feed after their flush, and stamp each with its
   * commit time (`Change.time`). Without it, batches go once flushed unless a change cursor
   * (`ackChanges`) holds them. `{}`: only cursors hold them, but batches carry their time.
   */
  changes?: ChangeRetentionOptions;
  /**
   * Open read-only (default `false`), as a *secondary* of the database's writer (another
   * process, or another thread of this one, may have it open): no lock is taken and nothing is
   * written; every write, flush, compaction and maintenance fails with `READ_ONLY`. Reads see
   * the database as it was at the open, then as it is at each `catchUp()` (and every
   * `catchUpIntervalMs`). A missing database is `NOT_FOUND` (`createIfMissing` does not apply).
   * Node.js only: in browsers it is `INVALID_ARGUMENT` (see `BrowserOpenOptions`).
   */
  readOnly?: boolean;
  /**
   * With `readOnly`: also catch up by itself every this many milliseconds (a timer, stopped by
   * `close()`, that does not keep the process alive). Default `0`: only on `catchUp()`.
   */
  catchUpIntervalMs?: number;
}

/** Options of one write. */
export interface WriteOptions {
  /**
   * `false` (default): when the call returns, the write has reached the operating system, so it
   * survives the process being killed. `true`: it has been flushed to stable storage
   * (`fdatasync`), so it survives power loss.
   */
  sync?: boolean;
}

/** Options of an array batch (`db.batch(operations, options)`). */
export interface BatchOptions extends WriteOptions {
  /**
   * Attached to the batch for the change feed (`Change.meta`): an idempotency key, the origin
   * of a replicated write. A string is stored UTF-8 encoded; at most 64 KiB.
   */
  meta?: string | Uint8Array;
}

/** A range of keys. Bounds combine (all must hold); key order is byte order. */
export interface RangeOptions<K> {
  gt?: K;
  gte?: K;
  lt?: K;
  lte?: K;
  /** Only keys starting with these bytes. */
  prefix?: K;
}

/** Options of a read: which snapshot it sees (default: the latest state). */
export interface ReadOptions {
  snapshot?: Snapshot;
}

/** Options of iteration. Iterators always see one consistent snapshot. */
export interface IteratorOptions<K> extends RangeOptions<K>, ReadOptions {
  /** From the last key backwards. */
  reverse?: boolean;
  /** At most this many entries. */
  limit?: number;
}
