/**
 * The storage bridge: the object through which the Rust core (`crates/wasm/src/js_storage.rs`)
 * reads and writes the files of one database directory. Node implements it with `fs`
 * (`node-storage.ts`), browsers with OPFS.
 *
 * Contract (the core's `Storage` / `StorageFile` traits, see `crates/core/src/storage/mod.rs`):
 * - Files are named by plain relative names (`000123.sst`, `MANIFEST-000002`, `LOCK`); once
 *   opened they are addressed by a numeric id (cheaper than a string across the boundary).
 * - Every method is synchronous. Failures throw an `Error` whose `code` is a Node errno name
 *   (`ENOENT`, `EEXIST`, `ENOSPC`, ...) or `LOCKED`; the core maps `ENOENT` to `NOT_FOUND`,
 *   `EEXIST` to `ALREADY_EXISTS`, `LOCKED` to `LOCKED` and anything else to `IO`, keeping the
 *   message.
 * - `read` and `write` get views into WebAssembly memory, valid only during the call: never keep
 *   them.
 * - After `write` returns the bytes have reached the OS (they survive the process being killed);
 *   after `sync` they survive power loss; after `syncDir`, creations, renames and removals do.
 * - Locking, one of two ways: a host that excludes other handles itself (browsers: the worker
 *   holds the database's Web Lock) has `lock` and `unlock`; a host on a file system shared with
 *   other processes (Node) has `lockPrimitives` instead, and the core runs the lock-file
 *   protocol of docs/FORMAT.md over them (the same Rust code as native ShaleDB), so that
 *   processes exclude each other whatever runs them.
 *
 * @module
 */
import type { DirectorySync } from "../types.js";

/**
 * How `open` treats an existing or missing file (the numbers cross the boundary):
 * `Read` existing file, read only (missing: `ENOENT`); `ReadWrite` existing file (missing:
 * `ENOENT`); `Create` create, or truncate to zero if it exists; `CreateNew` create a new file
 * (exists: `EEXIST`).
 */
export const OpenMode = { Read: 0, ReadWrite: 1, Create: 2, CreateNew: 3 } as const;
export type OpenMode = (typeof OpenMode)[keyof typeof OpenMode];

export interface StorageHost {
  /** Opens `name` as `mode` says and returns its id. */
  open(name: string, mode: OpenMode): number;
  /** Reads up to `buffer.length` bytes at `offset`; fewer only at the end of the file. */
  read(file: number, offset: number, buffer: Uint8Array): number;
  /** Writes all of `data` at `offset`, extending the file if needed. */
  write(file: number, offset: number, data: Uint8Array): void;
  /** Flushes the file's data to stable storage (`fdatasync`). */
  sync(file: number): void;
  size(file: number): number;
  truncate(file: number, length: number): void;
  /**
   * Optional: makes the file at least `length` bytes long, the new bytes zeros (never
   * shorter; sparse where the file system makes it so), durable with the next `sync`; returns
   * whether it did. The core extends write-ahead logs ahead of their data through it, so that
   * a synced write does not change a file's size (whose `fdatasync` then commits no metadata).
   * A host without it (browsers: a file's whole size counts against the OPFS quota) writes
   * logs as they grow.
   */
  extend?(file: number, length: number): boolean;
  /** Closes the id (the core dropped its last handle). */
  close(file: number): void;
  exists(name: string): boolean;
  /** Removes `name`; missing: `ENOENT`. */
  remove(name: string): void;
  /** Renames atomically, replacing `to`. */
  rename(from: string, to: string): void;
  /** Every file name in the directory. */
  list(): string[];
  /** Makes creations, renames and removals durable (directory fsync where the OS has one). */
  syncDir(): void;
  /**
   * `"unsupported"` once `syncDir` found that the file system cannot sync a directory (and
   * carried on without); absent or `"ok"` otherwise. Reported by `stats()`.
   */
  readonly directorySync?: DirectorySync;
  /**
   * A host that excludes other handles itself: takes exclusive lock `name` and returns its id;
   * held elsewhere: throws with code `LOCKED`, the message saying by whom and what to do. Not
   * called when the host has {@link lockPrimitives}.
   */
  lock?(name: string): number;
  /** Releases a lock taken by `lock`. */
  unlock?(lock: number): void;
  /**
   * A host on a file system shared with other processes: the primitives the core's lock-file
   * protocol runs on (then `lock` and `unlock` are not needed).
   */
  readonly lockPrimitives?: LockPrimitives;
  /**
   * Closes every file and releases every lock still open (after a panic of the WebAssembly
   * module, whose handles will never be dropped). Idempotent.
   */
  releaseAll(): void;
}

/**
 * The primitives under the core's lock-file protocol (docs/FORMAT.md, "LOCK file";
 * `crates/core/src/storage/lock_primitives.rs`): single steps of the file system and the
 * process table, no decisions. Besides them the protocol uses the host's own `open`
 * (`CreateNew`), `write`, `close` and `remove`. Names are plain file names of the host's
 * directory; byte arrays passed in are views into WebAssembly memory, valid only during the
 * call. Errors are thrown as by the other host methods.
 */
export interface LockPrimitives {
  /**
   * Makes `name` a new hard link to the existing file `existing` (`link(2)`). Throws `EEXIST`
   * if `name` exists; any other error means the file system has no hard links (the protocol
   * then creates the file and writes it instead).
   */
  hardLink(existing: string, name: string): void;
  /**
   * The first `max` bytes of `name` (all of it if shorter) and the time since its last
   * modification, of the same open file. Missing: throws `ENOENT`.
   */
  readSmall(name: string, max: number): SmallFile;
  /**
   * Removes `name` if its first `limit` bytes (all of it if shorter) are exactly `bytes`;
   * returns whether it did (`false` if it holds something else or is missing). Also forgets
   * `name` if {@link lockHeld} recorded it with these bytes.
   */
  removeIfUnchanged(name: string, bytes: Uint8Array, limit: number): boolean;
  /**
   * The lock file `name` is now held, holding `bytes`, until the core releases it with
   * {@link removeIfUnchanged}. The host releases it so itself (`removeIfUnchanged`) in
   * `releaseAll`, and should the process exit first.
   */
  lockHeld(name: string, bytes: Uint8Array): void;
  /** This process's id. */
  processId(): number;
  /**
   * The status line of process `pid`, or of this process if `undefined`: on Linux the text of
   * `/proc/<pid>/stat` (`/proc/self/stat`); `null` if there is no such process; `undefined` if
   * the platform cannot tell (no `/proc`). Throws if the process exists but its status cannot
   * be read.
   */
  processStat(pid: number | undefined): string | null | undefined;
  /** The full path of `name`, for messages. */
  path(name: string): string;
  /**
   * The calling thread's id (Linux: its task id), written in the lock file so that a lock of
   * a thread stopped without closing (a worker thread's `terminate()`) can be told stale;
   * `undefined` where the platform cannot tell (locks are then the process's).
   */
  threadId?(): number | undefined;
  /** Whether thread `thread` of process `pid` still runs; `true` when it cannot tell. */
  threadAlive?(pid: number, thread: number): boolean;
}

/** What {@link LockPrimitives.readSmall} returns. */
export interface SmallFile {
  readonly bytes: Uint8Array;
  /** Milliseconds since the last modification (negative if it is in the future). */
  readonly ageMs: number;
}

/** An `Error` with a Node-style `code` (`ENOENT`, `LOCKED`, ...): the bridge's errors. */
export interface CodedError extends Error {
  code: string;
}

/** Builds a {@link CodedError}; `cause`, if given, is kept as the error's `cause`. */
export function codedError(code: string, message: string, cause?: unknown): CodedError {
  const error = (
    cause === undefined ? new Error(message) : new Error(message, { cause })
  ) as CodedError;
  error.code = code;
  return error;
}
