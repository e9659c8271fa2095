/**
 * Where databases live in the Origin Private File System: directory `shaledb/<encoded name>/`
 * of the origin's root, holding the database's slot files (docs/FORMAT.md, "OPFS slot files").
 *
 * @module
 */
import { describe } from "../../encoding/codec.js";
import { ShaleError, invalidArgument } from "../../errors.js";
import { requireStorageApis } from "../support.js";

const ROOT = "shaledb";
/** Longest encoded name (OPFS names may be longer; every file system takes 255 bytes). */
const MAX_ENCODED_NAME = 255;

/** The OPFS directory name of database `name`: percent-encoded, a leading `.` as `%2E`. */
export function encodeDatabaseName(name: string): string {
  return encodeURIComponent(name).replace(/^\./, "%2E");
}

/** The database name of OPFS directory `encoded`. */
export function decodeDatabaseName(encoded: string): string {
  return decodeURIComponent(encoded);
}

/** Checks a database name: a non-empty string whose encoded form fits a file name. */
export function checkDatabaseName(name: unknown): string {
  if (typeof name !== "string" || name === "") {
    throw invalidArgument(`a database name must be a non-empty string, got ${describe(name)}`);
  }
  if (encodeDatabaseName(name).length > MAX_ENCODED_NAME) {
    throw invalidArgument(`the database name is too long (its encoded form exceeds ${MAX_ENCODED_NAME} bytes)`);
  }
  return name;
}

function isNotFound(error: unknown): boolean {
  return error instanceof DOMException && (error.name === "NotFoundError" || error.name === "TypeMismatchError");
}

/** A ShaleError for an OPFS call that failed. */
export function opfsError(what: string, error: unknown): ShaleError {
  if (error instanceof ShaleError) {
    return error;
  }
  const name = error instanceof DOMException ? error.name : "";
  const message = error instanceof Error ? error.message : String(error);
  // The slot pool's errors carry the storage host's codes (storage-host.ts).
  const code = (error as { code?: unknown }).code;
  if (code === "LOCKED") {
    return new ShaleError("LOCKED", `shaledb: ${what}: ${message}`, { cause: error });
  }
  if (name === "QuotaExceededError" || code === "QUOTA") {
    return new ShaleError("QUOTA", `shaledb: ${what}: the storage quota is exhausted (${message})`, {
      cause: error,
    });
  }
  const hint =
    name === "SecurityError"
      ? " (this browser refuses the Origin Private File System here: a private window, or storage blocked for the site)"
      : "";
  return new ShaleError("IO", `shaledb: ${what}: ${name ? `${name}: ` : ""}${message}${hint}`, {
    cause: error,
  });
}

/** The `shaledb` directory of the origin's OPFS root; `undefined` if missing and `create` is false. */
async function rootDirectory(create: boolean): Promise<FileSystemDirectoryHandle | undefined> {
  requireStorageApis();
  try {
    const root = await navigator.storage.getDirectory();
    return await root.getDirectoryHandle(ROOT, { create });
  } catch (error) {
    if (!create && isNotFound(error)) {
      return undefined;
    }
    throw opfsError("cannot open the OPFS directory shaledb/", error);
  }
}

/** The directory of database `name`; missing and `create` false: `NOT_FOUND`. */
export async function databaseDirectory(
  name: string,
  create: boolean,
): Promise<FileSystemDirectoryHandle> {
  const notFound = (): ShaleError =>
    new ShaleError("NOT_FOUND", `shaledb: there is no database "${name}" (and createIfMissing is false)`);
  const root = await rootDirectory(create);
  if (root === undefined) {
    throw notFound();
  }
  try {
    return await root.getDirectoryHandle(encodeDatabaseName(name), { create });
  } catch (error) {
    if (!create && isNotFound(error)) {
      throw notFound();
    }
    throw opfsError(`cannot open the OPFS directory of database "${name}"`, error);
  }
}

/** The names of the databases of this origin (directories under `shaledb/`), sorted. */
export async function databaseNames(): Promise<string[]> {
  const root = await rootDirectory(false);
  if (root === undefined) {
    return [];
  }
  const names: string[] = [];
  for await (const [entry, handle] of root.entries()) {
    if (handle.kind === "directory" && !entry.startsWith(".")) {
      try {
        names.push(decodeDatabaseName(entry));
      } catch {
        // Not a name this module wrote: not a database.
      }
    }
  }
  return names.sort();
}

/** Removes the directory of database `name` and everything in it; a missing one is fine. */
export function removeDatabaseDirectory(name: string): Promise<void> {
  return removeEntry(encodeDatabaseName(name), `database "${name}"`);
}

async function removeEntry(entry: string, what: string): Promise<void> {
  const root = await rootDirectory(false);
  if (root === undefined) {
    return;
  }
  // A worker that just let go of the files may close its handles a moment later.
  for (let attempt = 0; ; attempt++) {
    try {
      await root.removeEntry(entry, { recursive: true });
      return;
    } catch (error) {
      if (isNotFound(error)) {
        return;
      }
      if (attempt >= 20 || !(error instanceof DOMException && error.name === "NoModificationAllowedError")) {
        throw opfsError(`cannot remove ${what}`, error);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
