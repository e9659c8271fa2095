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
 * Errors thrown by the {@link StorageHost} methods are always `Error`s with a string `code`:
 * `ENOENT`, `EEXIST`, `LOCKED`, `QUOTA` (a `QuotaExceededError` or a short write), `EPOOL` (no
 * free slot), `EINVAL` (bad name, mode or offset), `EBADF` (unknown id, read-only id, or the
 * pool was released) and `EIO` (any other failure, naming the operation and the file).
 *
 * @module
 */
import { OpenMode } from "../../engine/storage-host.js";
import type { StorageHost } from "../../engine/storage-host.js";
import {
  HEADER_COPY_SIZE,
  SLOT_HEADER_SIZE,
  decodeSlotHeader,
  encodeHeaderCopy,
  parseSlotFileName,
  slotFileName,
  slotNameBytes,
} from "./slot-header.js";

/** The part of `FileSystemSyncAccessHandle` the pool uses (so tests can supply their own). */
export interface SyncAccessHandleLike {
  read(buffer: Uint8Array, options: { at: number }): number;
  write(buffer: Uint8Array, options: { at: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

/** The directory holding a pool's slot files (the real one is {@link opfsPoolDirectory}). */
export interface PoolDirectory {
  /** The names of the files in the directory (subdirectories excluded). */
  list(): Promise<string[]>;
  /** Opens `name` for exclusive synchronous access, creating it (empty) if `create`. */
  open(name: string, create: boolean): Promise<SyncAccessHandleLike>;
  /** Removes the (closed) file `name`. */
  remove(name: string): Promise<void>;
}

/** An `Error` with the string `code` the Rust side maps (see `storage-host.ts`). */
export interface PoolError extends Error {
  code: string;
}

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

/** The OPFS side of {@link PoolDirectory}: async iteration is not in TypeScript's DOM lib. */
interface IterableDirectoryHandle {
  entries(): AsyncIterable<[string, FileSystemHandle]>;
}

/** `FileSystemFileHandle.createSyncAccessHandle` exists only in workers' lib. */
interface SyncAccessFileHandle {
  createSyncAccessHandle(): Promise<SyncAccessHandleLike>;
}

/** A {@link PoolDirectory} on an OPFS directory (usable only in a dedicated worker). */
export function opfsPoolDirectory(dir: FileSystemDirectoryHandle): PoolDirectory {
  return {
    async list() {
      const names: string[] = [];
      for await (const [name, handle] of (dir as unknown as IterableDirectoryHandle).entries()) {
        if (handle.kind === "file") {
          names.push(name);
        }
      }
      return names;
    },
    async open(name, create) {
      const file = await dir.getFileHandle(name, { create });
      return (file as unknown as SyncAccessFileHandle).createSyncAccessHandle();
    },
    remove(name) {
      return dir.removeEntry(name);
    },
  };
}

/** Default of {@link OpfsPoolOptions.minFree}. */
const DEFAULT_MIN_FREE = 4;
/** Ids are `u32` on the Rust side. */
const MAX_ID = 0xffff_ffff;

/** One slot file, open for the pool's whole life. */
class Slot {
  /** The engine file the slot holds (`undefined`: none, or the file was removed or replaced). */
  name: string | undefined = undefined;
  /** The name in the slot's newest header write (`undefined`: free or no valid header). */
  diskName: string | undefined = undefined;
  /** The copy holding the last flushed header (`undefined`: neither copy is valid). */
  durableCopy: 0 | 1 | undefined = undefined;
  /** The copy written since the last flush, if any (always the other one). */
  writtenCopy: 0 | 1 | undefined = undefined;
  /** Open ids on the slot. */
  opens = 0;

  constructor(
    readonly index: number,
    readonly fileName: string,
    readonly handle: SyncAccessHandleLike,
  ) {}

  /** The name to put in messages. */
  get label(): string {
    return this.name ?? this.diskName ?? this.fileName;
  }
}

interface OpenFile {
  readonly slot: Slot;
  /** The name the id was opened under (for messages once the file is renamed or removed). */
  readonly name: string;
  readonly writable: boolean;
}

/** A {@link StorageHost} on a pool of OPFS slot files; see the module notes. */
export class OpfsPool implements StorageHost {
  readonly #dir: PoolDirectory;
  /** Every slot, by number. */
  readonly #slots = new Map<number, Slot>();
  /** Slots holding a named file, by name. */
  readonly #named = new Map<string, Slot>();
  /** Free slots (header free and flushed, size exactly 4096), lowest number first. */
  readonly #free: Slot[] = [];
  /** Slots that lost their file and are not free yet (still open, or awaiting `syncDir`). */
  readonly #released = new Set<Slot>();
  /** Slots with a header write not flushed yet. */
  readonly #dirty = new Set<Slot>();
  readonly #files = new Map<number, OpenFile>();
  readonly #locks = new Map<number, string>();
  /** The highest generation of any header copy seen or written. */
  #generation = 0;
  /** The number of the next new slot (never decreases). */
  #nextIndex = 0;
  #lastId = 0;
  #closed = false;
  /** Serializes `reserve` and `trim`. */
  #queue: Promise<void> = Promise.resolve();

  private constructor(dir: PoolDirectory, slots: readonly Slot[]) {
    this.#dir = dir;
    for (const slot of slots) {
      this.#slots.set(slot.index, slot);
      this.#nextIndex = Math.max(this.#nextIndex, slot.index + 1);
    }
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
      pool.#load();
      await pool.reserve(minFree);
    } catch (error) {
      pool.releaseAll();
      throw error;
    }
    return pool;
  }

  /** Slots ready for a new file. */
  get freeSlots(): number {
    return this.#free.length;
  }

  /**
   * Slots not free: holding a file, still open after their file was removed or replaced, or
   * waiting for the next `syncDir` before they can be reused.
   */
  get usedSlots(): number {
    return this.#slots.size - this.#free.length;
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
      if (this.#free.length < free && this.#hasReclaimable()) {
        this.syncDir();
      }
      const missing = free - this.#free.length;
      if (missing <= 0) {
        return;
      }
      const indices: number[] = [];
      for (let i = 0; i < missing; i++) {
        indices.push(this.#nextIndex++);
      }
      const { slots, failure } = await openSlots(this.#dir, indices, true);
      if (this.#closed) {
        closeAll(slots);
        throw releasedError("reserve");
      }
      for (const slot of slots) {
        this.#slots.set(slot.index, slot);
        insertFree(this.#free, slot);
      }
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
      const victims = this.#free.splice(maxFree);
      for (const slot of victims) {
        this.#slots.delete(slot.index);
      }
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
    let slot = this.#named.get(name);
    switch (mode) {
      case OpenMode.Read:
      case OpenMode.ReadWrite:
        if (slot === undefined) {
          throw notFound("open", name);
        }
        break;
      case OpenMode.Create:
        if (slot === undefined) {
          slot = this.#createFile(name);
        } else {
          truncateSlot(slot, SLOT_HEADER_SIZE, "open", name);
        }
        break;
      case OpenMode.CreateNew:
        if (slot !== undefined) {
          throw poolError("EEXIST", `open ${JSON.stringify(name)}: the file already exists`);
        }
        slot = this.#createFile(name);
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
    this.#flush(slot, "sync", name);
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
    if (slot.opens === 0 && slot.name === undefined) {
      this.#tryReclaim(slot);
    }
  }

  exists(name: string): boolean {
    this.#check("exists", name);
    checkName("exists", name);
    return this.#named.has(name);
  }

  remove(name: string): void {
    this.#check("remove", name);
    checkName("remove", name);
    const slot = this.#named.get(name);
    if (slot === undefined) {
      throw notFound("remove", name);
    }
    this.#writeHeader(slot, undefined, "remove");
    this.#named.delete(name);
    slot.name = undefined;
    this.#release(slot);
    this.#dropStaleClaims(name);
  }

  rename(from: string, to: string): void {
    this.#check("rename", from);
    checkName("rename", from);
    checkName("rename", to);
    const slot = this.#named.get(from);
    if (slot === undefined) {
      throw notFound("rename", from);
    }
    if (from === to) {
      return;
    }
    const replaced = this.#named.get(to);
    this.#writeHeader(slot, to, "rename");
    this.#named.delete(from);
    this.#named.set(to, slot);
    slot.name = to;
    if (replaced !== undefined) {
      // Its header still claims `to` (with an older generation) until `syncDir`.
      replaced.name = undefined;
      this.#release(replaced);
    }
    this.#dropStaleClaims(from);
  }

  /** The names of the files the pool holds, in no particular order. */
  list(): string[] {
    this.#check("list");
    return [...this.#named.keys()];
  }

  /**
   * Flushes every slot whose header changed since the last call, then writes (and flushes) the
   * free header of slots whose file was replaced by a rename, and frees the slots no id holds.
   */
  syncDir(): void {
    this.#check("sync_dir");
    for (const slot of [...this.#dirty]) {
      this.#flush(slot, "sync_dir", slot.label);
    }
    for (const slot of [...this.#released]) {
      if (slot.diskName !== undefined) {
        this.#writeHeader(slot, undefined, "sync_dir");
        this.#flush(slot, "sync_dir", slot.label);
      }
      if (slot.opens === 0) {
        this.#reclaim(slot);
      }
    }
  }

  /**
   * Takes lock `name` for this pool. The worker already holds the database's Web Lock, so this
   * only stops a second open of the database inside that worker: `LOCKED` if taken twice.
   */
  lock(name: string): number {
    this.#check("lock", name);
    checkName("lock", name);
    for (const held of this.#locks.values()) {
      if (held === name) {
        throw poolError(
          "LOCKED",
          `lock ${JSON.stringify(name)}: ${JSON.stringify(name)} is locked by this database's ` +
            "worker; close the database before opening it again",
        );
      }
    }
    const id = this.#nextId();
    this.#locks.set(id, name);
    return id;
  }

  unlock(lock: number): void {
    this.#check("unlock");
    if (!this.#locks.delete(lock)) {
      throw poolError("EBADF", `unlock: no lock with id ${lock}`);
    }
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
    closeAll(this.#slots.values());
    this.#slots.clear();
    this.#named.clear();
    this.#free.length = 0;
    this.#released.clear();
    this.#dirty.clear();
    this.#files.clear();
    this.#locks.clear();
  }

  // ---- export and import ----

  /** The named files and their sizes, sorted by name (for an export). */
  files(): PoolFile[] {
    this.#check("files");
    return [...this.#named]
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
    const slot = this.#named.get(name);
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

  /** Reads every header, resolves duplicate names, and puts free slots in shape. */
  #load(): void {
    const claims = new Map<string, { slot: Slot; generation: number }[]>();
    const free: Slot[] = [];
    for (const slot of this.#slots.values()) {
      const size = slotSize(slot, "open", slot.fileName);
      const bytes = new Uint8Array(Math.min(size, SLOT_HEADER_SIZE));
      readSlot(slot, bytes, 0, slot.fileName);
      const header = decodeSlotHeader(bytes);
      for (const copy of header.copies) {
        if (copy !== undefined) {
          this.#generation = Math.max(this.#generation, copy.generation);
        }
      }
      if (size < SLOT_HEADER_SIZE) {
        truncateSlot(slot, SLOT_HEADER_SIZE, "open", slot.fileName);
      }
      slot.durableCopy = header.current;
      const current = header.current === undefined ? undefined : header.copies[header.current];
      if (current?.name === undefined) {
        free.push(slot);
      } else {
        slot.diskName = current.name;
        let list = claims.get(current.name);
        if (list === undefined) {
          list = [];
          claims.set(current.name, list);
        }
        list.push({ slot, generation: current.generation });
      }
    }
    for (const [name, list] of claims) {
      list.sort((a, b) => b.generation - a.generation || a.slot.index - b.slot.index);
      const winner = list[0]!.slot;
      winner.name = name;
      this.#named.set(name, winner);
      if (list.length > 1) {
        // The winner's claim must be durable before the losers stop claiming the name.
        this.#flush(winner, "open", name);
        for (const { slot } of list.slice(1)) {
          this.#writeHeader(slot, undefined, "open");
          this.#flush(slot, "open", name);
          free.push(slot);
        }
      }
    }
    for (const slot of free) {
      if (slotSize(slot, "open", slot.fileName) !== SLOT_HEADER_SIZE) {
        // Flush the free header first, so that a crash cannot revive a file without its bytes.
        this.#flush(slot, "open", slot.fileName);
        truncateSlot(slot, SLOT_HEADER_SIZE, "open", slot.fileName);
      }
      insertFree(this.#free, slot);
    }
  }

  /** Takes a free slot for new file `name` and writes its header. */
  #createFile(name: string): Slot {
    if (this.#free.length === 0 && this.#hasReclaimable()) {
      this.syncDir();
    }
    const slot = this.#free.shift();
    if (slot === undefined) {
      throw poolError(
        "EPOOL",
        `create ${JSON.stringify(name)}: the OPFS slot pool ran dry (no free slot file among ` +
          `${this.#slots.size}); the worker must reserve() enough free slots before each request`,
      );
    }
    try {
      if (slotSize(slot, "create", name) !== SLOT_HEADER_SIZE) {
        truncateSlot(slot, SLOT_HEADER_SIZE, "create", name);
      }
      this.#writeHeader(slot, name, "create");
    } catch (error) {
      // Its durable header still says free; the next write goes to the same copy again.
      this.#free.unshift(slot);
      throw error;
    }
    slot.name = name;
    this.#named.set(name, slot);
    return slot;
  }

  /**
   * Writes a header copy naming `name` (`undefined`: free) with the next generation, into the
   * copy that does not hold the slot's last flushed header. Not flushed.
   */
  #writeHeader(slot: Slot, name: string | undefined, op: string): void {
    const copy = slot.durableCopy === 0 ? 1 : 0;
    // Consumed even if the write fails: a failed write may still have landed.
    const generation = ++this.#generation;
    writeSlot(slot, encodeHeaderCopy(generation, name), copy * HEADER_COPY_SIZE, op, slot.label);
    slot.writtenCopy = copy;
    slot.diskName = name;
    this.#dirty.add(slot);
  }

  /** Flushes the slot file; its header written since the last flush becomes the durable one. */
  #flush(slot: Slot, op: string, label: string): void {
    try {
      slot.handle.flush();
    } catch (error) {
      throw ioError(op, label, error);
    }
    if (slot.writtenCopy !== undefined) {
      slot.durableCopy = slot.writtenCopy;
      slot.writtenCopy = undefined;
    }
    this.#dirty.delete(slot);
  }

  /**
   * No slot claims `name` with a newer generation any more: slots replaced by a rename whose
   * header still claims it get their free header now (not flushed), so that a reopen does not
   * bring the old file back. A failure is left for `syncDir` to retry and report.
   */
  #dropStaleClaims(name: string): void {
    for (const slot of this.#released) {
      if (slot.diskName === name) {
        try {
          this.#writeHeader(slot, undefined, "remove");
        } catch {
          // syncDir writes it again.
        }
      }
    }
  }

  /** `slot` lost its file: free it as soon as no id holds it and its free header is durable. */
  #release(slot: Slot): void {
    this.#released.add(slot);
    if (slot.opens === 0) {
      this.#tryReclaim(slot);
    }
  }

  #tryReclaim(slot: Slot): void {
    if (slot.diskName !== undefined || slot.writtenCopy !== undefined) {
      return; // The next syncDir frees it.
    }
    try {
      this.#reclaim(slot);
    } catch {
      // Left in #released: the next syncDir retries and reports.
    }
  }

  /** Truncates a released slot (free header flushed, no id open) and puts it in the free list. */
  #reclaim(slot: Slot): void {
    truncateSlot(slot, SLOT_HEADER_SIZE, "free", slot.fileName);
    this.#released.delete(slot);
    insertFree(this.#free, slot);
  }

  #hasReclaimable(): boolean {
    for (const slot of this.#released) {
      if (slot.opens === 0) {
        return true;
      }
    }
    return false;
  }

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

// ---- slot file I/O (absolute offsets in the slot file) ----

/**
 * Opens (or creates, at size 4096 with zeros) the slot files `indices`, all at once. Returns the
 * slots that opened and the first failure: as thrown by `dir.open` when opening, as a coded
 * error when creating.
 */
async function openSlots(
  dir: PoolDirectory,
  indices: readonly number[],
  create: boolean,
): Promise<{ slots: Slot[]; failure: unknown }> {
  const results = await Promise.allSettled(
    indices.map(async (index) => {
      const fileName = slotFileName(index);
      let handle: SyncAccessHandleLike;
      try {
        handle = await dir.open(fileName, create);
      } catch (error) {
        // Opening: the caller gets the directory's own error (a busy file is worth a retry).
        throw create ? ioError("create", fileName, error) : error;
      }
      const slot = new Slot(index, fileName, handle);
      if (create) {
        try {
          // A leftover file of that name (a failed trim) must not keep an old header.
          if (slotSize(slot, "create", fileName) !== 0) {
            truncateSlot(slot, 0, "create", fileName);
          }
          truncateSlot(slot, SLOT_HEADER_SIZE, "create", fileName);
        } catch (error) {
          closeAll([slot]);
          throw error;
        }
      }
      return slot;
    }),
  );
  const slots: Slot[] = [];
  for (const result of results) {
    if (result.status === "fulfilled") {
      slots.push(result.value);
    }
  }
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  return { slots, failure: failed?.reason };
}

function readSlot(slot: Slot, buffer: Uint8Array, at: number, label: string): number {
  let done = 0;
  try {
    while (done < buffer.length) {
      const n = slot.handle.read(buffer.subarray(done), { at: at + done });
      if (!(n > 0)) {
        break;
      }
      done += n;
    }
  } catch (error) {
    throw ioError("read", label, error);
  }
  return done;
}

function writeSlot(slot: Slot, data: Uint8Array, at: number, op: string, label: string): void {
  let n: number;
  try {
    n = slot.handle.write(data, { at });
  } catch (error) {
    throw ioError(op, label, error);
  }
  if (n !== data.length) {
    throw poolError(
      "QUOTA",
      `${op} ${JSON.stringify(label)}: wrote ${n} of ${data.length} bytes at offset ` +
        `${at - SLOT_HEADER_SIZE} (storage quota exhausted?)`,
    );
  }
}

function truncateSlot(slot: Slot, size: number, op: string, label: string): void {
  try {
    slot.handle.truncate(size);
  } catch (error) {
    throw ioError(op, label, error);
  }
}

function slotSize(slot: Slot, op: string, label: string): number {
  try {
    return slot.handle.getSize();
  } catch (error) {
    throw ioError(op, label, error);
  }
}

function closeAll(slots: Iterable<Slot>): void {
  for (const slot of slots) {
    try {
      slot.handle.close();
    } catch {
      // Best effort: nothing was pending that a close could save.
    }
  }
}

/** Inserts `slot` into `free`, kept sorted by slot number. */
function insertFree(free: Slot[], slot: Slot): void {
  let i = free.length;
  while (i > 0 && free[i - 1]!.index > slot.index) {
    i--;
  }
  free.splice(i, 0, slot);
}

// ---- errors and checks ----

function poolError(code: string, message: string, cause?: unknown): PoolError {
  const error = (
    cause === undefined ? new Error(message) : new Error(message, { cause })
  ) as PoolError;
  error.code = code;
  return error;
}

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
function ioError(op: string, label: string, error: unknown): PoolError {
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

function notFound(op: string, name: string): PoolError {
  return poolError("ENOENT", `${op} ${JSON.stringify(name)}: no such file`);
}

function releasedError(what: string): PoolError {
  return poolError(
    "EBADF",
    `${what}: the OPFS pool was released (releaseAll); open the database again`,
  );
}

/**
 * The names native ShaleDB accepts (never outside the directory, the same on every platform),
 * at most 1024 UTF-8 bytes and well-formed.
 */
function checkName(op: string, name: string): void {
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

function checkOffset(op: string, name: string, offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw poolError("EINVAL", `${op} ${JSON.stringify(name)}: bad offset or length ${offset}`);
  }
}

function checkCount(what: string, count: number): void {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw poolError("EINVAL", `${what} must be a non-negative integer, got ${String(count)}`);
  }
}
