/**
 * The errors of the OPFS slot pool (`opfs-pool.ts`), as the storage bridge wants them: `Error`s
 * with a string `code` that the Rust side maps (`../../engine/storage-host.ts`): `ENOENT`,
 * `EEXIST`, `LOCKED`, `QUOTA` (a `QuotaExceededError` or a short write), `EPOOL` (no free slot),
 * `EINVAL` (bad name, mode or offset), `EBADF` (unknown id, read-only id, or the pool was
 * released) and `EIO` (any other failure, naming the operation and the file); and the checks of
 * the arguments that raise some of them.
 *
 * @module
 */
import { codedError, type CodedError } from "../../engine/storage-host.js";
import { slotNameBytes } from "./slot-header.js";

/** An `Error` with the string `code` the Rust side maps (see `../../engine/storage-host.ts`). */
export type PoolError = CodedError;

/** A {@link PoolError}; `cause`, if given, is kept as its `cause`. */
export const poolError: (code: string, message: string, cause?: unknown) => PoolError = codedError;

function errorName(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "name" in error) {
    const { name } = error;
    return typeof name === "string" ? name : undefined;
  }
  return undefined;
}

function isPoolError(error: unknown): error is PoolError {
  return error instanceof Error && typeof (error as Partial<PoolError>).code === "string";
}

/**
 * A coded error for a failed OPFS call: `QUOTA` for a `QuotaExceededError`, `LOCKED` for a
 * `NoModificationAllowedError` (another worker or tab holds the file), our own coded errors
 * unchanged, `EIO` for anything else; the message names `op` and the file.
 */
export function ioError(op: string, label: string, error: unknown): PoolError {
  if (isPoolError(error)) {
    return error;
  }
  const name = errorName(error);
  const message =
    typeof error === "object" && error !== null && "message" in error
      ? String(error.message)
      : String(error);
  const detail = name === undefined ? message : `${name}: ${message}`;
  const what = label === "" ? op : `${op} ${JSON.stringify(label)}`;
  if (name === "QuotaExceededError") {
    return poolError(
      "QUOTA",
      `${what}: the browser's storage quota is exhausted (${detail})`,
      error,
    );
  }
  if (name === "NoModificationAllowedError") {
    return poolError(
      "LOCKED",
      `${what}: the file is open in another worker or tab (${detail})`,
      error,
    );
  }
  return poolError("EIO", `${what}: ${detail}`, error);
}

export function notFound(op: string, name: string): PoolError {
  return poolError("ENOENT", `${op} ${JSON.stringify(name)}: no such file`);
}

export function releasedError(what: string): PoolError {
  return poolError(
    "EBADF",
    `${what}: the OPFS pool was released (releaseAll); open the database again`,
  );
}

/**
 * The names native ShaleDB accepts (never outside the directory, the same on every platform),
 * at most 1024 UTF-8 bytes and well-formed.
 */
export function checkName(op: string, name: string): void {
  if (
    typeof name !== "string" ||
    name === "." ||
    name.includes("..") ||
    /[/\\:\0]/.test(name) ||
    slotNameBytes(name) === undefined
  ) {
    throw poolError(
      "EINVAL",
      `${op} ${JSON.stringify(name)}: not a plain file name (no '/', '\\', ':', NUL or "..", ` +
        "not empty, at most 1024 UTF-8 bytes)",
    );
  }
}

export function checkOffset(op: string, name: string, offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw poolError("EINVAL", `${op} ${JSON.stringify(name)}: bad offset or length ${offset}`);
  }
}

export function checkCount(what: string, count: number): void {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw poolError("EINVAL", `${what} must be a non-negative integer, got ${String(count)}`);
  }
}
