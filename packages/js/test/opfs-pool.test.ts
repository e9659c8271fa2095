import { describe, expect, it } from "vitest";

import { crc32c } from "../src/browser/opfs/crc32c.js";
import { OpfsPool } from "../src/browser/opfs/opfs-pool.js";
import {
  HEADER_COPY_SIZE,
  SLOT_HEADER_SIZE,
  decodeHeaderCopy,
  decodeSlotHeader,
  encodeHeaderCopy,
  parseSlotFileName,
  slotFileName,
} from "../src/browser/opfs/slot-header.js";
import { OpenMode } from "../src/engine/storage-host.js";
import { MemoryOpfsDirectory } from "./fixtures/memory-opfs.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Creates `name` (or replaces it, with `mode` Create) holding `text`. */
function put(pool: OpfsPool, name: string, text: string, mode: OpenMode = OpenMode.CreateNew): void {
  const id = pool.open(name, mode);
  pool.write(id, 0, bytes(text));
  pool.close(id);
}

function text(pool: OpfsPool, name: string): string {
  return decoder.decode(pool.readAll(name));
}

/** The code of what `fn` throws (fails the test if it returns). */
function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return (error as { code: string }).code;
  }
  throw new Error("expected a throw");
}

function errorOf(fn: () => unknown): Error & { code: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code: string };
  }
  throw new Error("expected a throw");
}

/** The slot files whose current header names `name`. */
function slotsHolding(dir: MemoryOpfsDirectory, name: string): string[] {
  return [...dir.files.keys()].filter((fileName) => {
    const header = decodeSlotHeader(dir.bytes(fileName).subarray(0, SLOT_HEADER_SIZE));
    return header.current !== undefined && header.copies[header.current]?.name === name;
  });
}

function slotHolding(dir: MemoryOpfsDirectory, name: string): string {
  const slots = slotsHolding(dir, name);
  expect(slots).toHaveLength(1);
  return slots[0]!;
}

async function reopen(pool: OpfsPool, dir: MemoryOpfsDirectory, minFree?: number): Promise<OpfsPool> {
  pool.releaseAll();
  return OpfsPool.open(dir, minFree === undefined ? {} : { minFree });
}

describe("slot header", () => {
  it("computes the standard CRC-32C", () => {
    expect(crc32c(bytes("123456789"))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it("lays a copy out as magic, generation, version, name length, name and CRC", () => {
    const copy = encodeHeaderCopy(2 ** 40 + 5, "000012.sst");
    expect(copy).toHaveLength(HEADER_COPY_SIZE);
    expect(decoder.decode(copy.subarray(0, 8))).toBe("SHDBSLOT");
    const view = new DataView(copy.buffer);
    expect(view.getUint32(8, true)).toBe(5);
    expect(view.getUint32(12, true)).toBe(2 ** 8);
    expect(view.getUint32(16, true)).toBe(1);
    expect(view.getUint16(20, true)).toBe(10);
    expect(view.getUint16(22, true)).toBe(0);
    expect(decoder.decode(copy.subarray(24, 34))).toBe("000012.sst");
    expect(view.getUint32(34, true)).toBe(crc32c(copy.subarray(0, 34)));
    expect(copy.subarray(38).every((b) => b === 0)).toBe(true);
    expect(decodeHeaderCopy(copy)).toEqual({ generation: 2 ** 40 + 5, name: "000012.sst" });
  });

  it("treats a copy with a bad magic, version or CRC as invalid, and a name length of 0 as free", () => {
    expect(decodeHeaderCopy(encodeHeaderCopy(7, undefined))).toEqual({ generation: 7, name: undefined });
    for (const offset of [0, 9, 16, 20, 25, 30]) {
      const copy = encodeHeaderCopy(7, "CURRENT");
      copy[offset]! ^= 1;
      expect(decodeHeaderCopy(copy)).toBeUndefined();
    }
    expect(decodeHeaderCopy(new Uint8Array(HEADER_COPY_SIZE))).toBeUndefined();
    expect(decodeHeaderCopy(new Uint8Array(10))).toBeUndefined();
  });

  it("takes the valid copy with the higher generation as the slot's state", () => {
    const header = new Uint8Array(SLOT_HEADER_SIZE);
    header.set(encodeHeaderCopy(3, "a"), 0);
    header.set(encodeHeaderCopy(4, "b"), HEADER_COPY_SIZE);
    expect(decodeSlotHeader(header).current).toBe(1);
    header[HEADER_COPY_SIZE + 24] = 0xff; // tear copy B (its name)
    expect(decodeSlotHeader(header).current).toBe(0);
    expect(decodeSlotHeader(new Uint8Array(0)).current).toBeUndefined();
  });

  it("names slot files slot-NNNNNN.shs and reads back only that spelling", () => {
    expect(slotFileName(17)).toBe("slot-000017.shs");
    expect(slotFileName(1234567)).toBe("slot-1234567.shs");
    expect(parseSlotFileName("slot-000017.shs")).toBe(17);
    expect(parseSlotFileName("slot-1234567.shs")).toBe(1234567);
    for (const name of ["slot-17.shs", "slot-0000017.shs", "slot-000017.shs.tmp", "x", "CURRENT"]) {
      expect(parseSlotFileName(name)).toBeUndefined();
    }
  });
});

describe("OpfsPool", () => {
  it("opens an empty directory with minFree free slots, numbered from slot-000000.shs", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    expect(pool.freeSlots).toBe(4);
    expect(pool.usedSlots).toBe(0);
    expect([...dir.files.keys()].sort()).toEqual([0, 1, 2, 3].map(slotFileName));
    for (const file of dir.files.values()) {
      expect(file.data).toHaveLength(SLOT_HEADER_SIZE);
    }
    expect(pool.list()).toEqual([]);
    pool.releaseAll();
  });

  it("ignores files that are not slot files", async () => {
    const dir = new MemoryOpfsDirectory();
    dir.put("notes.txt", bytes("hello"));
    dir.put("slot-7.shs", encodeHeaderCopy(1, "CURRENT"));
    const pool = await OpfsPool.open(dir, { minFree: 1 });
    expect(pool.list()).toEqual([]);
    expect(dir.bytes("notes.txt")).toEqual(bytes("hello"));
    expect(dir.files.get("notes.txt")!.handle).toBeUndefined();
    pool.releaseAll();
  });

  it("writes, reads, sizes and truncates a file whose bytes start at offset 4096 of its slot", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    const id = pool.open("000001.sst", OpenMode.CreateNew);
    expect(pool.size(id)).toBe(0);
    pool.write(id, 0, bytes("hello"));
    pool.write(id, 10, bytes("world"));
    expect(pool.size(id)).toBe(15);
    const buffer = new Uint8Array(15);
    expect(pool.read(id, 0, buffer)).toBe(15);
    expect(decoder.decode(buffer)).toBe("hello\0\0\0\0\0world");
    const slot = dir.bytes(slotHolding(dir, "000001.sst"));
    expect(slot).toHaveLength(SLOT_HEADER_SIZE + 15);
    expect(decoder.decode(slot.subarray(SLOT_HEADER_SIZE, SLOT_HEADER_SIZE + 5))).toBe("hello");
    pool.truncate(id, 3);
    expect(pool.size(id)).toBe(3);
    expect(dir.bytes(slotHolding(dir, "000001.sst"))).toHaveLength(SLOT_HEADER_SIZE + 3);
    pool.truncate(id, 8);
    expect(pool.read(id, 0, buffer)).toBe(8);
    expect(decoder.decode(buffer.subarray(0, 8))).toBe("hel\0\0\0\0\0");
    pool.close(id);
    pool.releaseAll();
  });

  it("reads until the buffer is full, returning fewer bytes only at the end of the file", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "wal-000001.log", "0123456789");
    dir.maxRead = 3;
    const id = pool.open("wal-000001.log", OpenMode.Read);
    const buffer = new Uint8Array(8);
    expect(pool.read(id, 1, buffer)).toBe(8);
    expect(decoder.decode(buffer)).toBe("12345678");
    expect(pool.read(id, 6, buffer)).toBe(4);
    expect(pool.read(id, 10, buffer)).toBe(0);
    expect(pool.read(id, 1000, buffer)).toBe(0);
    pool.close(id);
    pool.releaseAll();
  });

  it("opens as each mode says: Read and ReadWrite need the file, CreateNew must not find it, Create truncates", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    expect(codeOf(() => pool.open("CURRENT", OpenMode.Read))).toBe("ENOENT");
    expect(codeOf(() => pool.open("CURRENT", OpenMode.ReadWrite))).toBe("ENOENT");
    put(pool, "CURRENT", "MANIFEST-000001\n");
    expect(codeOf(() => pool.open("CURRENT", OpenMode.CreateNew))).toBe("EEXIST");
    const rw = pool.open("CURRENT", OpenMode.ReadWrite);
    expect(pool.size(rw)).toBe(16);
    const created = pool.open("CURRENT", OpenMode.Create);
    expect(pool.size(created)).toBe(0);
    expect(pool.size(rw)).toBe(0);
    pool.close(rw);
    pool.close(created);
    const fresh = pool.open("OTHER", OpenMode.Create);
    expect(pool.exists("OTHER")).toBe(true);
    pool.close(fresh);
    expect(pool.list().sort()).toEqual(["CURRENT", "OTHER"]);
    pool.releaseAll();
  });

  it("refuses writes through a read-only id, unknown ids and unknown modes", async () => {
    const pool = await OpfsPool.open(new MemoryOpfsDirectory());
    put(pool, "a", "x");
    const id = pool.open("a", OpenMode.Read);
    expect(codeOf(() => pool.write(id, 0, bytes("y")))).toBe("EBADF");
    expect(codeOf(() => pool.truncate(id, 0))).toBe("EBADF");
    expect(codeOf(() => pool.read(id, -1, new Uint8Array(1)))).toBe("EINVAL");
    pool.close(id);
    expect(codeOf(() => pool.read(id, 0, new Uint8Array(1)))).toBe("EBADF");
    expect(codeOf(() => pool.close(id))).toBe("EBADF");
    expect(codeOf(() => pool.open("a", 9 as OpenMode))).toBe("EINVAL");
    pool.releaseAll();
  });

  it("refuses names that are not plain file names", async () => {
    const pool = await OpfsPool.open(new MemoryOpfsDirectory());
    for (const name of ["", ".", "..", "a/b", "a\\b", "c:d", "a\0", "x..y", "\ud800", "n".repeat(1025)]) {
      expect(codeOf(() => pool.open(name, OpenMode.Create))).toBe("EINVAL");
      expect(codeOf(() => pool.exists(name))).toBe("EINVAL");
    }
    put(pool, "é".repeat(512), "ok"); // 1024 UTF-8 bytes
    expect(pool.exists("é".repeat(512))).toBe(true);
    pool.releaseAll();
  });

  it("never reuses an id, even after it is closed", async () => {
    const pool = await OpfsPool.open(new MemoryOpfsDirectory());
    put(pool, "a", "x");
    const seen = new Set<number>();
    for (let i = 0; i < 50; i++) {
      const id = pool.open("a", OpenMode.Read);
      expect(seen.has(id)).toBe(false);
      seen.add(id);
      pool.close(id);
    }
    const lock = pool.lock("LOCK");
    expect(seen.has(lock)).toBe(false);
    pool.releaseAll();
  });

  it("renames over an existing file, and open ids follow the renamed file", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "CURRENT", "old");
    put(pool, "CURRENT.tmp", "new");
    const id = pool.open("CURRENT.tmp", OpenMode.ReadWrite);
    pool.rename("CURRENT.tmp", "CURRENT");
    expect(pool.exists("CURRENT.tmp")).toBe(false);
    expect(pool.list()).toEqual(["CURRENT"]);
    expect(text(pool, "CURRENT")).toBe("new");
    pool.write(id, 3, bytes("er"));
    expect(text(pool, "CURRENT")).toBe("newer");
    pool.close(id);
    pool.syncDir();
    expect(slotsHolding(dir, "CURRENT")).toHaveLength(1);
    const reopened = await reopen(pool, dir);
    expect(text(reopened, "CURRENT")).toBe("newer");
    expect(reopened.list()).toEqual(["CURRENT"]);
    reopened.releaseAll();
  });

  it("refuses to rename a missing file and treats a rename to itself as done", async () => {
    const pool = await OpfsPool.open(new MemoryOpfsDirectory());
    expect(codeOf(() => pool.rename("a", "b"))).toBe("ENOENT");
    put(pool, "a", "x");
    pool.rename("a", "a");
    expect(text(pool, "a")).toBe("x");
    pool.releaseAll();
  });

  it("removes a file; removing a missing one is ENOENT", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "000003.sst", "table");
    pool.remove("000003.sst");
    expect(pool.exists("000003.sst")).toBe(false);
    expect(pool.list()).toEqual([]);
    expect(codeOf(() => pool.remove("000003.sst"))).toBe("ENOENT");
    expect(codeOf(() => pool.open("000003.sst", OpenMode.Read))).toBe("ENOENT");
    pool.syncDir();
    expect(slotsHolding(dir, "000003.sst")).toEqual([]);
    pool.releaseAll();
  });

  it("lists files with their sizes, reads them whole, and writes imported files", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "b", "22");
    put(pool, "a", "1");
    pool.writeNewFile("c", bytes("333"));
    expect(dir.files.get(slotHolding(dir, "c"))!.flushed).toHaveLength(SLOT_HEADER_SIZE + 3);
    expect(codeOf(() => pool.writeNewFile("c", bytes("x")))).toBe("EEXIST");
    expect(pool.files()).toEqual([
      { name: "a", size: 1 },
      { name: "b", size: 2 },
      { name: "c", size: 3 },
    ]);
    expect(text(pool, "c")).toBe("333");
    expect(pool.readAll("a")).toEqual(bytes("1"));
    expect(codeOf(() => pool.readAll("zz"))).toBe("ENOENT");
    pool.releaseAll();
  });

  it("keeps every file across releaseAll and a new open", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "MANIFEST-000002", "m");
    put(pool, "wal-000003.log", "w".repeat(10_000));
    put(pool, "gone", "g");
    pool.remove("gone");
    pool.syncDir();
    const reopened = await reopen(pool, dir);
    expect(reopened.list().sort()).toEqual(["MANIFEST-000002", "wal-000003.log"]);
    expect(text(reopened, "wal-000003.log")).toBe("w".repeat(10_000));
    expect(reopened.freeSlots).toBeGreaterThanOrEqual(4);
    reopened.releaseAll();
  });

  it("after a crash keeps what syncDir made durable and forgets creations it did not", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "kept", "k");
    const id = pool.open("kept", OpenMode.ReadWrite);
    pool.sync(id);
    pool.close(id);
    pool.syncDir();
    put(pool, "lost", "l");
    pool.remove("kept");
    dir.crash();
    const reopened = await OpfsPool.open(dir);
    expect(reopened.list()).toEqual(["kept"]);
    expect(text(reopened, "kept")).toBe("k");
    reopened.releaseAll();
  });

  it("after a crash between rename and syncDir shows the old or the new file, never none", async () => {
    // The crash drops every unflushed header write.
    const dir = new MemoryOpfsDirectory();
    let pool = await OpfsPool.open(dir);
    pool.writeNewFile("CURRENT", bytes("old"));
    pool.writeNewFile("CURRENT.tmp", bytes("new"));
    pool.syncDir();
    pool.rename("CURRENT.tmp", "CURRENT");
    dir.crash();
    pool = await OpfsPool.open(dir);
    expect(pool.list().sort()).toEqual(["CURRENT", "CURRENT.tmp"]);
    expect(text(pool, "CURRENT")).toBe("old");

    // Only the renamed file's slot flushed (its sync), not the replaced one's: the newer wins.
    pool.rename("CURRENT.tmp", "CURRENT");
    const id = pool.open("CURRENT", OpenMode.Read);
    pool.sync(id);
    dir.crash();
    expect(slotsHolding(dir, "CURRENT")).toHaveLength(2);
    pool = await OpfsPool.open(dir);
    expect(pool.list()).toEqual(["CURRENT"]);
    expect(text(pool, "CURRENT")).toBe("new");
    expect(slotsHolding(dir, "CURRENT")).toHaveLength(1);
    pool.releaseAll();
  });

  it("does not bring back a replaced file when its replacement is removed or renamed before syncDir", async () => {
    const dir = new MemoryOpfsDirectory();
    let pool = await OpfsPool.open(dir);
    put(pool, "a", "old a");
    put(pool, "b", "old b");
    put(pool, "tmp1", "new a");
    put(pool, "tmp2", "new b");
    pool.syncDir();
    pool.rename("tmp1", "a");
    pool.remove("a");
    pool.rename("tmp2", "b");
    pool.rename("b", "c");
    pool = await reopen(pool, dir); // no syncDir, no crash: every change must show
    expect(pool.list()).toEqual(["c"]);
    expect(text(pool, "c")).toBe("new b");
    pool.releaseAll();
  });

  it("resolves two slots claiming one name by generation, freeing and truncating the older", async () => {
    const dir = new MemoryOpfsDirectory();
    const older = new Uint8Array(SLOT_HEADER_SIZE + 3);
    older.set(encodeHeaderCopy(5, "CURRENT"), 0);
    older.set(bytes("old"), SLOT_HEADER_SIZE);
    const newer = new Uint8Array(SLOT_HEADER_SIZE + 3);
    newer.set(encodeHeaderCopy(3, "CURRENT.tmp"), 0);
    newer.set(encodeHeaderCopy(9, "CURRENT"), HEADER_COPY_SIZE);
    newer.set(bytes("new"), SLOT_HEADER_SIZE);
    dir.put(slotFileName(1), newer);
    dir.put(slotFileName(2), older);
    const pool = await OpfsPool.open(dir, { minFree: 0 });
    expect(pool.list()).toEqual(["CURRENT"]);
    expect(text(pool, "CURRENT")).toBe("new");
    expect(pool.freeSlots).toBe(1);
    expect(dir.bytes(slotFileName(2))).toHaveLength(SLOT_HEADER_SIZE);
    // The free header was flushed (after the winner's) before the truncation.
    const header = decodeSlotHeader(dir.files.get(slotFileName(2))!.flushed.subarray(0, SLOT_HEADER_SIZE));
    expect(header.copies[header.current!]).toEqual({ generation: 10, name: undefined });
    // New writes continue after the highest generation seen.
    put(pool, "x", "");
    const x = decodeSlotHeader(dir.bytes(slotHolding(dir, "x")));
    expect(x.copies[x.current!]!.generation).toBe(11);
    pool.releaseAll();
  });

  it("falls back to the older header copy when the newer one is torn", async () => {
    const dir = new MemoryOpfsDirectory();
    let pool = await OpfsPool.open(dir);
    put(pool, "MANIFEST-000001", "m");
    pool.syncDir();
    pool.rename("MANIFEST-000001", "MANIFEST-000002");
    pool.syncDir();
    const slot = slotHolding(dir, "MANIFEST-000002");
    const header = decodeSlotHeader(dir.bytes(slot));
    dir.poke(slot, header.current! * HEADER_COPY_SIZE + 24, bytes("X")); // damage the name
    pool = await reopen(pool, dir);
    expect(pool.list()).toEqual(["MANIFEST-000001"]);
    expect(text(pool, "MANIFEST-000001")).toBe("m");
    pool.releaseAll();
  });

  it("never overwrites the last flushed header copy before the next flush", async () => {
    const dir = new MemoryOpfsDirectory();
    let pool = await OpfsPool.open(dir);
    put(pool, "a", "data");
    pool.syncDir();
    const slot = slotHolding(dir, "a");
    pool.rename("a", "b");
    pool.rename("b", "c");
    pool.rename("c", "d");
    const header = decodeSlotHeader(dir.bytes(slot));
    expect(header.copies.map((c) => c?.name).sort()).toEqual(["a", "d"]);
    // A torn write of the unflushed copy leaves the flushed state.
    dir.poke(slot, header.current! * HEADER_COPY_SIZE + 24, bytes("X"));
    pool = await reopen(pool, dir);
    expect(pool.list()).toEqual(["a"]);
    pool.releaseAll();
  });

  it("flushes in syncDir exactly the slots whose header changed since the last one", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir, { minFree: 6 });
    put(pool, "a", "1");
    put(pool, "b", "2");
    put(pool, "c", "3");
    pool.syncDir();
    const flushes = (): Record<string, number> =>
      Object.fromEntries([...dir.files].map(([name, file]) => [name, file.flushes]));
    const before = flushes();
    pool.rename("a", "a2");
    const id = pool.open("b", OpenMode.ReadWrite);
    pool.write(id, 0, bytes("data only"));
    pool.close(id);
    pool.syncDir();
    const after = flushes();
    const changed = Object.keys(after).filter((name) => after[name] !== before[name]);
    expect(changed).toEqual([slotHolding(dir, "a2")]);
    pool.syncDir();
    expect(flushes()).toEqual(after);
    pool.releaseAll();
  });

  it("keeps a file removed while open readable through its id, and frees its slot after the last close", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir, { minFree: 2 });
    put(pool, "wal-000001.log", "records");
    pool.syncDir();
    const slot = slotHolding(dir, "wal-000001.log");
    const a = pool.open("wal-000001.log", OpenMode.Read);
    const b = pool.open("wal-000001.log", OpenMode.ReadWrite);
    pool.remove("wal-000001.log");
    expect(pool.exists("wal-000001.log")).toBe(false);
    const buffer = new Uint8Array(7);
    expect(pool.read(a, 0, buffer)).toBe(7);
    expect(decoder.decode(buffer)).toBe("records");
    put(pool, "wal-000001.log", "again");
    expect(text(pool, "wal-000001.log")).toBe("again");
    expect(pool.freeSlots).toBe(0);
    expect(pool.usedSlots).toBe(2);
    pool.syncDir();
    pool.close(a);
    expect(pool.read(b, 0, buffer)).toBe(7);
    expect(pool.freeSlots).toBe(0);
    pool.close(b);
    expect(pool.freeSlots).toBe(1);
    expect(dir.bytes(slot)).toHaveLength(SLOT_HEADER_SIZE);
    pool.releaseAll();
  });

  it("keeps the old bytes of a file replaced by rename for the ids still open on it", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "CURRENT", "old");
    put(pool, "CURRENT.tmp", "new");
    const old = pool.open("CURRENT", OpenMode.Read);
    pool.rename("CURRENT.tmp", "CURRENT");
    pool.syncDir();
    const buffer = new Uint8Array(3);
    pool.read(old, 0, buffer);
    expect(decoder.decode(buffer)).toBe("old");
    expect(text(pool, "CURRENT")).toBe("new");
    expect(slotsHolding(dir, "CURRENT")).toHaveLength(1);
    const free = pool.freeSlots;
    pool.close(old);
    expect(pool.freeSlots).toBe(free + 1);
    pool.releaseAll();
  });

  it("reuses the slot of a removed file only after syncDir made the removal durable", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir, { minFree: 2 });
    put(pool, "x", "1234");
    pool.syncDir();
    const slot = slotHolding(dir, "x");
    pool.remove("x");
    expect(pool.freeSlots).toBe(1);
    expect(dir.bytes(slot)).toHaveLength(SLOT_HEADER_SIZE + 4);
    pool.syncDir();
    expect(pool.freeSlots).toBe(2);
    expect(dir.bytes(slot)).toHaveLength(SLOT_HEADER_SIZE);
    pool.releaseAll();
  });

  it("fails a create with EPOOL when no slot is free", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir, { minFree: 1 });
    put(pool, "a", "1");
    const error = errorOf(() => pool.open("b", OpenMode.CreateNew));
    expect(error.code).toBe("EPOOL");
    expect(error.message).toMatch(/slot pool ran dry/);
    expect(pool.exists("b")).toBe(false);
    await pool.reserve(2);
    expect(pool.freeSlots).toBe(2);
    put(pool, "b", "2");
    expect(text(pool, "b")).toBe("2");
    pool.releaseAll();
  });

  it("runs syncDir itself when a create finds only slots waiting for it", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir, { minFree: 1 });
    put(pool, "a", "1");
    pool.syncDir();
    pool.remove("a");
    expect(pool.freeSlots).toBe(0);
    put(pool, "b", "2");
    expect(pool.list()).toEqual(["b"]);
    pool.releaseAll();
  });

  it("reserves slots numbered after the highest one and trims the highest free ones", async () => {
    const dir = new MemoryOpfsDirectory();
    dir.put(slotFileName(41), new Uint8Array(0));
    dir.openDelayMs = 2;
    const pool = await OpfsPool.open(dir, { minFree: 1 });
    expect(pool.freeSlots).toBe(1);
    await pool.reserve(6);
    expect(dir.maxOpening).toBe(5);
    expect([...dir.files.keys()].sort()).toEqual([41, 42, 43, 44, 45, 46].map(slotFileName));
    put(pool, "a", "1"); // takes the lowest free slot
    expect(slotHolding(dir, "a")).toBe(slotFileName(41));
    await pool.trim(2);
    expect(pool.freeSlots).toBe(2);
    expect([...dir.files.keys()].sort()).toEqual([41, 42, 43].map(slotFileName));
    await pool.reserve(3);
    expect([...dir.files.keys()].sort()).toEqual([41, 42, 43, 47].map(slotFileName));
    await pool.reserve(1); // already enough
    expect(dir.files.size).toBe(4);
    await expect(pool.reserve(-1)).rejects.toMatchObject({ code: "EINVAL" });
    pool.releaseAll();
    const reopened = await OpfsPool.open(dir, { minFree: 0 });
    expect(reopened.list()).toEqual(["a"]);
    expect(reopened.freeSlots).toBe(3);
    reopened.releaseAll();
  });

  it("keeps a slot file that trim could not delete as a free slot for the next open", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir, { minFree: 3 });
    const remove = dir.remove.bind(dir);
    dir.remove = async (name) => {
      if (name === slotFileName(2)) {
        throw new DOMException("busy", "NoModificationAllowedError");
      }
      return remove(name);
    };
    await expect(pool.trim(1)).rejects.toMatchObject({
      code: "LOCKED",
      message: expect.stringMatching(/^remove "slot-000002\.shs": /) as unknown,
    });
    expect(pool.freeSlots).toBe(1);
    expect([...dir.files.keys()].sort()).toEqual([0, 2].map(slotFileName));
    pool.releaseAll();
    const reopened = await OpfsPool.open(dir, { minFree: 0 });
    expect(reopened.freeSlots).toBe(2);
    reopened.releaseAll();
  });

  it("opens every slot file in parallel", async () => {
    const dir = new MemoryOpfsDirectory();
    for (let i = 0; i < 20; i++) {
      dir.put(slotFileName(i), new Uint8Array(SLOT_HEADER_SIZE));
    }
    dir.openDelayMs = 5;
    const pool = await OpfsPool.open(dir);
    expect(dir.maxOpening).toBe(20);
    expect(pool.freeSlots).toBe(20);
    pool.releaseAll();
  });

  it("gives free slot files exactly 4096 bytes at open", async () => {
    const dir = new MemoryOpfsDirectory();
    const longFree = new Uint8Array(SLOT_HEADER_SIZE + 100);
    longFree.set(encodeHeaderCopy(4, undefined), 0);
    longFree.set(encodeHeaderCopy(2, "stale"), HEADER_COPY_SIZE);
    dir.put(slotFileName(0), longFree);
    dir.put(slotFileName(1), new Uint8Array(0));
    dir.put(slotFileName(2), new Uint8Array(SLOT_HEADER_SIZE + 9)); // no valid header: free
    const pool = await OpfsPool.open(dir, { minFree: 0 });
    expect(pool.list()).toEqual([]);
    expect(pool.freeSlots).toBe(3);
    for (const i of [0, 1, 2]) {
      expect(dir.bytes(slotFileName(i))).toHaveLength(SLOT_HEADER_SIZE);
    }
    pool.releaseAll();
  });

  it("turns a QuotaExceededError into code QUOTA, keeping its message", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    const id = pool.open("000009.sst", OpenMode.CreateNew);
    dir.quota = dir.usedBytes() + 100;
    const write = errorOf(() => pool.write(id, 0, new Uint8Array(200)));
    expect(write.code).toBe("QUOTA");
    expect(write.message).toMatch(/000009\.sst/);
    expect(write.message).toMatch(/The storage quota has been exceeded/);
    expect(codeOf(() => pool.truncate(id, 500))).toBe("QUOTA");
    pool.write(id, 0, new Uint8Array(50));
    dir.quota = Number.POSITIVE_INFINITY;
    await expect(pool.reserve(100).then(() => undefined)).resolves.toBeUndefined();
    dir.quota = dir.usedBytes();
    await expect(pool.reserve(200)).rejects.toMatchObject({ code: "QUOTA" });
    pool.close(id);
    pool.releaseAll();
  });

  it("treats a short write as QUOTA", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    const id = pool.open("a", OpenMode.CreateNew);
    dir.maxWrite = 10;
    const error = errorOf(() => pool.write(id, 0, new Uint8Array(20)));
    expect(error.code).toBe("QUOTA");
    expect(error.message).toMatch(/wrote 10 of 20 bytes/);
    pool.releaseAll();
  });

  it("turns any other handle failure into EIO naming the operation and the file", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "MANIFEST-000004", "m");
    const id = pool.open("MANIFEST-000004", OpenMode.ReadWrite);
    const cases: [Parameters<MemoryOpfsDirectory["failNext"]>[0], () => unknown, RegExp][] = [
      ["read", () => pool.read(id, 0, new Uint8Array(1)), /^read "MANIFEST-000004": /],
      ["write", () => pool.write(id, 0, bytes("x")), /^write "MANIFEST-000004": /],
      ["flush", () => pool.sync(id), /^sync "MANIFEST-000004": /],
      ["getSize", () => pool.size(id), /^size "MANIFEST-000004": /],
      ["truncate", () => pool.truncate(id, 0), /^truncate "MANIFEST-000004": /],
      ["write", () => pool.rename("MANIFEST-000004", "x"), /^rename "MANIFEST-000004": /],
      ["flush", () => pool.syncDir(), /^sync_dir "MANIFEST-000004": /],
    ];
    for (const [op, call, message] of cases) {
      dir.failNext(op, new TypeError("boom"));
      const error = errorOf(call);
      expect(error.code).toBe("EIO");
      expect(error.message).toMatch(message);
      expect(error.message).toMatch(/TypeError: boom/);
    }
    // A failed rename changed nothing.
    expect(pool.exists("MANIFEST-000004")).toBe(true);
    dir.failNext("write", "not even an Error");
    expect(codeOf(() => pool.open("new", OpenMode.CreateNew))).toBe("EIO");
    expect(pool.exists("new")).toBe(false);
    put(pool, "new", "fine");
    pool.close(id);
    pool.releaseAll();
  });

  it("locks a name once: a second lock is LOCKED until it is unlocked", async () => {
    const pool = await OpfsPool.open(new MemoryOpfsDirectory());
    const lock = pool.lock("LOCK");
    const error = errorOf(() => pool.lock("LOCK"));
    expect(error.code).toBe("LOCKED");
    expect(error.message).toMatch(/"LOCK" is locked by this database's worker; /);
    expect(pool.exists("LOCK")).toBe(false);
    pool.unlock(lock);
    expect(codeOf(() => pool.unlock(lock))).toBe("EBADF");
    pool.unlock(pool.lock("LOCK"));
    pool.releaseAll();
  });

  it("closes every handle in releaseAll, once, and fails every later call with a clear error", async () => {
    const dir = new MemoryOpfsDirectory();
    const pool = await OpfsPool.open(dir);
    put(pool, "a", "1");
    const id = pool.open("a", OpenMode.Read);
    pool.lock("LOCK");
    pool.releaseAll();
    expect(dir.openHandles()).toBe(0);
    pool.releaseAll();
    const error = errorOf(() => pool.read(id, 0, new Uint8Array(1)));
    expect(error.code).toBe("EBADF");
    expect(error.message).toMatch(/released/);
    expect(codeOf(() => pool.open("a", OpenMode.Read))).toBe("EBADF");
    expect(codeOf(() => pool.list())).toBe("EBADF");
    expect(codeOf(() => pool.syncDir())).toBe("EBADF");
    await expect(pool.reserve(10)).rejects.toMatchObject({ code: "EBADF" });
    const reopened = await OpfsPool.open(dir);
    expect(reopened.list()).toEqual(["a"]);
    reopened.releaseAll();
  });

  it("matches a model through random operations, reopens, and crashes after syncDir", async () => {
    let seed = 4242;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const dir = new MemoryOpfsDirectory();
    let pool = await OpfsPool.open(dir, { minFree: 8 });
    const model = new Map<string, string>();
    const names = ["a", "b", "c", "d", "e", "CURRENT", "CURRENT.tmp"];
    const open = new Map<number, string>(); // id -> name at open
    for (let step = 0; step < 2000; step++) {
      const name = names[random(names.length)]!;
      const other = names[random(names.length)]!;
      switch (random(14)) {
        case 0:
        case 1:
        case 13: {
          const content = `${name}@${step}`;
          put(pool, name, content, OpenMode.Create);
          model.set(name, content);
          break;
        }
        case 2:
          if (model.has(name)) {
            pool.rename(name, other);
            if (name !== other) {
              model.set(other, model.get(name)!);
              model.delete(name);
            }
          } else {
            expect(codeOf(() => pool.rename(name, other))).toBe("ENOENT");
          }
          break;
        case 3:
          if (model.has(name)) {
            pool.remove(name);
            model.delete(name);
          } else {
            expect(codeOf(() => pool.remove(name))).toBe("ENOENT");
          }
          break;
        case 4:
          pool.syncDir();
          break;
        case 9:
        case 10:
        case 11:
        case 12:
          // More renames and removes between syncDirs.
          if (model.has(name)) {
            pool.rename(name, other);
            if (name !== other) {
              model.set(other, model.get(name)!);
              model.delete(name);
            }
          }
          if (model.has(other) && random(2) === 0) {
            pool.remove(other);
            model.delete(other);
          }
          break;
        case 5:
          if (model.has(name) && open.size < 3) {
            open.set(pool.open(name, OpenMode.Read), name);
          }
          break;
        case 6:
          for (const id of open.keys()) {
            pool.close(id);
          }
          open.clear();
          break;
        case 7:
          await pool.reserve(8);
          break;
        case 8: {
          for (const id of open.keys()) {
            pool.close(id);
          }
          open.clear();
          const how = random(3);
          if (how === 0) {
            // Power loss after everything was made durable.
            for (const file of pool.list()) {
              const id = pool.open(file, OpenMode.Read);
              pool.sync(id);
              pool.close(id);
            }
            pool.syncDir();
            dir.crash();
          } else {
            // A close, with or without syncDir: every change shows after it.
            if (how === 1) {
              pool.syncDir();
            }
            pool.releaseAll();
          }
          pool = await OpfsPool.open(dir, { minFree: 8 });
          for (const [file, content] of model) {
            expect(text(pool, file)).toBe(content);
          }
        }
      }
      expect(pool.list().sort()).toEqual([...model.keys()].sort());
    }
    for (const [name, content] of model) {
      expect(text(pool, name)).toBe(content);
    }
    expect(pool.usedSlots).toBeLessThanOrEqual(model.size + 3 + 7);
    pool.releaseAll();
  });

  it("rejects open with the directory's own error when a slot file is held elsewhere, closing the rest", async () => {
    const dir = new MemoryOpfsDirectory();
    const first = await OpfsPool.open(dir);
    first.releaseAll();
    const holder = await dir.open(slotFileName(2), false);
    const error: unknown = await OpfsPool.open(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe("NoModificationAllowedError");
    expect(dir.openHandles()).toBe(1);
    holder.close();
    const pool = await OpfsPool.open(dir);
    pool.releaseAll();
  });
});
