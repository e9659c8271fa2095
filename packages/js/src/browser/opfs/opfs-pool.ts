/**
 * The browser backend of the storage bridge ({@link StorageHost}): one database directory in the
 * Origin Private File System, kept as a pool of pre-created slot files (the design of SQLite's
 * `opfs-sahpool` VFS; byte layout in docs/FORMAT.md, "OPFS slot files").
 *
 * Opening an OPFS file is asynchronous and OPFS has no synchronous rename, but the engine's
 * calls are synchronous. So every `slot-NNNNNN.shs` file of the directory stays open as a
 * `FileSystemSyncAccessHandle`; its first 4096 bytes (`slot-header.ts`) say which engine file it
 * holds, and that file's bytes follow. Creating a file takes a free slot and writes its header,
 * renaming rewrites headers, removing marks the slot free. New slots are made asynchronously,
 * between requests ({@link OpfsPool.reserve}); a create that finds no free slot fails with code
 * `EPOOL`.
 *
 * Crash safety. Header writes are not flushed until `syncDir` (or `sync` of that file), so:
 * - A header write never overwrites the copy holding the slot's last flushed state: a torn or
 *   lost write falls back to that state, never to an older one.
 * - `rename(from, to)` writes `to` into `from`'s slot with a newer generation and leaves the old
 *   `to` slot's header as it is (on reload the newer claim wins); that slot's header is marked
 *   free by the next `syncDir`, after the new claim was flushed (or as soon as the new claim goes
 *   away, by a remove or another rename). A crash therefore shows `to` either old or new, never
 *   missing.
 * - A slot that lost its file (removed or replaced) is reused only once its free header has been
 *   flushed: until then a crash may bring the old file back, and its bytes must be intact. Such
 *   slots wait for the next `syncDir` (which a create that finds no free slot runs itself).
 * - A file removed or replaced while open stays readable and writable through its open ids (as
 *   on POSIX); its slot is truncated and freed after the last id closes.
 *
 * Errors thrown by the {@link StorageHost} methods are always `Error`s with a string `code`
 * (`pool-errors.ts`). This module is the host API and the pool's growth; the slots' life is
 * `slot-table.ts`, a slot's I/O `slot.ts`, its header `slot-header.ts`, locks `pool-locks.ts`.
 *
 * @module
 */
import { OpenMode } from "../../engine/storage-host.js";
import type { StorageHost } from "../../engine/storage-host.js";
import type { PoolDirectory } from "./pool-directory.js";
import {
  checkCount,
  checkName,
  checkOffset,
  ioError,
  notFound,
  poolError,
  releasedError,
} from "./pool-errors.js";
import { PoolLocks } from "./pool-locks.js";
import { type Slot, closeAll, openSlots, readSlot, slotSize, truncateSlot, writeSlot } from "./slot.js";
import { SLOT_HEADER_SIZE, parseSlotFileName } from "./slot-header.js";
import { SlotTable } from "./slot-table.js";

export { opfsPoolDirectory, type PoolDirectory, type SyncAccessHandleLike } from "./pool-directory.js";
export type { PoolError } from "./pool-errors.js";

/** Options of {@link OpfsPool.open}. */
export interface OpfsPoolOptions {
  /** Free slots to have ready when `open` resolves (default 4). */
  readonly minFree?: number;
}

/** A named file of the pool and its size in bytes. */
export interface PoolFile {
  readonly name: string;
  readonly size: number;
}

/** Default of {@link OpfsPoolOptions.minFree}. */
const DEFAULT_MIN_FREE = 4;
/** Ids are `u32` on the Rust side. */
const MAX_ID = 0xffff_ffff;

interface OpenFile {
  readonly slot: Slot;
  /** The name the id was opened under (for messages once the file is renamed or removed). */
  readonly name: string;
  readonly writable: boolean;
}

/** A {@link StorageHost} on a pool of OPFS slot files; see the module notes. */
export class OpfsPool implements StorageHost {
  readonly #dir: PoolDirectory;
  readonly #table: SlotTable;
  readonly #files = new Map<number, OpenFile>();
  readonly #locks = new PoolLocks();
  #lastId = 0;
  #closed = false;
  /** Serializes `reserve` and `trim`. */
  #queue: Promise<void> = Promise.resolve();

  private constructor(dir: PoolDirectory, slots: readonly Slot[]) {
    this.#dir = dir;
    this.#table = new SlotTable(slots);
  }

  /**
   * Opens the pool in `dir`: opens every `slot-NNNNNN.shs` file at once (other names are
   * ignored), reads the headers, frees the older of two slots claiming one name, and creates
   * slots until `minFree` are free. On failure it closes whatever it opened and rejects: with
   * the error `dir.list` or `dir.open` threw, unchanged, when listing or opening an existing slot
   * file fails (in OPFS a `DOMException` named `NoModificationAllowedError` or
   * `InvalidStateError` while another worker still holds the files: worth a retry); with a coded
   * error (`QUOTA`, `EIO`, ...) when reading the headers or creating slots fails.
   */
  static async open(dir: PoolDirectory, options: OpfsPoolOptions = {}): Promise<OpfsPool> {
    const minFree = options.minFree ?? DEFAULT_MIN_FREE;
    checkCount("minFree", minFree);
    const names = await dir.list();
    const indices = names.map(parseSlotFileName).filter((i): i is number => i !== undefined);
    const { slots, failure } = await openSlots(dir, indices, false);
    if (slots.length < indices.length) {
      closeAll(slots);
      throw failure;
    }
    const pool = new OpfsPool(dir, slots);
    try {
      pool.#table.load();
      await pool.reserve(minFree);
    } catch (error) {
      pool.releaseAll();
      throw error;
    }
    return pool;
  }

  /** Slots ready for a new file. */
  get freeSlots(): number {
    return this.#table.free.length;
  }

  /**
   * Slots not free: holding a file, still open after their file was removed or replaced, or
   * waiting for the next `syncDir` before they can be reused.
   */
  get usedSlots(): number {
    return this.#table.slots.size - this.#table.free.length;
  }

  /**
   * Creates slot files (at once) until at least `free` slots are free; their numbers continue
   * after the highest so far. Runs `syncDir` first if slots await it. Rejects with a coded
   * error (`QUOTA`, `EIO`, ...) keeping the slots it did create.
   */
  async reserve(free: number): Promise<void> {
    checkCount("free", free);
    return this.#serialize(async () => {
      this.#check("reserve");
      if (this.#table.free.length < free && this.#table.hasReclaimable()) {
        this.syncDir();
      }
      const missing = free - this.#table.free.length;
      if (missing <= 0) {
        return;
      }
      const indices = this.#table.newIndices(missing);
      const { slots, failure } = await openSlots(this.#dir, indices, true);
      if (this.#closed) {
        closeAll(slots);
        throw releasedError("reserve");
      }
      this.#table.addFree(slots);
      if (slots.length < indices.length) {
        throw ioError("create", "a slot file", failure);
      }
    });
  }

  /** Closes and deletes free slots beyond `maxFree`, highest numbers first. */
  async trim(maxFree: number): Promise<void> {
    checkCount("maxFree", maxFree);
    return this.#serialize(async () => {
      this.#check("trim");
      const victims = this.#table.takeExtraFree(maxFree);
      closeAll(victims);
      const results = await Promise.allSettled(
        victims.map((slot) =>
          this.#dir.remove(slot.fileName).catch((error: unknown) => {
            throw ioError("remove", slot.fileName, error);
          }),
        ),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed !== undefined) {
        // The file stays, closed: the next open finds it free again.
        throw failed.reason;
      }
    });
  }

  // ---- StorageHost ----

  open(name: string, mode: OpenMode): number {
    this.#check("open", name);
    checkName("open", name);
    let slot = this.#table.named.get(name);
    switch (mode) {
      case OpenMode.Read:
      case OpenMode.ReadWrite:
        if (slot === undefined) {
          throw notFound("open", name);
        }
        break;
      case OpenMode.Create:
        if (slot === undefined) {
          slot = this.#table.createFile(name);
        } else {
          truncateSlot(slot, SLOT_HEADER_SIZE, "open", name);
        }
        break;
      case OpenMode.CreateNew:
        if (slot !== undefined) {
          throw poolError("EEXIST", `open ${JSON.stringify(name)}: the file already exists`);
        }
        slot = this.#table.createFile(name);
        break;
      default:
        throw poolError(
          "EINVAL",
          `open ${JSON.stringify(name)}: unknown open mode ${String(mode)}`,
        );
    }
    const id = this.#nextId();
    this.#files.set(id, { slot, name, writable: mode !== OpenMode.Read });
    slot.opens++;
    return id;
  }

  read(file: number, offset: number, buffer: Uint8Array): number {
    const { slot, name } = this.#file(file, "read");
    checkOffset("read", name, offset);
    return readSlot(slot, buffer, SLOT_HEADER_SIZE + offset, name);
  }

  write(file: number, offset: number, data: Uint8Array): void {
    const { slot, name } = this.#writableFile(file, "write");
    checkOffset("write", name, offset);
    if (data.length > 0) {
      writeSlot(slot, data, SLOT_HEADER_SIZE + offset, "write", name);
    }
  }

  sync(file: number): void {
    const { slot, name } = this.#file(file, "sync");
    this.#table.flush(slot, "sync", name);
  }

  size(file: number): number {
    const { slot, name } = this.#file(file, "size");
    return Math.max(0, slotSize(slot, "size", name) - SLOT_HEADER_SIZE);
  }

  truncate(file: number, length: number): void {
    const { slot, name } = this.#writableFile(file, "truncate");
    checkOffset("truncate", name, length);
    truncateSlot(slot, SLOT_HEADER_SIZE + length, "truncate", name);
  }

  close(file: number): void {
    const { slot } = this.#file(file, "close");
    this.#files.delete(file);
    slot.opens--;
    this.#table.closed(slot);
  }

  exists(name: string): boolean {
    this.#check("exists", name);
    checkName("exists", name);
    return this.#table.named.has(name);
  }

  remove(name: string): void {
    this.#check("remove", name);
    checkName("remove", name);
    this.#table.remove(name);
  }

  rename(from: string, to: string): void {
    this.#check("rename", from);
    checkName("rename", from);
    checkName("rename", to);
    this.#table.rename(from, to);
  }

  /** The names of the files the pool holds, in no particular order. */
  list(): string[] {
    this.#check("list");
    return [...this.#table.named.keys()];
  }

  /** Makes header changes durable and frees the slots that lost their files (`slot-table.ts`). */
  syncDir(): void {
    this.#check("sync_dir");
    this.#table.syncDir();
  }

  /**
   * Takes lock `name` for this pool. The worker already holds the database's Web Lock, so this
   * only stops a second open of the database inside that worker: `LOCKED` if taken twice.
   */
  lock(name: string): number {
    this.#check("lock", name);
    checkName("lock", name);
    const id = this.#nextId();
    this.#locks.take(name, id);
    return id;
  }

  unlock(lock: number): void {
    this.#check("unlock");
    this.#locks.release(lock);
  }

  /**
   * Closes every slot file's access handle and forgets every id and lock. Idempotent; every
   * later call fails with `EBADF` (open the pool again to go on).
   */
  releaseAll(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    closeAll(this.#table.slots.values());
    this.#table.clear();
    this.#files.clear();
    this.#locks.clear();
  }

  // ---- export and import ----

  /** The named files and their sizes, sorted by name (for an export). */
  files(): PoolFile[] {
    this.#check("files");
    return [...this.#table.named]
      .map(([name, slot]) => ({
        name,
        size: Math.max(0, slotSize(slot, "size", name) - SLOT_HEADER_SIZE),
      }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The whole content of file `name` (missing: `ENOENT`). */
  readAll(name: string): Uint8Array {
    this.#check("read", name);
    checkName("read", name);
    const slot = this.#table.named.get(name);
    if (slot === undefined) {
      throw notFound("read", name);
    }
    const buffer = new Uint8Array(Math.max(0, slotSize(slot, "read", name) - SLOT_HEADER_SIZE));
    const n = readSlot(slot, buffer, SLOT_HEADER_SIZE, name);
    return n === buffer.length ? buffer : buffer.subarray(0, n);
  }

  /**
   * Creates file `name` (existing: `EEXIST`) holding `data` and flushes it, header included (for
   * an import; `reserve` one free slot per file first). On failure the file may exist, partly
   * written. Call `syncDir` after the last file.
   */
  writeNewFile(name: string, data: Uint8Array): void {
    const id = this.open(name, OpenMode.CreateNew);
    try {
      this.write(id, 0, data);
      this.sync(id);
    } finally {
      this.close(id);
    }
  }

  // ---- internals ----

  #file(id: number, op: string): OpenFile {
    this.#check(op);
    const file = this.#files.get(id);
    if (file === undefined) {
      throw poolError("EBADF", `${op}: no open file with id ${id}`);
    }
    return file;
  }

  #writableFile(id: number, op: string): OpenFile {
    const file = this.#file(id, op);
    if (!file.writable) {
      throw poolError("EBADF", `${op} ${JSON.stringify(file.name)}: the file was opened read-only`);
    }
    return file;
  }

  /** Throws `EBADF` once the pool is released. */
  #check(op: string, name?: string): void {
    if (this.#closed) {
      throw releasedError(name === undefined ? op : `${op} ${JSON.stringify(name)}`);
    }
  }

  /** The next id in 1..=MAX_ID; ids are not reused until the counter wraps. */
  #nextId(): number {
    do {
      this.#lastId = this.#lastId >= MAX_ID ? 1 : this.#lastId + 1;
    } while (this.#files.has(this.#lastId) || this.#locks.has(this.#lastId));
    return this.#lastId;
  }

  #serialize(work: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
