/**
 * Which slot pool of a database directory holds the database (docs/FORMAT.md, "Live pool
 * marker"). Every database starts in pool 0, the slot files directly in `shaledb/<name>/`. An
 * import writes the new files aside into pool `n` (the subdirectory `pool-<n>/`), checks them,
 * and then switches to it in one atomic step: it writes the marker file `POOL`
 * (`pool-marker.ts`) naming `n`. Without a marker, pool 0 is live.
 *
 * So an import interrupted at any point (the tab closed, the browser killed) leaves either the
 * old database or the new one, whole. What it leaves behind — a pool that never became live, or
 * the old pool after a switch — is removed by the next open or import ({@link openLivePool},
 * {@link removeLeftovers}).
 *
 * @module
 */
import { ShaleError } from "../../errors.js";
import { OpfsPool, opfsPoolDirectory, type OpfsPoolOptions, type PoolDirectory } from "./opfs-pool.js";
import { opfsError } from "./directories.js";
import { MARKER_SIZE, decodeMarker, markerWrites, type DecodedMarker } from "./pool-marker.js";
import { parseSlotFileName } from "./slot-header.js";

/** The marker file's name in a database directory. */
export const MARKER_FILE = "POOL";
/** How long to keep trying to open the slot files a previous owner may still be closing. */
const POOL_OPEN_PATIENCE_MS = 5000;

/** The directory name of pool `n` (n ≥ 1). */
export function poolDirectoryName(n: number): string {
  return `pool-${n}`;
}

/** The pool number of directory name `name`, if it is one. */
function parsePoolDirectoryName(name: string): number | undefined {
  const match = /^pool-([1-9][0-9]{0,15})$/.exec(name);
  return match === null ? undefined : Number(match[1]);
}

/** What a database directory holds, as far as pools go. */
export interface DirectoryState {
  /** The marker's content (all copies invalid, live 0, when there is none). */
  marker: DecodedMarker;
  /** The live pool's number. */
  live: number;
  /** Pool directories present, by number (the live one included, if not 0). */
  pools: number[];
  /** Names of the slot files directly in the directory (pool 0). */
  topSlots: string[];
  /** Names of every file directly in the directory. */
  topFiles: string[];
}

/** Async iteration of directory entries (not in TypeScript's DOM lib). */
interface IterableDirectoryHandle {
  entries(): AsyncIterable<[string, FileSystemHandle]>;
}

/** Reads the marker and lists the pools of database directory `dir`. */
export async function readDirectoryState(dir: FileSystemDirectoryHandle): Promise<DirectoryState> {
  const pools: number[] = [];
  const topFiles: string[] = [];
  let markerHandle: FileSystemFileHandle | undefined;
  try {
    for await (const [name, handle] of (dir as unknown as IterableDirectoryHandle).entries()) {
      if (handle.kind === "file") {
        topFiles.push(name);
        if (name === MARKER_FILE) markerHandle = handle as FileSystemFileHandle;
      } else {
        const n = parsePoolDirectoryName(name);
        if (n !== undefined) pools.push(n);
      }
    }
  } catch (error) {
    throw opfsError("cannot list the database's directory", error);
  }
  let marker: DecodedMarker = { copies: [undefined, undefined], live: 0 };
  if (markerHandle !== undefined) {
    try {
      const file = await markerHandle.getFile();
      marker = decodeMarker(new Uint8Array(await file.slice(0, MARKER_SIZE).arrayBuffer()));
    } catch (error) {
      throw opfsError(`cannot read the database's ${MARKER_FILE} file`, error);
    }
  }
  pools.sort((a, b) => a - b);
  const topSlots = topFiles.filter((name) => parseSlotFileName(name) !== undefined);
  return { marker, live: marker.live, pools, topSlots, topFiles };
}

/** The directory of pool `n` of `dir` (`dir` itself for pool 0); `create` makes a missing one. */
export async function poolDirectory(
  dir: FileSystemDirectoryHandle,
  n: number,
  create: boolean,
): Promise<FileSystemDirectoryHandle> {
  if (n === 0) {
    return dir;
  }
  try {
    return await dir.getDirectoryHandle(poolDirectoryName(n), { create });
  } catch (error) {
    if (!create && error instanceof DOMException && error.name === "NotFoundError") {
      throw new ShaleError(
        "CORRUPTION",
        `shaledb: the database's ${MARKER_FILE} file names pool ${n}, whose directory ${poolDirectoryName(n)}/ is missing`,
      );
    }
    throw opfsError(`cannot open the directory ${poolDirectoryName(n)}/`, error);
  }
}

/**
 * Removes what interrupted imports left in `dir` (state `state`): pools other than the live
 * one, and pool 0's slot files when another pool is live. Only while holding the database's
 * lock (no one else may have those files open). Best effort: what fails to go stays for the
 * next time.
 */
export async function removeLeftovers(dir: FileSystemDirectoryHandle, state: DirectoryState): Promise<void> {
  for (const n of state.pools) {
    if (n !== state.live) {
      await dir.removeEntry(poolDirectoryName(n), { recursive: true }).catch(() => undefined);
    }
  }
  if (state.live !== 0) {
    for (const name of state.topSlots) {
      await dir.removeEntry(name).catch(() => undefined);
    }
  }
}

/** Whether `dir` (state `state`) holds leftovers that {@link removeLeftovers} would remove. */
export function hasLeftovers(state: DirectoryState): boolean {
  return state.pools.some((n) => n !== state.live) || (state.live !== 0 && state.topSlots.length > 0);
}

/**
 * Makes pool `next` the live pool of `dir` (whose marker holds `current`): writes one copy of
 * the marker (both, the first time) and flushes it. This is the atomic switch: once the first
 * write is flushed, `next` is live; if it is cut short, the previous pool still is.
 */
export async function switchLivePool(
  dir: FileSystemDirectoryHandle,
  current: DecodedMarker,
  next: number,
): Promise<void> {
  const writes = markerWrites(current, next);
  let handle: SyncAccessHandle | undefined;
  try {
    const file = await dir.getFileHandle(MARKER_FILE, { create: true });
    handle = await (file as unknown as { createSyncAccessHandle(): Promise<SyncAccessHandle> }).createSyncAccessHandle();
    if (handle.getSize() < MARKER_SIZE) {
      handle.truncate(MARKER_SIZE);
    }
    for (const { at, bytes } of writes) {
      const written = handle.write(bytes, { at });
      if (written !== bytes.length) {
        throw new ShaleError("IO", `shaledb: short write of the ${MARKER_FILE} file (${written} of ${bytes.length} bytes)`);
      }
      handle.flush();
    }
  } catch (error) {
    throw opfsError(`cannot write the database's ${MARKER_FILE} file`, error);
  } finally {
    handle?.close();
  }
}

/** The part of `FileSystemSyncAccessHandle` used here (in workers' lib only). */
interface SyncAccessHandle {
  write(buffer: Uint8Array, options: { at: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

/**
 * Opens the live slot pool of database directory `dir`, first removing the leftovers of
 * interrupted imports (the caller holds the database's lock). While a previous owner still has
 * the files open, it retries for a few seconds, then fails with `LOCKED`.
 */
export async function openLivePool(dir: FileSystemDirectoryHandle, options: OpfsPoolOptions): Promise<OpfsPool> {
  const state = await readDirectoryState(dir);
  if (hasLeftovers(state)) {
    await removeLeftovers(dir, state);
  }
  const live = await poolDirectory(dir, state.live, false);
  // Pool 0's listing is known already: the pool does not list the directory again.
  const listed = state.live === 0 ? state.topFiles : undefined;
  const deadline = Date.now() + POOL_OPEN_PATIENCE_MS;
  for (;;) {
    try {
      return await OpfsPool.open(listedOnce(opfsPoolDirectory(live), listed), options);
    } catch (error) {
      const busy =
        error instanceof DOMException &&
        (error.name === "NoModificationAllowedError" || error.name === "InvalidStateError");
      if (!busy) {
        throw opfsError("cannot open the database's files", error);
      }
      if (Date.now() > deadline) {
        throw new ShaleError(
          "LOCKED",
          "shaledb: the database's files are still open elsewhere (another worker has access handles on them)",
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** `dir`, whose first `list()` answers `names` (when given) instead of listing again. */
function listedOnce(dir: PoolDirectory, names: string[] | undefined): PoolDirectory {
  if (names === undefined) {
    return dir;
  }
  let first: string[] | undefined = names;
  return {
    list: () => {
      const answer = first;
      first = undefined;
      return answer === undefined ? dir.list() : Promise.resolve(answer);
    },
    open: (name, create, createdSize) => dir.open(name, create, createdSize),
    remove: (name) => dir.remove(name),
  };
}
