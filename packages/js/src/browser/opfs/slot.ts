/**
 * One slot file of the pool and its I/O: a `FileSystemSyncAccessHandle` kept open for the pool's
 * whole life, whose first 4096 bytes (`slot-header.ts`) say which engine file it holds. Offsets
 * here are absolute in the slot file; failures become coded errors (`pool-errors.ts`).
 *
 * @module
 */
import type { PoolDirectory, SyncAccessHandleLike } from "./pool-directory.js";
import { ioError, poolError } from "./pool-errors.js";
import { SLOT_HEADER_SIZE, slotFileName } from "./slot-header.js";

export class Slot {
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

/**
 * Opens (or creates, at size 4096 with zeros) the slot files `indices`, all at once. Returns the
 * slots that opened and the first failure: as thrown by `dir.open` when opening, as a coded
 * error when creating.
 */
export async function openSlots(
  dir: PoolDirectory,
  indices: readonly number[],
  create: boolean,
): Promise<{ slots: Slot[]; failure: unknown }> {
  const results = await Promise.allSettled(
    indices.map(async (index) => {
      const fileName = slotFileName(index);
      let handle: SyncAccessHandleLike;
      try {
        handle = await dir.open(fileName, create, SLOT_HEADER_SIZE);
      } catch (error) {
        // Opening: the caller gets the directory's own error (a busy file is worth a retry).
        throw create ? ioError("create", fileName, error) : error;
      }
      const slot = new Slot(index, fileName, handle);
      if (create) {
        try {
          // A leftover file of that name (a failed trim) must not keep an old header. A file the
          // directory wrote as a free slot (4096 zero bytes) is left as it is: sizing it through
          // the handle would cost quota (pool-directory.ts).
          if (!isZeroedSlot(slot, fileName)) {
            if (slotSize(slot, "create", fileName) !== 0) {
              truncateSlot(slot, 0, "create", fileName);
            }
            truncateSlot(slot, SLOT_HEADER_SIZE, "create", fileName);
          }
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

/** Whether `slot`'s file is exactly {@link SLOT_HEADER_SIZE} zero bytes (a fresh free slot). */
function isZeroedSlot(slot: Slot, fileName: string): boolean {
  if (slotSize(slot, "create", fileName) !== SLOT_HEADER_SIZE) {
    return false;
  }
  const bytes = new Uint8Array(SLOT_HEADER_SIZE);
  return readSlot(slot, bytes, 0, fileName) === SLOT_HEADER_SIZE && bytes.every((b) => b === 0);
}

export function readSlot(slot: Slot, buffer: Uint8Array, at: number, label: string): number {
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

export function writeSlot(slot: Slot, data: Uint8Array, at: number, op: string, label: string): void {
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

/**
 * Sets `slot`'s file size to `size`. A truncate to the size the file has is skipped: Chromium
 * reserves at least 1 MiB of the origin's quota for an access handle on every truncate, even
 * one that changes nothing (held until the handle closes).
 */
export function truncateSlot(slot: Slot, size: number, op: string, label: string): void {
  try {
    if (slot.handle.getSize() === size) {
      return;
    }
    slot.handle.truncate(size);
  } catch (error) {
    throw ioError(op, label, error);
  }
}

export function slotSize(slot: Slot, op: string, label: string): number {
  try {
    return slot.handle.getSize();
  } catch (error) {
    throw ioError(op, label, error);
  }
}

/** Closes the slots' handles, best effort. */
export function closeAll(slots: Iterable<Slot>): void {
  for (const slot of slots) {
    try {
      slot.handle.close();
    } catch {
      // Best effort: nothing was pending that a close could save.
    }
  }
}
