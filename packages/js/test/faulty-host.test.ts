// The test storage hosts (src/archive/memory-host, fixtures/faulty-host): numbered faults, Linux's
// failed fsync, strict and random power losses, and process restarts (fork).
import { describe, expect, it } from "vitest";

import { OpenMode } from "../src/engine/storage-host.js";
import { FaultyHost, PAGE } from "./fixtures/faulty-host.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function text(host: FaultyHost, name: string): string | undefined {
  const inode = host.memory.names.get(name);
  return inode === undefined ? undefined : decoder.decode(inode.bytes());
}

function codeOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  return undefined;
}

/** A host with file `name` holding `durable` synced (entry too) and `extra` written after. */
function hostWith(name: string, durable: string, extra = ""): { host: FaultyHost; id: number } {
  const host = new FaultyHost();
  const id = host.open(name, OpenMode.CreateNew);
  host.write(id, 0, encoder.encode(durable));
  host.sync(id);
  host.syncDir();
  host.write(id, durable.length, encoder.encode(extra));
  return { host, id };
}

describe("FaultyHost faults", () => {
  it("failNth fails only call n: a write with ENOSPC after writing half its bytes", () => {
    const { host, id } = hostWith("a", "");
    host.failNth(2);
    host.write(id, 0, encoder.encode("1"));
    expect(host.firedAt).toBeUndefined();
    expect(codeOf(() => host.write(id, 1, encoder.encode("2222")))).toBe("ENOSPC");
    expect(host.firedAt).toMatchObject({ op: "write", name: "a" });
    host.write(id, 3, encoder.encode("3"));
    expect(text(host, "a")).toBe("1223");
  });

  it("failNth: EIO for reads, syncs and directory calls, ENOSPC for creating opens and truncations", () => {
    const { host, id } = hostWith("a", "abc");
    const cases: [() => unknown, string][] = [
      [() => host.read(id, 0, new Uint8Array(3)), "EIO"],
      [() => host.sync(id), "EIO"],
      [() => host.list(), "EIO"],
      [() => host.rename("a", "b"), "EIO"],
      [() => host.open("b", OpenMode.Read), "EIO"],
      [() => host.open("b", OpenMode.CreateNew), "ENOSPC"],
      [() => host.truncate(id, 1), "ENOSPC"],
    ];
    for (const [call, code] of cases) {
      host.failNth(1);
      expect(codeOf(call)).toBe(code);
    }
    expect(host.memory.names.has("b")).toBe(false);
    expect(text(host, "a")).toBe("abc");
  });

  it("crashAtNth fails call n and every later one until disarmed", () => {
    const { host, id } = hostWith("a", "abc");
    host.crashAtNth(2);
    expect(host.size(id)).toBe(3);
    expect(codeOf(() => host.sync(id))).toBe("EIO");
    expect(codeOf(() => host.exists("a"))).toBe("EIO");
    expect(codeOf(() => host.write(id, 0, encoder.encode("x")))).toBe("EIO");
    host.disarm();
    expect(text(host, "a")).toBe("abc");
  });

  it("a name pattern counts only calls on matching files", () => {
    const { host, id } = hostWith("wal-1.log", "abc");
    host.failNth(1, "ENOSPC", /\.sst$/);
    host.sync(id);
    expect(host.firedAt).toBeUndefined();
    expect(codeOf(() => host.open("000001.sst", OpenMode.Create))).toBe("ENOSPC");
  });
});

describe("FaultyHost power losses", () => {
  it("strict: files are cut back to what was synced, directory changes since syncDir undone", () => {
    const { host, id } = hostWith("a", "synced", " unsynced");
    const b = host.open("b", OpenMode.CreateNew);
    host.write(b, 0, encoder.encode("new file"));
    host.sync(b);
    host.rename("a", "c");
    host.powerLoss("strict");
    expect(text(host, "a")).toBe("synced");
    expect(host.memory.names.has("b")).toBe(false);
    expect(host.memory.names.has("c")).toBe(false);
    expect(codeOf(() => host.size(id))).toBe("EBADF");
  });

  it("a removal is undone without syncDir, and durable with it", () => {
    const { host } = hostWith("a", "kept");
    host.remove("a");
    const lost = host.fork();
    lost.powerLoss("strict");
    expect(text(lost, "a")).toBe("kept");
    host.syncDir();
    host.powerLoss("strict");
    expect(host.memory.names.has("a")).toBe(false);
  });

  it("pages of a failed sync are lost even after a later successful sync", () => {
    const { host, id } = hostWith("a", "");
    host.write(id, 0, encoder.encode("first page"));
    host.failNth(1);
    expect(codeOf(() => host.sync(id))).toBe("EIO");
    host.write(id, PAGE, encoder.encode("second page"));
    host.sync(id);
    host.powerLoss("strict");
    const bytes = host.memory.names.get("a")?.bytes() ?? new Uint8Array();
    expect(bytes.length).toBe(PAGE + "second page".length);
    expect(bytes.subarray(0, PAGE).every((b) => b === 0)).toBe(true);
    expect(decoder.decode(bytes.subarray(PAGE))).toBe("second page");
  });

  it("a random power loss keeps a seeded part of the unsynced data, never less than the synced", () => {
    const outcomes = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const { host } = hostWith("a", "synced", "x".repeat(3 * PAGE));
      host.open("b", OpenMode.CreateNew);
      const again = host.fork();
      host.powerLoss({ seed });
      again.powerLoss({ seed });
      const a = text(host, "a") ?? "";
      expect(a.startsWith("synced")).toBe(true);
      expect(text(again, "a")).toBe(a);
      outcomes.add(`${a.length} ${host.memory.names.has("b")}`);
    }
    const lengths = new Set([...outcomes].map((o) => Number(o.split(" ")[0])));
    expect(lengths.has(6)).toBe(true);
    expect(lengths.has(6 + 3 * PAGE)).toBe(true);
    expect([...lengths].some((n) => n > 6 && n < 6 + 3 * PAGE)).toBe(true);
    expect([...outcomes].some((o) => o.endsWith("true"))).toBe(true);
    expect([...outcomes].some((o) => o.endsWith("false"))).toBe(true);
  });

  it("fork is a restart: a copy with the files as the OS holds them and their durability state", () => {
    const { host, id } = hostWith("a", "synced", " unsynced");
    host.lock("LOCK");
    const copy = host.fork();
    expect(text(copy, "a")).toBe("synced unsynced");
    expect(() => copy.lock("LOCK")).not.toThrow();
    host.write(id, 0, encoder.encode("changed"));
    expect(text(copy, "a")).toBe("synced unsynced");
    copy.powerLoss("strict");
    expect(text(copy, "a")).toBe("synced");
  });
});
