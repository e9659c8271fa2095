// Conformance of the Node.js storage backend (NodeFsStorage) to the StorageHost contract: its
// files, and the lock primitives the core's lock-file protocol runs on (hard links, small reads
// with the file's age, removal only of unchanged bytes, lock files released by releaseAll and
// at exit, this process and others in /proc). The protocol itself, run over them through the
// package, is tested in node-lock.test.ts.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { codedError } from "../src/engine/storage-host.js";
import { NodeFsStorage, isFileEntry } from "../src/node/node-storage.js";
import { OpenMode } from "../src/engine/storage-host.js";

const linux = process.platform === "linux";
const encoder = new TextEncoder();

let dir: string;
let storage: NodeFsStorage;
/** Child processes to kill after each test, whatever happened. */
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "shaledb-nodefs-"));
  storage = new NodeFsStorage(dir);
});

afterEach(() => {
  storage.releaseAll();
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `f` and returns what it threw (failing the test if it returned). */
function thrown(f: () => unknown): Error & { code?: unknown } {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error & { code?: unknown };
  }
  throw new Error("expected an exception");
}

function expectCode(f: () => unknown, code: string, messagePart?: string): Error {
  const error = thrown(f);
  expect(error.code).toBe(code);
  if (messagePart !== undefined) {
    expect(error.message).toContain(messagePart);
  }
  return error;
}

function fileWith(name: string, text: string): number {
  const id = storage.open(name, OpenMode.Create);
  storage.write(id, 0, encoder.encode(text));
  return id;
}

/** Writes `name` holding `text` and tells the primitives it is a lock file held with it. */
function hold(name: string, text: string): Uint8Array {
  const bytes = encoder.encode(text);
  storage.close(fileWith(name, text));
  storage.lockPrimitives.lockHeld(name, bytes);
  return bytes;
}

function readAll(id: number): string {
  const buffer = new Uint8Array(storage.size(id));
  expect(storage.read(id, 0, buffer)).toBe(buffer.length);
  return new TextDecoder().decode(buffer);
}

describe("NodeFsStorage", () => {
  it("creates its directory with parents by default; without create a missing one fails", () => {
    const nested = join(dir, "a", "b");
    new NodeFsStorage(nested);
    expect(existsSync(nested)).toBe(true);
    const noCreate = { create: false };
    expectCode(() => new NodeFsStorage(join(dir, "missing"), noCreate), "ENOENT", "missing");
    writeFileSync(join(dir, "plain"), "x");
    expectCode(() => new NodeFsStorage(join(dir, "plain"), noCreate), "ENOTDIR", "plain");
  });

  it("a listing skips a name-only entry (Bun's) that vanished before its lookup, instead of failing", () => {
    const dir = mkdtempSync(join(tmpdir(), "shaledb-list-"));
    writeFileSync(join(dir, "kept"), "x");
    mkdirSync(join(dir, "sub"));
    // Bun gives names alone: each is looked up; a deletion job may have removed it meanwhile.
    expect(isFileEntry(dir, "kept", Buffer.from("kept"))).toBe(true);
    expect(isFileEntry(dir, "sub", Buffer.from("sub"))).toBe(false);
    expect(isFileEntry(dir, "removed-meanwhile", Buffer.from("removed-meanwhile"))).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it("opens by mode: Read/ReadWrite need the file, Create truncates, CreateNew refuses one", () => {
    expectCode(() => storage.open("000001.sst", OpenMode.Read), "ENOENT", "000001.sst");
    expectCode(() => storage.open("000001.sst", OpenMode.ReadWrite), "ENOENT", "000001.sst");
    const created = storage.open("000001.sst", OpenMode.CreateNew);
    storage.write(created, 0, encoder.encode("hello"));
    expectCode(() => storage.open("000001.sst", OpenMode.CreateNew), "EEXIST", "000001.sst");

    const reader = storage.open("000001.sst", OpenMode.Read);
    expect(readAll(reader)).toBe("hello");
    expect(() => storage.write(reader, 0, encoder.encode("x"))).toThrow(/000001\.sst/);

    const writer = storage.open("000001.sst", OpenMode.ReadWrite);
    storage.write(writer, 1, encoder.encode("EL"));
    expect(readAll(reader)).toBe("hELlo");

    const truncating = storage.open("000001.sst", OpenMode.Create);
    expect(storage.size(truncating)).toBe(0);
    expect(storage.size(reader)).toBe(0);
    expect(new Set([created, reader, writer, truncating]).size).toBe(4);
  });

  it("reads fewer bytes only at the end of the file, and 0 at or past it", () => {
    const id = fileWith("f", "0123456789");
    const buffer = new Uint8Array(4);
    expect(storage.read(id, 2, buffer)).toBe(4);
    expect(new TextDecoder().decode(buffer)).toBe("2345");
    expect(storage.read(id, 8, buffer)).toBe(2);
    expect(new TextDecoder().decode(buffer.subarray(0, 2))).toBe("89");
    expect(storage.read(id, 10, buffer)).toBe(0);
    expect(storage.read(id, 1000, buffer)).toBe(0);
    expect(storage.read(id, 0, new Uint8Array(0))).toBe(0);
    expectCode(() => storage.read(id, -1, buffer), "EINVAL", '"f"');
  });

  it("reads into and writes from views inside a larger buffer, touching only the view", () => {
    const memory = new Uint8Array(64).fill(0xee);
    memory.set(encoder.encode("payload"), 20);
    const id = storage.open("f", OpenMode.Create);
    storage.write(id, 0, memory.subarray(20, 27));
    expect(readAll(id)).toBe("payload");
    const target = new Uint8Array(64).fill(0xaa);
    expect(storage.read(id, 3, target.subarray(10, 20))).toBe(4);
    expect(new TextDecoder().decode(target.subarray(10, 14))).toBe("load");
    expect(target[9]).toBe(0xaa);
    expect(target[14]).toBe(0xaa);
  });

  it("writes past the end fill the gap with zeros; truncate cuts and extends with zeros", () => {
    const id = storage.open("f", OpenMode.Create);
    storage.write(id, 6, encoder.encode("ab"));
    expect(storage.size(id)).toBe(8);
    const buffer = new Uint8Array(8);
    expect(storage.read(id, 0, buffer)).toBe(8);
    expect([...buffer]).toEqual([0, 0, 0, 0, 0, 0, 97, 98]);

    storage.truncate(id, 7);
    expect(storage.size(id)).toBe(7);
    storage.truncate(id, 9);
    expect(storage.read(id, 5, buffer)).toBe(4);
    expect([...buffer.subarray(0, 4)]).toEqual([0, 97, 0, 0]);
    storage.sync(id);
    storage.write(id, 0, new Uint8Array(0));
    expect(storage.size(id)).toBe(9);
  });

  it("extend grows a file with zeros and never shortens it", () => {
    const id = storage.open("f", OpenMode.Create);
    storage.write(id, 0, encoder.encode("abc"));
    expect(storage.extend(id, 4096)).toBe(true);
    expect(storage.size(id)).toBe(4096);
    const buffer = new Uint8Array(5);
    expect(storage.read(id, 0, buffer)).toBe(5);
    expect([...buffer]).toEqual([97, 98, 99, 0, 0]);
    expect(storage.extend(id, 10)).toBe(true);
    expect(storage.size(id)).toBe(4096);
    storage.close(id);
    expect(() => storage.extend(id, 10)).toThrow(expect.objectContaining({ code: "EBADF" }));
  });

  it("writes large buffers whole", () => {
    const data = new Uint8Array(3 << 20).map((_, i) => i * 7);
    const id = storage.open("big", OpenMode.Create);
    storage.write(id, 1, data);
    const back = new Uint8Array(data.length);
    expect(storage.read(id, 1, back)).toBe(data.length);
    expect(Buffer.from(back).equals(Buffer.from(data))).toBe(true);
  });

  it("closes ids; unknown and closed ids are EBADF", () => {
    const id = fileWith("f", "x");
    storage.close(id);
    for (const call of [
      () => storage.read(id, 0, new Uint8Array(1)),
      () => storage.write(id, 0, new Uint8Array(1)),
      () => storage.sync(id),
      () => storage.size(id),
      () => storage.truncate(id, 0),
      () => storage.close(id),
      () => storage.size(12345),
    ]) {
      expectCode(call, "EBADF");
    }
  });

  it("exists, remove (missing: ENOENT) and rename (replacing the target)", () => {
    expect(storage.exists("a")).toBe(false);
    storage.close(fileWith("a", "new"));
    storage.close(fileWith("b", "old and longer"));
    expect(storage.exists("a")).toBe(true);
    storage.rename("a", "b");
    expect(storage.exists("a")).toBe(false);
    expect(readAll(storage.open("b", OpenMode.Read))).toBe("new");
    expectCode(() => storage.rename("a", "c"), "ENOENT", "a -> c");
    storage.remove("b");
    expect(storage.exists("b")).toBe(false);
    expectCode(() => storage.remove("b"), "ENOENT", '"b"');
  });

  it("refuses names that are not plain file names", () => {
    for (const name of ["", ".", "..", "../x", "a/b", "a\\b", "c:x", "a\0b"]) {
      expectCode(() => storage.open(name, OpenMode.Create), "EINVAL");
      expectCode(() => storage.exists(name), "EINVAL");
      expectCode(() => storage.lockPrimitives.readSmall(name, 16), "EINVAL");
      expectCode(() => storage.lockPrimitives.hardLink("a", name), "EINVAL");
      expectCode(() => storage.lockPrimitives.hardLink(name, "a"), "EINVAL");
      expectCode(() => storage.lockPrimitives.removeIfUnchanged(name, new Uint8Array(), 1), "EINVAL");
      expectCode(() => storage.lockPrimitives.lockHeld(name, new Uint8Array()), "EINVAL");
    }
  });

  it("lists every file, the lock file included, but no directory", () => {
    expect(storage.list()).toEqual([]);
    storage.close(fileWith("000001.sst", "x"));
    storage.close(fileWith("MANIFEST-000002", "y"));
    storage.close(fileWith("LOCK", "z"));
    mkdirSync(join(dir, "subdir"));
    expect(storage.list().sort()).toEqual(["000001.sst", "LOCK", "MANIFEST-000002"]);
  });

  it("syncs the directory", () => {
    storage.close(fileWith("f", "x"));
    storage.rename("f", "g");
    expect(() => storage.syncDir()).not.toThrow();
  });

  it("releaseAll closes every file and releases every lock file held, and can be repeated", () => {
    const file = fileWith("f", "x");
    hold("LOCK", "mine");
    hold("OTHER", "mine too");
    storage.releaseAll();
    expectCode(() => storage.size(file), "EBADF");
    expect(storage.list()).toEqual(["f"]);
    storage.releaseAll();
    expect(storage.list()).toEqual(["f"]);
  });
});

/** Field 22 of /proc/<pid>/stat, counted after the last ')' (an implementation of its own). */
function startOf(pid: number | "self"): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = fields[19];
  expect(start).toMatch(/^[0-9]+$/);
  return start ?? "";
}

describe("lock primitives", () => {
  const primitives = (): NodeFsStorage["lockPrimitives"] => storage.lockPrimitives;

  it("hardLink links a new name to the same bytes, EEXIST if the name exists, and keeps a failing link's code", () => {
    storage.close(fileWith("a", "text"));
    primitives().hardLink("a", "b");
    expect(readFileSync(join(dir, "b"), "utf8")).toBe("text");
    storage.close(fileWith("c", "other"));
    expectCode(() => primitives().hardLink("a", "c"), "EEXIST", '"c"');
    expect(readFileSync(join(dir, "c"), "utf8")).toBe("other");
    expectCode(() => primitives().hardLink("missing", "d"), "ENOENT");
    const noLinks = new NodeFsStorage(dir, {
      link: () => {
        throw codedError("EPERM", "link: EPERM (simulated)");
      },
    });
    expectCode(() => noLinks.lockPrimitives.hardLink("a", "e"), "EPERM", '"e"');
    expect(existsSync(join(dir, "e"))).toBe(false);
    // The default is fs.linkSync itself.
    const linked = new NodeFsStorage(dir, { link: linkSync });
    linked.lockPrimitives.hardLink("a", "f");
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("text");
  });

  it("readSmall reads at most max bytes and the age of the file; missing: ENOENT", () => {
    writeFileSync(join(dir, "LOCK"), "0123456789");
    const old = new Date(Date.now() - 10_000);
    utimesSync(join(dir, "LOCK"), old, old);
    const small = primitives().readSmall("LOCK", 4);
    expect(new TextDecoder().decode(small.bytes)).toBe("0123");
    expect(small.ageMs).toBeGreaterThanOrEqual(9_000);
    expect(small.ageMs).toBeLessThan(60_000);
    expect(new TextDecoder().decode(primitives().readSmall("LOCK", 4096).bytes)).toBe("0123456789");
    const future = new Date(Date.now() + 60_000);
    utimesSync(join(dir, "LOCK"), future, future);
    expect(primitives().readSmall("LOCK", 4096).ageMs).toBeLessThan(0);
    expectCode(() => primitives().readSmall("missing", 4), "ENOENT", '"missing"');
  });

  it("removeIfUnchanged removes only a file whose first limit bytes are exactly the bytes given", () => {
    const text = encoder.encode("shaledb-lock 1\npid 1\nstart 0\n");
    writeFileSync(join(dir, "LOCK"), text);
    expect(primitives().removeIfUnchanged("LOCK", text.subarray(0, 5), 4096)).toBe(false);
    expect(primitives().removeIfUnchanged("LOCK", encoder.encode("other"), 4096)).toBe(false);
    expect(existsSync(join(dir, "LOCK"))).toBe(true);
    // Compared on its first `limit` bytes only (a file too long to be a lock is judged so).
    expect(primitives().removeIfUnchanged("LOCK", text.subarray(0, 5), 5)).toBe(true);
    expect(existsSync(join(dir, "LOCK"))).toBe(false);
    expect(primitives().removeIfUnchanged("LOCK", text, 4096)).toBe(false);
    writeFileSync(join(dir, "LOCK"), text);
    expect(primitives().removeIfUnchanged("LOCK", text, 4096)).toBe(true);
  });

  it("a lock file held is released by releaseAll only while it holds our bytes, and forgotten once released by the core", () => {
    const mine = hold("LOCK", "mine");
    writeFileSync(join(dir, "LOCK"), "taken over by another process");
    storage.releaseAll();
    expect(readFileSync(join(dir, "LOCK"), "utf8")).toBe("taken over by another process");

    rmSync(join(dir, "LOCK"));
    hold("LOCK", "mine");
    expect(primitives().removeIfUnchanged("LOCK", mine, 4096)).toBe(true);
    // Released by the core, then written again by someone else with the same bytes: no longer
    // ours to remove.
    writeFileSync(join(dir, "LOCK"), "mine");
    storage.releaseAll();
    expect(readFileSync(join(dir, "LOCK"), "utf8")).toBe("mine");
  });

  it("keeps a copy of the bytes it is told about (they are a view into WebAssembly memory)", () => {
    const view = encoder.encode("mine");
    storage.close(fileWith("LOCK", "mine"));
    primitives().lockHeld("LOCK", view);
    view.fill(0);
    storage.releaseAll();
    expect(existsSync(join(dir, "LOCK"))).toBe(false);
  });

  it("releases the lock files held when the process exits, if still ours", () => {
    // The built module (the child cannot load TypeScript); `npm test` builds it first.
    const source = fileURLToPath(new URL("../dist/node/node-storage.js", import.meta.url));
    const script = `
      const { NodeFsStorage } = await import(${JSON.stringify(source)});
      const { writeFileSync } = await import("node:fs");
      const storage = new NodeFsStorage(process.argv[1]);
      const held = (name, text) => {
        writeFileSync(process.argv[1] + "/" + name, text);
        storage.lockPrimitives.lockHeld(name, new TextEncoder().encode(text));
      };
      held("LOCK", "mine");
      held("OTHER", "mine");
      writeFileSync(process.argv[1] + "/OTHER", "taken over");
      held("GONE", "mine");
      storage.lockPrimitives.removeIfUnchanged("GONE", new TextEncoder().encode("mine"), 4096);
      writeFileSync(process.argv[1] + "/GONE", "mine");
    `;
    const result = spawnSync(
      process.execPath,
      ["--input-type=module", "-e", script, dir],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(storage.list().sort()).toEqual(["GONE", "OTHER"]);
    expect(readFileSync(join(dir, "OTHER"), "utf8")).toBe("taken over");
  });

  it("processId is this process's pid", () => {
    expect(primitives().processId()).toBe(process.pid);
  });

  it.runIf(linux)("processStat reads /proc: this process, another, and null for a process that is gone", async () => {
    const self = primitives().processStat(undefined);
    expect(self).toMatch(new RegExp(`^${process.pid} \\(`));
    expect(self?.slice(self.lastIndexOf(")") + 2).split(" ")[19]).toBe(startOf("self"));
    const child = spawn("sleep", ["60"], { stdio: "ignore" });
    children.push(child);
    const pid = child.pid ?? 0;
    expect(primitives().processStat(pid)).toMatch(new RegExp(`^${pid} \\(sleep\\) `));
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(primitives().processStat(pid)).toBeNull();
  });

  // Regression: the status line was decoded as strict UTF-8, so a process whose command name
  // is not UTF-8 had an unreadable status and counted as alive whatever its state.
  it.runIf(linux)("processStat reads the status of a process whose command name is not UTF-8", async () => {
    const sleep = ["/bin/sleep", "/usr/bin/sleep"].find((path) => existsSync(path)) ?? "sleep";
    const link = Buffer.concat([Buffer.from(`${dir}/sl`), Buffer.from([0xff]), Buffer.from("eep")]);
    symlinkSync(sleep, link);
    // Node passes strings as UTF-8: the shell makes the byte 0xff itself.
    const child = spawn("sh", ["-c", 'exec "$(printf "%s/sl\\377eep" "$1")" 60', "sh", dir], {
      stdio: "ignore",
    });
    children.push(child);
    for (let i = 0; i < 200 && !(primitives().processStat(child.pid) ?? "").includes("(sl"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const stat = primitives().processStat(child.pid);
    expect(stat).toContain("(sl\ufffdeep)");
  });

  it("processStat is undefined where the platform has no /proc", () => {
    const platform = Object.getOwnPropertyDescriptor(process, "platform");
    Object.defineProperty(process, "platform", { value: "darwin", configurable: true });
    try {
      expect(primitives().processStat(undefined)).toBeUndefined();
      expect(primitives().processStat(1)).toBeUndefined();
    } finally {
      if (platform !== undefined) {
        Object.defineProperty(process, "platform", platform);
      }
    }
  });

  it("path is the full path of a name, for messages", () => {
    expect(primitives().path("LOCK")).toBe(join(dir, "LOCK"));
  });
});
