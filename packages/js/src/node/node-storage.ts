/**
 * The Node.js backend of the storage bridge ({@link StorageHost}): one database directory on
 * the local file system, through synchronous `fs` calls only.
 *
 * - Reads and writes are positional (`pread`/`pwrite` through `readSync`/`writeSync` with a
 *   position), so no file has a shared cursor. They address files by id: no path is built and no
 *   object allocated on the hot path.
 * - `sync` is `fdatasync`; on macOS that is not the `F_FULLFSYNC` native ShaleDB uses (Node has
 *   no way to ask for it), so there a power loss may lose what `sync` returned for.
 *   `syncAsync` is the same `fdatasync` in libuv's thread pool (`fs.fdatasync`), for the
 *   deferred WAL syncs of a server in the caller's thread (`../server/database-server.ts`).
 * - `syncDir` fsyncs the directory. A file system that cannot (the fsync fails with `EINVAL`,
 *   `EPERM`, ...) does not fail the call; it is recorded as `directorySync: "unsupported"`,
 *   which `db.stats()` reports.
 * - Locks: the core runs the lock-file protocol of native ShaleDB over `lockPrimitives`
 *   (`node-lock.ts`: hard links, small reads, `/proc`), which also release the lock files still
 *   held when the process exits or `releaseAll` is called.
 * - Errors are `Error`s with the errno `code` of the failed call (`ENOENT`, `EEXIST`, `ENOSPC`,
 *   ...), `EBADF` for an unknown id, `EINVAL` for a name that is not a plain file name or a
 *   negative offset; each message names the file.
 *
 * @module
 */
import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Dirent,
} from "node:fs";
import { join, resolve } from "node:path";

import { errorCode, fsError, NodeLockPrimitives, type LinkFn } from "./node-lock.js";
import { codedError, OpenMode, type CodedError, type StorageHost } from "../engine/storage-host.js";
import type { DirectorySync } from "../types.js";

/** `fs.openSync` flags for each {@link OpenMode}, indexed by its number. */
const OPEN_FLAGS: readonly string[] = ["r", "r+", "w+", "wx+"];

/** Ids are reused below this bound, so they stay small integers (an `i32` on the Rust side). */
const MAX_ID = 0x7fff_ffff;

/** Options of {@link NodeFsStorage}. */
export interface NodeFsStorageOptions {
  /** Create the directory (and its parents) if missing (default `true`). */
  readonly create?: boolean;
  /** Fsyncs an open directory (default `fs.fsyncSync`; tests inject failures here). */
  readonly fsyncDirectory?: (fd: number) => void;
  /** Hard-links a file (default `fs.linkSync`; tests fail it, as file systems without links do). */
  readonly link?: LinkFn;
  /**
   * The asynchronous `fdatasync` of {@link NodeFsStorage.syncAsync} (default `fs.fdatasync`;
   * tests count calls and inject failures here).
   */
  readonly fdatasync?: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;
}

/**
 * Errors of a directory fsync that mean "this file system cannot sync a directory" (not "the
 * sync failed"): `syncDir` carries on and reports `directorySync: "unsupported"`.
 */
const DIRECTORY_SYNC_UNSUPPORTED: ReadonlySet<string> = new Set([
  "EISDIR",
  "EPERM",
  "EINVAL",
  "ENOTSUP",
  "EOPNOTSUPP",
]);

interface OpenFile {
  readonly fd: number;
  readonly name: string;
}

/** A {@link StorageHost} on a directory of the local file system. */
export class NodeFsStorage implements StorageHost {
  /** The directory, as an absolute path. */
  readonly directory: string;
  /** The primitives of the lock-file protocol, on this directory. */
  readonly lockPrimitives: NodeLockPrimitives;
  readonly #files = new Map<number, OpenFile>();
  readonly #fsyncDirectory: (fd: number) => void;
  readonly #fdatasync: NonNullable<NodeFsStorageOptions["fdatasync"]>;
  #directorySync: DirectorySync = "ok";
  #lastId = 0;

  /**
   * Uses `directory`. With `create` (the default) it is created with its parents if missing;
   * without, a missing directory throws with code `ENOENT`. A path that is not a directory
   * throws with code `ENOTDIR`.
   */
  constructor(directory: string, options: NodeFsStorageOptions = {}) {
    this.directory = resolve(directory);
    this.#fsyncDirectory = options.fsyncDirectory ?? fsyncSync;
    this.#fdatasync = options.fdatasync ?? fdatasync;
    this.lockPrimitives = new NodeLockPrimitives((op, name) => this.#path(op, name), options.link);
    let isDirectory: boolean;
    try {
      if (options.create ?? true) {
        mkdirSync(this.directory, { recursive: true });
      }
      isDirectory = statSync(this.directory).isDirectory();
    } catch (error) {
      throw fsError("open directory", this.directory, error);
    }
    if (!isDirectory) {
      throw codedError("ENOTDIR", `${JSON.stringify(this.directory)} is not a directory`);
    }
  }

  open(name: string, mode: OpenMode): number {
    const flags = OPEN_FLAGS[mode];
    if (flags === undefined) {
      throw codedError("EINVAL", `open ${JSON.stringify(name)}: unknown open mode ${String(mode)}`);
    }
    const path = this.#path("open", name);
    let fd: number;
    try {
      fd = openSync(path, flags);
    } catch (error) {
      throw fsError("open", name, error);
    }
    const id = this.#nextId();
    this.#files.set(id, { fd, name });
    return id;
  }

  read(file: number, offset: number, buffer: Uint8Array): number {
    const { fd, name } = this.#file(file);
    if (offset < 0) {
      // -1 would read at the (meaningless) file cursor instead of failing.
      throw negativeOffset("read", name, offset);
    }
    const length = buffer.length;
    let done = 0;
    try {
      while (done < length) {
        const n = readSync(fd, buffer, done, length - done, offset + done);
        if (n === 0) {
          break;
        }
        done += n;
      }
    } catch (error) {
      throw fsError("read", name, error);
    }
    return done;
  }

  write(file: number, offset: number, data: Uint8Array): void {
    const { fd, name } = this.#file(file);
    if (offset < 0) {
      throw negativeOffset("write", name, offset);
    }
    const length = data.length;
    let done = 0;
    try {
      while (done < length) {
        const n = writeSync(fd, data, done, length - done, offset + done);
        if (n <= 0) {
          throw codedError("EIO", `wrote 0 of ${length - done} bytes at offset ${offset + done}`);
        }
        done += n;
      }
    } catch (error) {
      throw fsError("write", name, error);
    }
  }

  sync(file: number): void {
    const { fd, name } = this.#file(file);
    try {
      fdatasyncSync(fd);
    } catch (error) {
      throw fsError("sync", name, error);
    }
  }

  /**
   * {@link sync} off the calling thread: `fdatasync` in libuv's thread pool. Rejects as `sync`
   * throws (the errno `code`, a message naming the file). The id must stay open until it
   * settles (the core closes no file while its sync is under way).
   */
  syncAsync(file: number): Promise<void> {
    let open: OpenFile;
    try {
      open = this.#file(file);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const { fd, name } = open;
    return new Promise((resolve, reject) => {
      this.#fdatasync(fd, (error) => {
        if (error === null || error === undefined) {
          resolve();
        } else {
          reject(fsError("sync", name, error));
        }
      });
    });
  }

  /** Extends the file to `length` bytes with `ftruncate` (sparse) if it is shorter. */
  extend(file: number, length: number): boolean {
    const { fd, name } = this.#file(file);
    try {
      if (fstatSync(fd).size < length) {
        ftruncateSync(fd, length);
      }
    } catch (error) {
      throw fsError("extend", name, error);
    }
    return true;
  }

  size(file: number): number {
    const { fd, name } = this.#file(file);
    try {
      return fstatSync(fd).size;
    } catch (error) {
      throw fsError("size", name, error);
    }
  }

  truncate(file: number, length: number): void {
    const { fd, name } = this.#file(file);
    try {
      ftruncateSync(fd, length);
    } catch (error) {
      throw fsError("truncate", name, error);
    }
  }

  /** Forgets the id even if the OS reports an error closing it (the fd is gone either way). */
  close(file: number): void {
    const { fd, name } = this.#file(file);
    this.#files.delete(file);
    try {
      closeSync(fd);
    } catch (error) {
      throw fsError("close", name, error);
    }
  }

  /** Whether `name` exists; errors other than "missing" (e.g. `EACCES`) are thrown. */
  exists(name: string): boolean {
    const path = this.#path("exists", name);
    try {
      return statSync(path, { throwIfNoEntry: false }) !== undefined;
    } catch (error) {
      throw fsError("exists", name, error);
    }
  }

  remove(name: string): void {
    const path = this.#path("remove", name);
    try {
      unlinkSync(path);
    } catch (error) {
      throw fsError("remove", name, error);
    }
  }

  rename(from: string, to: string): void {
    const fromPath = this.#path("rename", from);
    const toPath = this.#path("rename", to);
    try {
      renameSync(fromPath, toPath);
    } catch (error) {
      throw fsError("rename", `${from} -> ${to}`, error);
    }
  }

  /**
   * Every entry of the directory that is not a directory, `LOCK` included, in no particular
   * order. Names that are not valid UTF-8 cannot have been written by ShaleDB and are skipped
   * (as native ShaleDB does).
   */
  list(): string[] {
    const names: string[] = [];
    try {
      // Bun (1.4) ignores `withFileTypes` with a buffer encoding and gives the names alone:
      // each is then looked up (a directory is skipped as a `Dirent` would say).
      const entries: readonly (Dirent<Buffer> | Buffer)[] = readdirSync(this.directory, {
        withFileTypes: true,
        encoding: "buffer",
      });
      for (const entry of entries) {
        const name = decodeName(entry instanceof Uint8Array ? entry : entry.name);
        if (name !== undefined && isFileEntry(this.directory, name, entry)) {
          names.push(name);
        }
      }
    } catch (error) {
      throw fsError("list", "", error);
    }
    return names;
  }

  /**
   * `"unsupported"` once a directory fsync was refused (see {@link syncDir}): creations and
   * renames may then not survive a power loss. `db.stats().directorySync` reports it.
   */
  get directorySync(): DirectorySync {
    return this.#directorySync;
  }

  /**
   * Fsyncs the directory. Skipped on Windows (a directory cannot be opened for it, and NTFS
   * journals directory changes). An fsync refused with `EISDIR`, `EPERM`, `EINVAL`, `ENOTSUP` or
   * `EOPNOTSUPP` (file systems that cannot sync a directory) does not fail the call: it is
   * recorded as {@link directorySync} `"unsupported"`. Other errors are thrown.
   */
  syncDir(): void {
    if (process.platform === "win32") {
      return;
    }
    let fd: number;
    try {
      fd = openSync(this.directory, "r");
    } catch (error) {
      throw fsError("sync_dir", "", error);
    }
    try {
      this.#fsyncDirectory(fd);
    } catch (error) {
      if (!DIRECTORY_SYNC_UNSUPPORTED.has(errorCode(error) ?? "")) {
        throw fsError("sync_dir", "", error);
      }
      this.#directorySync = "unsupported";
    } finally {
      try {
        closeSync(fd);
      } catch {
        // Read-only directory handle: nothing was pending on it.
      }
    }
  }

  releaseAll(): void {
    for (const { fd } of this.#files.values()) {
      try {
        closeSync(fd);
      } catch {
        // Best effort: the module that owned it is gone.
      }
    }
    this.#files.clear();
    this.lockPrimitives.releaseAll();
  }

  #file(id: number): OpenFile {
    const file = this.#files.get(id);
    if (file === undefined) {
      throw codedError("EBADF", `no open file with id ${id}`);
    }
    return file;
  }

  /** The path of `name`, after checking that it is a plain relative name. */
  #path(op: string, name: string): string {
    if (!isPlainName(name)) {
      throw codedError(
        "EINVAL",
        `${op} ${JSON.stringify(name)}: not a plain file name ` +
          `(no '/', '\\', ':', NUL or "..", not empty)`,
      );
    }
    return join(this.directory, name);
  }

  /** The next free id in 1..=MAX_ID (wrapping, skipping ids in use). */
  #nextId(): number {
    do {
      this.#lastId = this.#lastId >= MAX_ID ? 1 : this.#lastId + 1;
    } while (this.#files.has(this.#lastId));
    return this.#lastId;
  }
}

/** The names native ShaleDB accepts: never outside the directory, the same on every platform. */
function isPlainName(name: string): boolean {
  return !(
    name === "" ||
    name === "." ||
    name.includes("..") ||
    /[/\\:\0]/.test(name)
  );
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function decodeName(name: Uint8Array): string | undefined {
  try {
    return utf8.decode(name);
  } catch {
    return undefined;
  }
}

function negativeOffset(op: string, name: string, offset: number): CodedError {
  return codedError("EINVAL", `${op} ${JSON.stringify(name)}: negative offset ${offset}`);
}

/**
 * Whether listed entry `name` of `directory` is a file to report: not a directory, and — for a
 * name-only entry (Bun), looked up now — still there: a file another thread removed between the
 * listing and the lookup (a deletion job) is simply gone, not an error of the listing.
 */
export function isFileEntry(directory: string, name: string, entry: Dirent<Buffer> | Buffer): boolean {
  if (!(entry instanceof Uint8Array)) {
    return !entry.isDirectory();
  }
  const stats = lstatSync(join(directory, name), { throwIfNoEntry: false });
  return stats !== undefined && !stats.isDirectory();
}

