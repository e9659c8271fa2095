/**
 * The Node.js side of the lock file: the primitives ({@link LockPrimitives}) over which the
 * core runs the lock-file protocol of docs/FORMAT.md ("LOCK file") — the same Rust code as
 * native ShaleDB, so a native process and a Node.js process never hold one database directory
 * at the same time. Each primitive is one `fs` or `/proc` step; the protocol's decisions are
 * all in `crates/core/src/storage/lock_file.rs`.
 *
 * Lock files the core holds are also released here if the process exits without closing the
 * database (where the liveness of a dead process cannot be checked, macOS and Windows, the lock
 * would otherwise stay held), and by `releaseAll` (after a panic of the WebAssembly module).
 *
 * @module
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  readlinkSync,
  readSync,
  unlinkSync,
} from "node:fs";

import { codedError, type CodedError, type LockPrimitives, type SmallFile } from "../engine/storage-host.js";

/**
 * Wraps the error of a failed `fs` call in a {@link CodedError} whose message names the op and the
 * file (`read "000123.sst": EIO: ...`), keeping the errno `code` (`EIO` if it has none).
 */
export function fsError(op: string, name: string, cause: unknown): CodedError {
  const code = errorCode(cause) ?? "EIO";
  const detail = cause instanceof Error ? cause.message : String(cause);
  return codedError(code, `${op} ${JSON.stringify(name)}: ${detail}`, cause);
}

/** The `code` property of a thrown value, if it has a string one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const { code } = error;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

/** How a file is hard-linked: `fs.linkSync` (tests fail it instead). */
export type LinkFn = (existingPath: string, newPath: string) => void;

/** A lock file held by the core: its path and the exact bytes it was written with. */
interface HeldFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** Every lock file held in this process, released at exit. */
const heldAtExit = new Set<HeldFile>();
let exitHookInstalled = false;

function releaseAtExit(held: HeldFile): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const file of [...heldAtExit]) {
        release(file);
      }
    });
  }
  heldAtExit.add(held);
}

/** Releases a held lock file (if still ours) and forgets it. Never throws. */
function release(held: HeldFile): void {
  heldAtExit.delete(held);
  try {
    removeIfUnchangedAt(held.path, held.bytes, held.bytes.length + 1);
  } catch {
    // Unreadable or not removable: nothing more to do on the way out.
  }
}

/**
 * The {@link LockPrimitives} of one directory, through `fs` and Linux's `/proc`. `pathOf(op,
 * name)` gives the path of a plain file name (throwing `EINVAL` for any other name).
 */
export class NodeLockPrimitives implements LockPrimitives {
  /** The lock files held through these primitives (also in {@link heldAtExit}). */
  readonly #held = new Set<HeldFile>();
  readonly #pathOf: (op: string, name: string) => string;
  readonly #link: LinkFn;

  constructor(pathOf: (op: string, name: string) => string, link: LinkFn = linkSync) {
    this.#pathOf = pathOf;
    this.#link = link;
  }

  hardLink(existing: string, name: string): void {
    const from = this.#pathOf("link", existing);
    const to = this.#pathOf("link", name);
    try {
      this.#link(from, to);
    } catch (error) {
      throw fsError("link", name, error);
    }
  }

  readSmall(name: string, max: number): SmallFile {
    const path = this.#pathOf("read", name);
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (error) {
      throw fsError("read", name, error);
    }
    try {
      const ageMs = Date.now() - fstatSync(fd).mtimeMs;
      return { bytes: readPrefix(fd, max), ageMs };
    } catch (error) {
      throw fsError("read", name, error);
    } finally {
      closeQuietly(fd);
    }
  }

  removeIfUnchanged(name: string, bytes: Uint8Array, limit: number): boolean {
    const path = this.#pathOf("remove", name);
    for (const held of this.#held) {
      if (held.path === path && sameBytes(held.bytes, bytes)) {
        this.#held.delete(held);
        heldAtExit.delete(held);
      }
    }
    try {
      return removeIfUnchangedAt(path, bytes, limit);
    } catch (error) {
      throw fsError("remove", name, error);
    }
  }

  lockHeld(name: string, bytes: Uint8Array): void {
    // `bytes` is a view into WebAssembly memory: keep a copy.
    const held: HeldFile = { path: this.#pathOf("lock", name), bytes: bytes.slice() };
    this.#held.add(held);
    releaseAtExit(held);
  }

  processId(): number {
    return process.pid;
  }

  processStat(pid: number | undefined): string | null | undefined {
    if (process.platform !== "linux" || !existsSync("/proc/self/stat")) {
      return undefined;
    }
    const path = `/proc/${pid ?? "self"}/stat`;
    try {
      // Decoded leniently, as native ShaleDB does: the fields after the command name are ASCII.
      return readFileSync(path, "utf8");
    } catch (error) {
      if (errorCode(error) === "ENOENT") {
        return null;
      }
      throw fsError("read", path, error);
    }
  }

  path(name: string): string {
    return this.#pathOf("lock", name);
  }

  threadId(): number | undefined {
    return ownThreadId();
  }

  threadAlive(pid: number, thread: number): boolean {
    if (ownThreadId() === undefined) {
      return true;
    }
    try {
      return existsSync(`/proc/${pid}/task/${thread}`);
    } catch {
      return true;
    }
  }

  /** Releases every lock file held through these primitives (if still ours). Never throws. */
  releaseAll(): void {
    for (const held of this.#held) {
      release(held);
    }
    this.#held.clear();
  }
}

/** This thread's Linux task id (`/proc/thread-self` links to `<pid>/task/<tid>`), once. */
let threadIdMemo: number | null | undefined;

function ownThreadId(): number | undefined {
  if (process.platform !== "linux") {
    return undefined;
  }
  if (threadIdMemo === undefined) {
    threadIdMemo = null;
    try {
      const tid = Number(/\/task\/(\d+)$/u.exec(readlinkSync("/proc/thread-self"))?.[1]);
      threadIdMemo = Number.isSafeInteger(tid) && tid > 0 ? tid : null;
    } catch {
      // No /proc here: locks stay the process's.
    }
  }
  return threadIdMemo ?? undefined;
}

/**
 * Removes the file at `path` if its first `limit` bytes (all of it if shorter) are exactly
 * `bytes`; `false` if not, or if it is missing. Throws other `fs` errors.
 */
function removeIfUnchangedAt(path: string, bytes: Uint8Array, limit: number): boolean {
  let seen: Uint8Array;
  try {
    const fd = openSync(path, "r");
    try {
      seen = readPrefix(fd, limit);
    } finally {
      closeQuietly(fd);
    }
  } catch (error) {
    if (errorCode(error) === "ENOENT") {
      return false;
    }
    throw error;
  }
  if (!sameBytes(seen, bytes)) {
    return false;
  }
  try {
    unlinkSync(path);
    return true;
  } catch (error) {
    if (errorCode(error) === "ENOENT") {
      return false;
    }
    throw error;
  }
}

/** The first `max` bytes of the open file `fd` (all of it if shorter). */
function readPrefix(fd: number, max: number): Uint8Array {
  const buffer = new Uint8Array(max);
  let length = 0;
  while (length < max) {
    const n = readSync(fd, buffer, length, max - length, length);
    if (n === 0) {
      break;
    }
    length += n;
  }
  return buffer.subarray(0, length);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) {
    return false;
  }
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) {
      return false;
    }
  }
  return true;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // A close error on a file only read changes nothing.
  }
}
