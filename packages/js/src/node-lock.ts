/**
 * The lock-file protocol (version 1) for Node.js, step for step the one of native ShaleDB
 * (`crates/core/src/storage/lock_file.rs`, docs/FORMAT.md "LOCK file"), so that a native process
 * and a Node.js process never hold one database directory at the same time. `fs` has no `flock`,
 * hence a lock *file*. To take lock `NAME`:
 *
 * 1. Create `NAME` exclusively (`openSync(path, "wx")`) and write exactly
 *    `shaledb-lock 1\npid <pid>\nstart <start>\n`, where `start` is field 22 of
 *    `/proc/self/stat` on Linux (counted after the last `)`) and `0` elsewhere.
 * 2. If it exists, read it (at most 4 KiB) and judge it: same pid and start as this process →
 *    held (a second open in one process conflicts); on Linux, `/proc/<pid>/stat` absent, a
 *    zombie (`Z`/`X`), or a recorded non-zero start that differs → stale; otherwise held.
 *    Without `/proc` the lock counts as held. Contents that do not parse are stale once the
 *    file's mtime is at least 5 s old, held before.
 * 3. Stale: re-read; if the bytes are unchanged, remove the file and go back to 1. After
 *    {@link LOCK_ATTEMPTS} rounds give up.
 * 4. Release: remove the file only if it still holds exactly our text.
 *
 * The limits are the native ones: two processes taking over the *same* stale lock at the same
 * instant can both win (a window of microseconds, only after a crash), and processes in
 * different PID namespaces must not share a directory.
 *
 * @module
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeSync,
} from "node:fs";

/** How old (by mtime, in milliseconds) an unparseable lock file must be to count as stale. */
export const GARBLED_LOCK_STALE_AFTER_MS = 5000;

/** How many create / take-over rounds {@link acquireLock} tries before reporting `LOCKED`. */
export const LOCK_ATTEMPTS = 8;

/** The largest part of a lock file read; anything longer is garbled anyway. */
const MAX_LOCK_FILE = 4096;

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

/** A held lock. */
export interface HeldLock {
  /** The lock file's path. */
  readonly path: string;
  /**
   * Removes the lock file if it still holds exactly the text we wrote (a lock taken over after
   * we were presumed dead belongs to its new owner). Idempotent; never throws.
   */
  release(): void;
}

/**
 * Locks this process holds. Where the liveness of a dead process cannot be checked (no /proc:
 * macOS, Windows), a lock left behind by a process that exited without releasing it would stay
 * held, so they are all released when the process exits.
 */
const heldLocks = new Set<LockFile>();
let exitHookInstalled = false;

function releaseAtExit(lock: LockFile): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const held of [...heldLocks]) {
        held.release();
      }
    });
  }
  heldLocks.add(lock);
}

class LockFile implements HeldLock {
  #released = false;

  /** `text`: the exact bytes we wrote into the file at `path`. */
  constructor(
    readonly path: string,
    private readonly text: Uint8Array,
  ) {
    releaseAtExit(this);
  }

  release(): void {
    if (this.#released) {
      return;
    }
    this.#released = true;
    heldLocks.delete(this);
    try {
      if (sameBytes(readLockFile(this.path).bytes, this.text)) {
        unlinkSync(this.path);
      }
    } catch {
      // Gone already, or unreadable: either way not ours to remove any more.
    }
  }
}

/**
 * Takes the lock file at `path` (called `name` in messages) by the protocol above. Throws a
 * {@link CodedError} with code `LOCKED` naming the holder when it is held, or with the errno code
 * of a failed `fs` call.
 */
export function acquireLock(path: string, name: string): HeldLock {
  const me = currentOwner();
  const text = new TextEncoder().encode(ownerText(me));
  for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
    if (createExclusive(path, name, text)) {
      return new LockFile(path, text);
    }
    let seen: SeenLock;
    try {
      seen = readLockFile(path);
    } catch (error) {
      if (errorCode(error) === "ENOENT") {
        continue; // released meanwhile: try to create it again
      }
      throw fsError("lock", name, error);
    }
    const holder = judge(seen, me, path);
    if (holder !== undefined) {
      throw lockedError(name, holder);
    }
    takeOver(path, name, seen);
  }
  throw lockedError(
    name,
    `other processes (it changed hands ${LOCK_ATTEMPTS} times meanwhile)`,
  );
}

/** Step 1: creates the lock file with `text`; `false` if it exists already. */
function createExclusive(path: string, name: string, text: Uint8Array): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx");
  } catch (error) {
    if (errorCode(error) === "EEXIST") {
      return false;
    }
    throw fsError("lock", name, error);
  }
  try {
    let done = 0;
    while (done < text.length) {
      done += writeSync(fd, text, done, text.length - done);
    }
  } catch (error) {
    closeQuietly(fd);
    try {
      unlinkSync(path);
    } catch {
      // Nothing more to undo; the write error is what matters.
    }
    throw fsError("lock", name, error);
  }
  closeQuietly(fd);
  return true;
}

/** Step 3: removes a stale lock file if it still holds what was judged. */
function takeOver(path: string, name: string, seen: SeenLock): void {
  try {
    if (sameBytes(readLockFile(path).bytes, seen.bytes)) {
      unlinkSync(path);
    }
  } catch (error) {
    if (errorCode(error) !== "ENOENT") {
      throw fsError("lock", name, error);
    }
  }
}

function lockedError(name: string, holder: string): CodedError {
  return codedError(
    "LOCKED",
    `${JSON.stringify(name)} is locked by ${holder}; close the other handle or process first`,
  );
}

/** Who holds a lock, as written in the lock file: pid (u32) and start time (u64). */
export interface Owner {
  readonly pid: number;
  readonly start: bigint;
}

let ownStart: bigint | undefined;

/** This process: its pid and (on Linux) its start time, else start `0`. */
export function currentOwner(): Owner {
  ownStart ??= ownStartTime() ?? 0n;
  return { pid: process.pid, start: ownStart };
}

/** The exact text of a lock file written by `owner`. */
export function ownerText(owner: Owner): string {
  return `shaledb-lock 1\npid ${owner.pid}\nstart ${owner.start}\n`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses a lock file's bytes; `undefined` if garbled. As the Rust parser: valid UTF-8, the first
 * line starts with `shaledb-lock `, a `pid ` line (u32) is required, a `start ` line (u64) is
 * optional (default 0), other lines are ignored. Values are trimmed as Rust's `str::trim` does,
 * which also takes care of `\r\n` line ends.
 */
export function parseOwner(bytes: Uint8Array): Owner | undefined {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  const [first = "", ...rest] = text.split("\n");
  if (!first.startsWith("shaledb-lock ")) {
    return undefined;
  }
  let pid: bigint | undefined;
  let start = 0n;
  for (const line of rest) {
    if (line.startsWith("pid ")) {
      pid = parseTrimmedUnsigned(line.slice(4), U32_MAX);
      if (pid === undefined) {
        return undefined;
      }
    } else if (line.startsWith("start ")) {
      const value = parseTrimmedUnsigned(line.slice(6), U64_MAX);
      if (value === undefined) {
        return undefined;
      }
      start = value;
    }
  }
  return pid === undefined ? undefined : { pid: Number(pid), start };
}

const U32_MAX = 0xffff_ffffn;
const U64_MAX = 0xffff_ffff_ffff_ffffn;

/** Rust's `char::is_whitespace` (Unicode White_Space), which `str::trim` strips. */
const RUST_WS =
  "[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const TRIMMED_UNSIGNED = new RegExp(`^${RUST_WS}*(\\+?[0-9]+)${RUST_WS}*$`, "u");
const UNSIGNED = /^\+?[0-9]+$/;

/** Rust's `text.trim().parse::<uN>()`: digits with an optional `+`, at most `max`. */
function parseTrimmedUnsigned(text: string, max: bigint): bigint | undefined {
  return parseUnsigned(TRIMMED_UNSIGNED.exec(text)?.[1] ?? "", max);
}

/** Rust's `text.parse::<uN>()`: digits with an optional `+`, at most `max`. */
function parseUnsigned(text: string, max: bigint): bigint | undefined {
  if (!UNSIGNED.test(text)) {
    return undefined;
  }
  const value = BigInt(text);
  return value <= max ? value : undefined;
}

/** A lock file's first 4 KiB and age in milliseconds (`undefined`: mtime in the future). */
interface SeenLock {
  readonly bytes: Uint8Array;
  readonly ageMs: number | undefined;
}

/** Reads a lock file; throws the `fs` error (`ENOENT` if it is gone). */
function readLockFile(path: string): SeenLock {
  const fd = openSync(path, "r");
  try {
    const age = Date.now() - fstatSync(fd).mtimeMs;
    const buffer = new Uint8Array(MAX_LOCK_FILE);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, MAX_LOCK_FILE - length, length);
      if (n === 0) {
        break;
      }
      length += n;
      if (length === MAX_LOCK_FILE) {
        break;
      }
    }
    return { bytes: buffer.subarray(0, length), ageMs: age >= 0 ? age : undefined };
  } finally {
    closeQuietly(fd);
  }
}

/** Step 2: the holder's description if the lock is held, `undefined` if it is stale. */
function judge(seen: SeenLock, me: Owner, path: string): string | undefined {
  const owner = parseOwner(seen.bytes);
  if (owner === undefined) {
    return seen.ageMs !== undefined && seen.ageMs >= GARBLED_LOCK_STALE_AFTER_MS
      ? undefined
      : "a process that is writing the lock file right now (its contents are incomplete)";
  }
  if (owner.pid === me.pid && owner.start === me.start) {
    return `pid ${owner.pid} (this process)`;
  }
  switch (liveness(owner)) {
    case "dead":
      return undefined;
    case "alive":
      return `pid ${owner.pid}`;
    case "unknown":
      return (
        `pid ${owner.pid} (whether it still runs cannot be checked on this platform; ` +
        `if no ShaleDB process is running, remove ${path})`
      );
  }
}

type Liveness = "alive" | "dead" | "unknown";

/** Whether the process that wrote `owner` still runs: only Linux (`/proc`) can tell. */
function liveness(owner: Owner): Liveness {
  if (process.platform !== "linux" || !existsSync("/proc/self/stat")) {
    return "unknown";
  }
  let stat: string;
  try {
    // Decoded strictly, as Rust's `read_to_string` does: a command name that is not UTF-8
    // makes the stat unreadable, which counts as alive there too.
    stat = utf8.decode(readFileSync(`/proc/${owner.pid}/stat`));
  } catch (error) {
    // It exists but cannot be read (another user's process): alive.
    return errorCode(error) === "ENOENT" ? "dead" : "alive";
  }
  const parsed = parseStat(stat);
  if (parsed === undefined) {
    return "alive";
  }
  if (parsed.state === "Z" || parsed.state === "X") {
    return "dead";
  }
  return owner.start !== 0n && parsed.start !== owner.start ? "dead" : "alive";
}

/** This process's start time, field 22 of `/proc/self/stat`; `undefined` off Linux. */
function ownStartTime(): bigint | undefined {
  if (process.platform !== "linux") {
    return undefined;
  }
  try {
    return parseStat(readFileSync("/proc/self/stat", "utf8"))?.start;
  } catch {
    return undefined;
  }
}

/**
 * Parses a `/proc/<pid>/stat` line into state (field 3) and start time (field 22). Field 2, the
 * command name, is parenthesised and may contain anything, so fields are counted after the last
 * `)`, split on ASCII whitespace.
 */
export function parseStat(stat: string): { state: string; start: bigint } | undefined {
  const close = stat.lastIndexOf(")");
  if (close < 0) {
    return undefined;
  }
  const fields = stat
    .slice(close + 1)
    .split(/[\t\n\f\r ]+/)
    .filter((field) => field !== "");
  const state = fields[0]?.[0];
  const start = parseUnsigned(fields[19] ?? "", U64_MAX);
  return state === undefined || start === undefined ? undefined : { state, start };
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
    // A close error on a lock file changes nothing (Rust ignores it on drop too).
  }
}
