/**
 * The life of the pool's slots (`opfs-pool.ts` has the module notes on crash safety): which slot
 * holds which engine file, which are free, and how a create, remove or rename becomes header
 * writes. Header writes are not flushed until `syncDir` (or `sync` of that file), so:
 * - a header write never overwrites the copy holding the slot's last flushed state;
 * - `rename(from, to)` writes `to` into `from`'s slot with a newer generation and leaves the old
 *   `to` slot's header as it is (on reload the newer claim wins); that slot's header is marked
 *   free by the next `syncDir`, after the new claim was flushed (or as soon as the new claim goes
 *   away, by a remove or another rename);
 * - a slot that lost its file is reused only once its free header has been flushed and no id
 *   holds it.
 *
 * @module
 */
import { ioError, notFound, poolError } from "./pool-errors.js";
import { Slot, readSlot, slotSize, truncateSlot, writeSlot } from "./slot.js";
import { HEADER_COPY_SIZE, SLOT_HEADER_SIZE, decodeSlotHeader, encodeHeaderCopy } from "./slot-header.js";

export class SlotTable {
  /** Every slot, by number. */
  readonly slots = new Map<number, Slot>();
  /** Slots holding a named file, by name. */
  readonly named = new Map<string, Slot>();
  /** Free slots (header free and flushed, size exactly 4096), lowest number first. */
  readonly free: Slot[] = [];
  /** Slots that lost their file and are not free yet (still open, or awaiting `syncDir`). */
  readonly #released = new Set<Slot>();
  /** Slots with a header write not flushed yet. */
  readonly #dirty = new Set<Slot>();
  /** The highest generation of any header copy seen or written. */
  #generation = 0;
  /** The number of the next new slot (never decreases). */
  #nextIndex = 0;

  constructor(slots: readonly Slot[]) {
    for (const slot of slots) {
      this.slots.set(slot.index, slot);
      this.#nextIndex = Math.max(this.#nextIndex, slot.index + 1);
    }
  }

  /** Reads every header, resolves duplicate names, and puts free slots in shape. */
  load(): void {
    const claims = new Map<string, { slot: Slot; generation: number }[]>();
    const free: Slot[] = [];
    for (const slot of this.slots.values()) {
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
      this.named.set(name, winner);
      if (list.length > 1) {
        // The winner's claim must be durable before the losers stop claiming the name.
        this.flush(winner, "open", name);
        for (const { slot } of list.slice(1)) {
          this.#writeHeader(slot, undefined, "open");
          this.flush(slot, "open", name);
          free.push(slot);
        }
      }
    }
    for (const slot of free) {
      if (slotSize(slot, "open", slot.fileName) !== SLOT_HEADER_SIZE) {
        // Flush the free header first, so that a crash cannot revive a file without its bytes.
        this.flush(slot, "open", slot.fileName);
        truncateSlot(slot, SLOT_HEADER_SIZE, "open", slot.fileName);
      }
      insertFree(this.free, slot);
    }
  }

  /** The numbers of `count` new slots, continuing after the highest so far. */
  newIndices(count: number): number[] {
    const indices: number[] = [];
    for (let i = 0; i < count; i++) {
      indices.push(this.#nextIndex++);
    }
    return indices;
  }

  /** Adds newly created slots (4096 bytes, no header yet) as free ones. */
  addFree(slots: readonly Slot[]): void {
    for (const slot of slots) {
      this.slots.set(slot.index, slot);
      insertFree(this.free, slot);
    }
  }

  /** Takes the free slots beyond `maxFree` (highest numbers) out of the table and returns them. */
  takeExtraFree(maxFree: number): Slot[] {
    const victims = this.free.splice(maxFree);
    for (const slot of victims) {
      this.slots.delete(slot.index);
    }
    return victims;
  }

  /** Whether a `syncDir` would free slots (released ones that no id holds). */
  hasReclaimable(): boolean {
    for (const slot of this.#released) {
      if (slot.opens === 0) {
        return true;
      }
    }
    return false;
  }

  /** Takes a free slot for new file `name` and writes its header (`EPOOL` if none is free). */
  createFile(name: string): Slot {
    if (this.free.length === 0 && this.hasReclaimable()) {
      this.syncDir();
    }
    const slot = this.free.shift();
    if (slot === undefined) {
      throw poolError(
        "EPOOL",
        `create ${JSON.stringify(name)}: the OPFS slot pool ran dry (no free slot file among ` +
          `${this.slots.size}); the worker must reserve() enough free slots before each request`,
      );
    }
    try {
      if (slotSize(slot, "create", name) !== SLOT_HEADER_SIZE) {
        truncateSlot(slot, SLOT_HEADER_SIZE, "create", name);
      }
      this.#writeHeader(slot, name, "create");
    } catch (error) {
      // Its durable header still says free; the next write goes to the same copy again.
      this.free.unshift(slot);
      throw error;
    }
    slot.name = name;
    this.named.set(name, slot);
    return slot;
  }

  /** Removes file `name` (`ENOENT` if missing); its slot is freed once no id holds it. */
  remove(name: string): void {
    const slot = this.named.get(name);
    if (slot === undefined) {
      throw notFound("remove", name);
    }
    this.#writeHeader(slot, undefined, "remove");
    this.named.delete(name);
    slot.name = undefined;
    this.#release(slot);
    this.#dropStaleClaims(name);
  }

  /** Renames `from` to `to` (replacing it) by rewriting `from`'s header; `ENOENT` if missing. */
  rename(from: string, to: string): void {
    const slot = this.named.get(from);
    if (slot === undefined) {
      throw notFound("rename", from);
    }
    if (from === to) {
      return;
    }
    const replaced = this.named.get(to);
    this.#writeHeader(slot, to, "rename");
    this.named.delete(from);
    this.named.set(to, slot);
    slot.name = to;
    if (replaced !== undefined) {
      // Its header still claims `to` (with an older generation) until `syncDir`.
      replaced.name = undefined;
      this.#release(replaced);
    }
    this.#dropStaleClaims(from);
  }

  /** The last id on `slot` was closed: free it if it lost its file. */
  closed(slot: Slot): void {
    if (slot.opens === 0 && slot.name === undefined) {
      this.#tryReclaim(slot);
    }
  }

  /**
   * Flushes every slot whose header changed since the last call, then writes (and flushes) the
   * free header of slots whose file was replaced by a rename, and frees the slots no id holds.
   */
  syncDir(): void {
    for (const slot of [...this.#dirty]) {
      this.flush(slot, "sync_dir", slot.label);
    }
    for (const slot of [...this.#released]) {
      if (slot.diskName !== undefined) {
        this.#writeHeader(slot, undefined, "sync_dir");
        this.flush(slot, "sync_dir", slot.label);
      }
      if (slot.opens === 0) {
        this.#reclaim(slot);
      }
    }
  }

  /** Flushes the slot file; its header written since the last flush becomes the durable one. */
  flush(slot: Slot, op: string, label: string): void {
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

  /** Forgets every slot (the pool was released; their handles are closed by the caller). */
  clear(): void {
    this.slots.clear();
    this.named.clear();
    this.free.length = 0;
    this.#released.clear();
    this.#dirty.clear();
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
    insertFree(this.free, slot);
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
