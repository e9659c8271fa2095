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
 *
 * @module
 */
import type { DirectorySync } from "./types.js";

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
   * Takes exclusive lock `name` (the lock-file protocol of docs/FORMAT.md, shared with native
   * ShaleDB) and returns its id; held elsewhere: throws with code `LOCKED`.
   */
  lock(name: string): number;
  /** Releases a lock taken by `lock`. */
  unlock(lock: number): void;
  /**
   * Closes every file and releases every lock still open (after a panic of the WebAssembly
   * module, whose handles will never be dropped). Idempotent.
   */
  releaseAll(): void;
}
