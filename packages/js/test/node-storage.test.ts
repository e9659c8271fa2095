// Conformance of the Node.js storage backend (NodeFsStorage) to the StorageHost contract, and
// of its lock file to the protocol shared with native ShaleDB: the same process, live, dead,
// zombie and reused-pid owners, garbled files, and a real native process (examples/rust
// lock_holder) on either side of the lock.
import { execFileSync, spawn } from "node:child_process";
import type { ChildProcess, ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { currentOwner, ownerText, parseOwner, parseStat } from "../src/node/node-lock.js";
import { NodeFsStorage } from "../src/node/node-storage.js";
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
      () => storage.unlock(id),
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
      expectCode(() => storage.lock(name), "EINVAL");
    }
  });

  it("lists every file, the lock file included, but no directory", () => {
    expect(storage.list()).toEqual([]);
    storage.close(fileWith("000001.sst", "x"));
    storage.close(fileWith("MANIFEST-000002", "y"));
    storage.lock("LOCK");
    mkdirSync(join(dir, "subdir"));
    expect(storage.list().sort()).toEqual(["000001.sst", "LOCK", "MANIFEST-000002"]);
  });

  it("syncs the directory", () => {
    storage.close(fileWith("f", "x"));
    storage.rename("f", "g");
    expect(() => storage.syncDir()).not.toThrow();
  });

  it("releaseAll closes every file and releases every lock, and can be repeated", () => {
    const file = fileWith("f", "x");
    storage.lock("LOCK");
    storage.lock("OTHER");
    storage.releaseAll();
    expectCode(() => storage.size(file), "EBADF");
    expect(storage.list()).toEqual(["f"]);
    storage.releaseAll();
    const again = new NodeFsStorage(dir);
    again.unlock(again.lock("LOCK"));
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

function lockText(pid: number, start: string | number): string {
  return `shaledb-lock 1\npid ${pid}\nstart ${start}\n`;
}

function lockPath(): string {
  return join(dir, "LOCK");
}

/** A process that sleeps until killed. */
function sleeper(): ChildProcess & { pid: number } {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  children.push(child);
  if (child.pid === undefined) {
    throw new Error("could not spawn sleep");
  }
  return child as ChildProcess & { pid: number };
}

describe("lock file", () => {
  it("writes exactly the protocol's text and removes it on unlock", () => {
    const id = storage.lock("LOCK");
    const start = linux ? startOf("self") : "0";
    expect(readFileSync(lockPath(), "utf8")).toBe(lockText(process.pid, start));
    storage.unlock(id);
    expect(existsSync(lockPath())).toBe(false);
    storage.unlock(storage.lock("LOCK"));
  });

  it("a second lock in the same process is LOCKED, through this or another storage", () => {
    storage.lock("LOCK");
    const message = `pid ${process.pid} (this process)`;
    expectCode(() => storage.lock("LOCK"), "LOCKED", message);
    expectCode(() => new NodeFsStorage(dir).lock("LOCK"), "LOCKED", message);
  });

  it.runIf(linux)("a lock of a running process is LOCKED and names its pid", () => {
    const child = sleeper();
    writeFileSync(lockPath(), lockText(child.pid, startOf(child.pid)));
    const error = expectCode(() => storage.lock("LOCK"), "LOCKED", `by pid ${child.pid};`);
    expect(error.message).toContain("close the other handle or process");
    // Without a recorded start time, a live pid is trusted too.
    writeFileSync(lockPath(), lockText(child.pid, 0));
    expectCode(() => storage.lock("LOCK"), "LOCKED", `pid ${child.pid}`);
  });

  it.runIf(linux)("a lock of a killed process, or of a reused pid, is taken over", async () => {
    const child = sleeper();
    writeFileSync(lockPath(), lockText(child.pid, startOf(child.pid)));
    child.kill("SIGKILL");
    await once(child, "exit");
    storage.lock("LOCK");
    expect(readFileSync(lockPath(), "utf8")).toBe(ownerText(currentOwner()));
    storage.releaseAll();

    const live = sleeper();
    const otherStart = BigInt(startOf(live.pid)) + 1n;
    writeFileSync(lockPath(), lockText(live.pid, otherStart.toString()));
    storage.lock("LOCK");
    expect(readFileSync(lockPath(), "utf8")).toBe(ownerText(currentOwner()));
  });

  it.runIf(linux)("a lock of a zombie process is taken over", async () => {
    // `sleep 0` exits at once, and its parent (exec'd into `sleep 60`) never reaps it.
    const parent = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 60"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    children.push(parent);
    const [chunk] = (await once(parent.stdout ?? parent, "data")) as [Buffer];
    const zombie = Number(chunk.toString().trim());
    let state: string | undefined;
    for (let i = 0; i < 200 && state !== "Z"; i++) {
      state = parseStat(readFileSync(`/proc/${zombie}/stat`, "utf8"))?.state;
      if (state !== "Z") {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    expect(state).toBe("Z");
    writeFileSync(lockPath(), lockText(zombie, startOf(zombie)));
    storage.lock("LOCK");
    expect(readFileSync(lockPath(), "utf8")).toBe(ownerText(currentOwner()));
  });

  it("a garbled lock file is LOCKED while young and taken over once 5 s old", () => {
    writeFileSync(lockPath(), "shaledb-lock 1\npi");
    const young = new Date(Date.now() - 1_000);
    utimesSync(lockPath(), young, young);
    expectCode(() => storage.lock("LOCK"), "LOCKED", "writing the lock file right now");
    const future = new Date(Date.now() + 60_000);
    utimesSync(lockPath(), future, future);
    expectCode(() => storage.lock("LOCK"), "LOCKED", "writing the lock file right now");
    const old = new Date(Date.now() - 6_000);
    utimesSync(lockPath(), old, old);
    storage.lock("LOCK");
    expect(readFileSync(lockPath(), "utf8")).toBe(ownerText(currentOwner()));
  });

  it("unlock and releaseAll leave alone a lock file that someone else took over", () => {
    const other = lockText(1, 42);
    const id = storage.lock("LOCK");
    writeFileSync(lockPath(), other);
    storage.unlock(id);
    expect(readFileSync(lockPath(), "utf8")).toBe(other);
    rmSync(lockPath());
    storage.lock("LOCK");
    writeFileSync(lockPath(), other);
    storage.releaseAll();
    expect(readFileSync(lockPath(), "utf8")).toBe(other);
  });

  it("where liveness cannot be checked, a lock counts as held; the message says what to do", () => {
    currentOwner(); // our own start time, read while the platform is still the real one
    const platform = Object.getOwnPropertyDescriptor(process, "platform");
    Object.defineProperty(process, "platform", { value: "darwin", configurable: true });
    try {
      writeFileSync(lockPath(), lockText(0x7fff_fff0, 0));
      const error = expectCode(() => storage.lock("LOCK"), "LOCKED", "pid 2147483632");
      expect(error.message).toContain("cannot be checked on this platform");
      expect(error.message).toContain(`remove ${lockPath()}`);
    } finally {
      if (platform !== undefined) {
        Object.defineProperty(process, "platform", platform);
      }
    }
  });

  it("parses lock files as the Rust parser does", () => {
    const bytes = (text: string): Uint8Array => encoder.encode(text);
    expect(parseOwner(bytes(lockText(4242, 987654)))).toEqual({ pid: 4242, start: 987654n });
    expect(parseOwner(bytes("shaledb-lock 2\nhost x\npid 7\n"))).toEqual({ pid: 7, start: 0n });
    expect(parseOwner(bytes("shaledb-lock 1\r\npid +7 \r\nstart 18446744073709551615"))).toEqual({
      pid: 7,
      start: 18446744073709551615n,
    });
    for (const bad of [
      "",
      "shaledb-lock 1\n",
      "shaledb-lock 1\npid\n",
      "shaledb-lock 1\npid x\n",
      "hello\npid 1\n",
      "shaledb-lock 1\npid 1\nstart -3\n",
      "shaledb-lock 1\npid 4294967296\n",
      "shaledb-lock 1\npid 1\nstart 18446744073709551616\n",
      "\ufeffshaledb-lock 1\npid 1\n",
    ]) {
      expect(parseOwner(bytes(bad)), JSON.stringify(bad)).toBeUndefined();
    }
    expect(parseOwner(Uint8Array.of(0xff, 0xfe))).toBeUndefined();
  });

  it("parses /proc stat lines counting fields after the last parenthesis", () => {
    const stat =
      "123 (a) b (c)) S 1 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 55555 1000 200";
    expect(parseStat(stat)).toEqual({ state: "S", start: 55555n });
    expect(parseStat("garbage")).toBeUndefined();
    expect(parseStat("1 (x) S 1 2")).toBeUndefined();
  });
});

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
let lockHolder = "";

/** Builds examples/rust's lock_holder and returns the path of its executable. */
function buildLockHolder(): string {
  const output = execFileSync(
    "cargo",
    ["build", "-q", "-p", "shaledb-examples", "--bin", "lock_holder", "--message-format=json"],
    { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 << 20 },
  );
  for (const line of output.split("\n")) {
    if (line.includes('"compiler-artifact"') && line.includes('"lock_holder"')) {
      const message = JSON.parse(line) as { executable?: string | null };
      if (typeof message.executable === "string") {
        return message.executable;
      }
    }
  }
  throw new Error("cargo did not report the lock_holder executable");
}

interface Holder {
  readonly child: ChildProcessWithoutNullStreams & { pid: number };
  /** The first line it printed: `locked`, or an error code. */
  readonly line: string;
}

/** Starts lock_holder on `dir` and waits for its first line of output. */
async function startHolder(): Promise<Holder> {
  const child = spawn(lockHolder, [dir]);
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const end = out.indexOf("\n");
      if (end >= 0) {
        resolve(out.slice(0, end));
      }
    });
    child.on("error", reject);
    child.on("close", () => reject(new Error(`lock_holder printed no line: ${out}${err}`)));
  });
  if (child.pid === undefined) {
    throw new Error("lock_holder has no pid");
  }
  return { child: child as ChildProcessWithoutNullStreams & { pid: number }, line };
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    await once(child, "exit");
  }
}

describe("lock shared with native ShaleDB", () => {
  beforeAll(() => {
    lockHolder = buildLockHolder();
  }, 300_000);

  it("native ShaleDB sees a lock held by Node as LOCKED", async () => {
    storage.lock("LOCK");
    const { child, line } = await startHolder();
    expect(line).toBe("LOCKED");
    await exited(child);
    expect(child.exitCode).toBe(1);
  });

  it("Node sees a lock held by native ShaleDB as LOCKED, and takes it once released", async () => {
    const { child, line } = await startHolder();
    expect(line).toBe("locked");
    const start = linux ? startOf(child.pid) : "0";
    expect(readFileSync(lockPath(), "utf8")).toBe(lockText(child.pid, start));
    expectCode(() => storage.lock("LOCK"), "LOCKED", `pid ${child.pid}`);
    child.stdin.end();
    await exited(child);
    expect(child.exitCode).toBe(0);
    expect(existsSync(lockPath())).toBe(false);
    storage.lock("LOCK");
  });

  it.runIf(linux)("Node takes over the lock of a killed native process", async () => {
    const { child, line } = await startHolder();
    expect(line).toBe("locked");
    const start = startOf(child.pid);
    child.kill("SIGKILL");
    await exited(child);
    expect(readFileSync(lockPath(), "utf8")).toBe(lockText(child.pid, start));
    storage.lock("LOCK");
    expect(readFileSync(lockPath(), "utf8")).toBe(ownerText(currentOwner()));
  });
});
