/**
 * The lock file of Node.js, following the protocol of native ShaleDB
 * (`crates/core/src/storage/lock_file.rs`), so that a native process and a Node.js process never
 * hold one database directory at the same time. The text from "The lock-file protocol" to the
 * end of its limits is the same, byte for byte, there and in `docs/FORMAT.md` (a test compares
 * them).
 *
 * The lock-file protocol, version 1. The lock is a *lock file*, not `flock`/`fcntl`, so that
 * native ShaleDB and Node.js (whose `fs` has no `flock`) follow one protocol on one directory.
 * To take lock `NAME` in a directory:
 *
 * 1. Write, in UTF-8, exactly this text, each line ending in `\n`:
 *    ```text
 *    shaledb-lock 1
 *    pid <decimal process id>
 *    start <decimal process start time>
 *    ```
 *    into a new temporary file `NAME.<pid>.<16 random hex digits>.tmp` in the same directory
 *    (created exclusively; if the name exists, draw another). The start time tells a reused
 *    pid from the original process: on Linux it is field 22 of `/proc/self/stat` (`starttime`,
 *    clock ticks since boot; the command name in field 2 is parenthesised and may contain
 *    spaces, so count fields after the *last* `)`); elsewhere `0`.
 * 2. Hard-link the temporary file to `NAME` (`link(2)`; Rust `std::fs::hard_link`, Node
 *    `fs.linkSync`), then remove the temporary file, whatever the outcome. The link fails if
 *    `NAME` exists, so it is the exclusive create, and `NAME` appears with its whole text: no
 *    reader ever sees it empty or half written. Linked: the lock is held. `NAME` exists: go to
 *    step 3. The link failed otherwise (file systems without hard links fail with `EPERM`,
 *    `ENOTSUP`, `EOPNOTSUPP`, `EXDEV` or `ENOSYS`): fall back to creating `NAME` exclusively
 *    (`O_CREAT|O_EXCL`; Node `fs.openSync(path, "wx")`) and writing the text into it; created:
 *    the lock is held; `NAME` exists: go to step 3.
 * 3. Read `NAME` (at most 4 KiB) and parse it: the first line starts with `shaledb-lock `, a
 *    `pid` line is required, `start` defaults to `0`, unknown lines are ignored.
 *    - Same pid and start as the caller: held by this very process (a second open in one
 *      process conflicts): locked.
 *    - Linux: `/proc/<pid>/stat` is absent, or the process is a zombie (state `Z` or `X`), or
 *      the recorded start is not `0` and differs from the process's: the owner is gone, the
 *      lock is **stale**. Otherwise it is held: locked, naming the pid.
 *    - Where liveness cannot be checked (no `/proc`: macOS, Windows, ...) the lock counts as
 *      held, and the error says to remove the file by hand if no ShaleDB process runs.
 *    - Contents that do not parse are stale once the file's modification time is at least 5
 *      seconds old, and held before. Step 2 never shows a partial file, so only the fallback
 *      or an older version of ShaleDB (which created the file, then wrote it) leaves one, when
 *      killed or stalled between its create and its write; the 5 seconds let a stalled writer
 *      finish rather than have its live lock broken.
 * 4. To take over a stale lock: read `NAME` again; if its bytes are unchanged, remove it and go
 *    back to step 1. Give up (locked) after 8 rounds.
 * 5. To release: read `NAME`; remove it only if it still holds exactly the text written in
 *    step 1 (a lock taken over after its owner was presumed dead is not the owner's to remove).
 *
 * A temporary file left behind (its process was killed between steps 1 and 2) blocks nothing:
 * only `NAME` is judged. It may be removed by hand once no ShaleDB process uses the directory.
 *
 * Limits, shared by any implementation of this protocol without `flock`: two processes that
 * take over the *same* stale lock at the same instant can both succeed if one removes the file
 * between the other's re-read and remove (the window is microseconds, and only ever opens after
 * a crash); processes in different PID namespaces (containers) sharing one directory cannot
 * see each other's pids, so they must not share a database directory.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeSync,
} from "node:fs";

/**
 * How old (by mtime, in milliseconds) an unparseable lock file must be to count as stale (step 3:
 * only the fallback of step 2 or an older version leaves one).
 */
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

/** How the lock file is linked into place: `fs.linkSync` (tests fail it instead). */
export type LinkFn = (existingPath: string, newPath: string) => void;

/**
 * Takes the lock file at `path` (called `name` in messages) by the protocol above, linking with
 * `link`. Throws a {@link CodedError} with code `LOCKED` naming the holder when it is held, or
 * with the errno code of a failed `fs` call.
 */
export function acquireLock(path: string, name: string, link: LinkFn = linkSync): HeldLock {
  const me = currentOwner();
  const text = new TextEncoder().encode(ownerText(me));
  for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
    if (createComplete(path, name, text, me.pid, link)) {
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

/** Steps 1 and 2: makes `path` appear holding `text`; `false` if it exists already. */
function createComplete(path: string, name: string, text: Uint8Array, pid: number, link: LinkFn): boolean {
  const temp = writeTemporary(path, name, text, pid);
  let linkError: unknown;
  try {
    link(temp, path);
  } catch (error) {
    linkError = error;
  }
  // Whatever the outcome: a leftover would block nothing, but would clutter the directory.
  try {
    unlinkSync(temp);
  } catch {
    // Best effort, as above.
  }
  if (linkError === undefined) {
    return true;
  }
  if (errorCode(linkError) === "EEXIST") {
    return false;
  }
  // No hard links on this file system: create and write (the file is briefly empty).
  return createThenWrite(path, name, text);
}

/** Step 1: a new temporary file beside `path` holding `text`; returns its path. */
function writeTemporary(path: string, name: string, text: Uint8Array, pid: number): string {
  let clash: unknown;
  for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
    const temp = `${path}.${pid}.${randomBytes(8).toString("hex")}.tmp`;
    let fd: number;
    try {
      fd = openSync(temp, "wx");
    } catch (error) {
      if (errorCode(error) === "EEXIST") {
        clash = error;
        continue;
      }
      throw fsError("lock", name, error);
    }
    writeAllOrRemove(fd, temp, name, text);
    return temp;
  }
  throw fsError("lock", name, clash);
}

/** The fallback of step 2: creates `path` exclusively, then writes `text`; `false` if it exists. */
function createThenWrite(path: string, name: string, text: Uint8Array): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx");
  } catch (error) {
    if (errorCode(error) === "EEXIST") {
      return false;
    }
    throw fsError("lock", name, error);
  }
  writeAllOrRemove(fd, path, name, text);
  return true;
}

/** Writes all of `text` into the new file `fd` at `path` and closes it; on failure removes it. */
function writeAllOrRemove(fd: number, path: string, name: string, text: Uint8Array): void {
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
