// The lock of a database directory in Node.js: the core's lock-file protocol (docs/FORMAT.md,
// "LOCK file"; crates/core/src/storage/lock_file.rs), run over NodeFsStorage's lockPrimitives,
// observed through the package's open. The lock file appears complete (written aside, then
// hard-linked into place), temporary files left behind block nothing, without hard links the
// protocol falls back to create-then-write; an existing lock is judged by its owner (this
// process, live, dead, zombie, a reused pid, unparseable, a platform without /proc); a process
// that exits without close() releases its lock; and native ShaleDB (examples/rust lock_holder)
// honours it and is honoured on either side.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess, ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { openSync, type SyncDatabase } from "shaledb";

import { type LinkFn } from "../src/node/node-lock.js";
import { codedError } from "../src/engine/storage-host.js";
import { NodeFsStorage } from "../src/node/node-storage.js";
import { openOnHost } from "./fixtures/host-database.js";
import { BUILD_TIMEOUT_MS, buildNative } from "./fixtures/processes.js";

const linux = process.platform === "linux";

let dir: string;
/** Databases and child processes to close or kill after each test, whatever happened. */
const opened: { close(): void; readonly closed: boolean }[] = [];
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "shaledb-node-lock-"));
});

afterEach(() => {
  for (const db of opened.splice(0)) {
    if (!db.closed) {
      db.close();
    }
  }
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Opens the database in `dir` through the package, closed after the test. */
function openHere(): SyncDatabase<string, string> {
  const db = openSync(dir, { autoMaintenance: false });
  opened.push(db);
  return db;
}

/** Opens the database in `dir` on a NodeFsStorage whose hard links fail with `code`. */
function openWithoutHardLinks(code: string): SyncDatabase<string, string> {
  const link: LinkFn = () => {
    throw codedError(code, `link: ${code} (simulated)`);
  };
  const db = openOnHost(new NodeFsStorage(dir, { link }), { autoMaintenance: false });
  opened.push(db);
  return db;
}

function lockPath(): string {
  return join(dir, "LOCK");
}

/** The directory's entries whose names start with `LOCK`, sorted. */
function lockEntries(): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith("LOCK"))
    .sort();
}

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

/** `f` fails with `LOCKED`, its message containing `messagePart` if given. */
function expectLocked(f: () => unknown, messagePart?: string): Error {
  const error = thrown(f);
  expect(error.code, error.message).toBe("LOCKED");
  expect(error.message).toContain("close the other handle or process first");
  if (messagePart !== undefined) {
    expect(error.message).toContain(messagePart);
  }
  return error;
}

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

/** The text of a lock file this thread writes: on Linux it names the thread (its task id). */
function myText(): string {
  const text = lockText(process.pid, linux ? startOf("self") : 0);
  return linux ? `${text}thread ${readlinkSync("/proc/thread-self").split("/").pop() ?? ""}\n` : text;
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

/**
 * Polls `path` in a worker thread until stopped; resolves with how often it read the expected
 * text and what else (other than "missing") it read.
 */
function pollLockFile(path: string, expected: string): {
  ready: Promise<void>;
  stop: () => Promise<{ complete: number; incomplete: string[] }>;
} {
  const stopFlag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `
    const { readFileSync } = require("node:fs");
    const { workerData, parentPort } = require("node:worker_threads");
    const stop = workerData.stop;
    let complete = 0;
    const incomplete = [];
    parentPort.postMessage("ready");
    while (Atomics.load(stop, 0) === 0) {
      let text;
      try {
        text = readFileSync(workerData.path, "latin1");
      } catch {
        continue;
      }
      if (text === workerData.expected) complete++;
      else if (incomplete.length < 10) incomplete.push(text);
    }
    parentPort.postMessage({ complete, incomplete });
    `,
    { eval: true, workerData: { path, expected, stop: stopFlag } },
  );
  const messages: unknown[] = [];
  const waiters: (() => void)[] = [];
  worker.on("message", (message: unknown) => {
    messages.push(message);
    waiters.splice(0).forEach((wake) => wake());
  });
  const nth = async (n: number): Promise<unknown> => {
    while (messages.length <= n) {
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
    return messages[n];
  };
  return {
    ready: nth(0).then(() => undefined),
    stop: async () => {
      Atomics.store(stopFlag, 0, 1);
      const result = (await nth(1)) as { complete: number; incomplete: string[] };
      await worker.terminate();
      return result;
    },
  };
}

describe("the lock file appears complete", () => {
  it("is never observed empty or partial by a reader polling while many open/close cycles run", async () => {
    const mine = myText();
    openHere().close(); // the database exists: the cycles only open and close it
    const poller = pollLockFile(lockPath(), mine);
    await poller.ready;
    const deadline = Date.now() + 15_000;
    let cycles = 0;
    for (; cycles < 500 && Date.now() < deadline; cycles++) {
      const db = openHere();
      expect(readFileSync(lockPath(), "latin1")).toBe(mine);
      db.close();
    }
    const { complete, incomplete } = await poller.stop();
    expect(incomplete).toEqual([]);
    expect(complete, "the reader never saw the lock file").toBeGreaterThan(0);
    expect(cycles).toBeGreaterThan(10);
    expect(lockEntries(), "no temporary file is left behind").toEqual([]);
  }, 60_000);

  it("temporary files left behind (by a process killed between write and link) do not block the lock", () => {
    const leftovers = [`LOCK.${process.pid}.0000000000000000.tmp`, "LOCK.1.ffffffffffffffff.tmp"];
    writeFileSync(join(dir, leftovers[0] as string), myText());
    writeFileSync(join(dir, leftovers[1] as string), "");
    const db = openHere();
    expect(readFileSync(lockPath(), "utf8")).toBe(myText());
    expect(lockEntries(), "only LOCK was added").toEqual(["LOCK", ...leftovers].sort());
    db.close();
    expect(lockEntries()).toEqual([...leftovers].sort());
    openHere().close();
  });

  it("a held lock refuses a second open in this process with LOCKED naming this process, and leaves no temporary file", () => {
    const db = openHere();
    for (let i = 0; i < 3; i++) {
      expectLocked(() => openHere(), `"LOCK" is locked by pid ${process.pid} (this process)`);
    }
    expect(lockEntries()).toEqual(["LOCK"]);
    db.close();
    expect(lockEntries()).toEqual([]);
  });

  for (const code of ["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS"]) {
    it(`without hard links (link fails with ${code}) the lock falls back to create-then-write, and both paths exclude each other`, () => {
      const fallback = openWithoutHardLinks(code);
      expect(readFileSync(lockPath(), "utf8")).toBe(myText());
      expect(lockEntries()).toEqual(["LOCK"]);
      expectLocked(() => openWithoutHardLinks(code), "(this process)");
      expectLocked(() => openHere(), "(this process)");
      fallback.close();
      expect(lockEntries()).toEqual([]);
      const linked = openHere();
      expectLocked(() => openWithoutHardLinks(code), "(this process)");
      linked.close();
      expect(lockEntries()).toEqual([]);
    });
  }
});

describe("an existing lock file is judged by its owner", () => {
  it("the lock holds exactly the protocol's text while open and is removed on close", () => {
    const db = openHere();
    expect(readFileSync(lockPath(), "utf8")).toBe(myText());
    db.close();
    expect(existsSync(lockPath())).toBe(false);
  });

  it("a second open in the same process is LOCKED, however the storage is reached", () => {
    const db = openHere();
    const message = `pid ${process.pid} (this process)`;
    expectLocked(() => openHere(), message);
    expectLocked(() => openOnHost(new NodeFsStorage(dir)), message);
    db.close();
  });

  it.runIf(linux)("a lock of a running process is LOCKED and names its pid", () => {
    const child = sleeper();
    writeFileSync(lockPath(), lockText(child.pid, startOf(child.pid)));
    expectLocked(() => openHere(), `"LOCK" is locked by pid ${child.pid};`);
    // Without a recorded start time, a live pid is trusted too.
    writeFileSync(lockPath(), lockText(child.pid, 0));
    expectLocked(() => openHere(), `pid ${child.pid}`);
    expect(readFileSync(lockPath(), "utf8")).toBe(lockText(child.pid, 0));
  });

  it.runIf(linux)("a lock of a killed process, or of a reused pid, is taken over", async () => {
    const child = sleeper();
    writeFileSync(lockPath(), lockText(child.pid, startOf(child.pid)));
    child.kill("SIGKILL");
    await once(child, "exit");
    const db = openHere();
    expect(readFileSync(lockPath(), "utf8")).toBe(myText());
    db.close();

    const live = sleeper();
    const otherStart = BigInt(startOf(live.pid)) + 1n;
    writeFileSync(lockPath(), lockText(live.pid, otherStart.toString()));
    openHere();
    expect(readFileSync(lockPath(), "utf8")).toBe(myText());
  });

  it.runIf(linux)("a lock of a zombie process is taken over", async () => {
    // The child exits at once, and its parent never waits for it. (A shell's `sleep 0 &` before
    // `exec sleep 60` was a race: the shell could reap its child before the exec, under load.)
    const parent = spawn(
      "perl",
      ["-e", "$| = 1; my $pid = fork() // die; exit 0 if $pid == 0; print \"$pid\\n\"; sleep 60"],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    children.push(parent);
    const [chunk] = (await once(parent.stdout ?? parent, "data")) as [Buffer];
    const zombie = Number(chunk.toString().trim());
    const stateOf = (): string => {
      const stat = readFileSync(`/proc/${zombie}/stat`, "latin1");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "";
    };
    for (let i = 0; i < 200 && stateOf() !== "Z"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(stateOf()).toBe("Z");
    writeFileSync(lockPath(), lockText(zombie, startOf(zombie)));
    openHere();
    expect(readFileSync(lockPath(), "utf8")).toBe(myText());
  });

  it("an unparseable lock file is LOCKED while young (or dated in the future) and taken over once 5 s old", () => {
    writeFileSync(lockPath(), "shaledb-lock 1\npi");
    const young = new Date(Date.now() - 1_000);
    utimesSync(lockPath(), young, young);
    expectLocked(() => openHere(), "writing the lock file right now");
    const future = new Date(Date.now() + 60_000);
    utimesSync(lockPath(), future, future);
    expectLocked(() => openHere(), "writing the lock file right now");
    const old = new Date(Date.now() - 6_000);
    utimesSync(lockPath(), old, old);
    openHere();
    expect(readFileSync(lockPath(), "utf8")).toBe(myText());
  });

  it("closing leaves alone a lock file that someone else took over meanwhile", () => {
    const other = lockText(1, 42);
    const db = openHere();
    writeFileSync(lockPath(), other);
    db.close();
    expect(readFileSync(lockPath(), "utf8")).toBe(other);
  });

  it("where liveness cannot be checked, a lock counts as held; the message says what to remove", () => {
    const platform = Object.getOwnPropertyDescriptor(process, "platform");
    Object.defineProperty(process, "platform", { value: "darwin", configurable: true });
    try {
      writeFileSync(lockPath(), lockText(0x7fff_fff0, 0));
      const error = expectLocked(() => openHere(), "pid 2147483632");
      expect(error.message).toContain("cannot be checked on this platform");
      expect(error.message).toContain(`remove ${lockPath()}`);
      rmSync(lockPath());
      // Our own lock then records start 0, and still refuses a second open here.
      const db = openHere();
      expect(readFileSync(lockPath(), "utf8")).toBe(lockText(process.pid, 0));
      expectLocked(() => openHere(), "(this process)");
      db.close();
      expect(existsSync(lockPath())).toBe(false);
    } finally {
      if (platform !== undefined) {
        Object.defineProperty(process, "platform", platform);
      }
    }
  });
});

describe("a Node process that ends without close()", () => {
  const packageDir = fileURLToPath(new URL("..", import.meta.url));

  /** Runs `script` (an ES module importing `shaledb`) in a child Node process. */
  function runNode(script: string): { status: number | null; stderr: string } {
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script, dir], {
      cwd: packageDir,
      encoding: "utf8",
      timeout: 30_000,
    });
    return { status: result.status, stderr: result.stderr };
  }

  for (const [how, end] of [
    ["calls process.exit()", "process.exit(0);"],
    ["lets its event loop run out", ""],
  ] as const) {
    it(`releases its lock when it ${how}`, () => {
      const { status, stderr } = runNode(
        `import { openSync } from "shaledb";
         const db = openSync(process.argv[1]);
         db.put("k", "v", { sync: true });
         const lock = (await import("node:fs")).readFileSync(process.argv[1] + "/LOCK", "utf8");
         if (!lock.includes("pid " + process.pid + "\\n")) throw new Error("not locked: " + lock);
         ${end}`,
      );
      expect(stderr).toBe("");
      expect(status).toBe(0);
      expect(lockEntries()).toEqual([]);
      const db = openHere();
      expect(db.get("k")).toBe("v");
    });
  }
});

let lockHolder = "";

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
    lockHolder = buildNative("lock_holder").lock_holder ?? "";
  }, BUILD_TIMEOUT_MS);

  it("native ShaleDB sees a lock held by Node as LOCKED", async () => {
    openHere();
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
    expectLocked(() => openHere(), `pid ${child.pid}`);
    child.stdin.end();
    await exited(child);
    expect(child.exitCode).toBe(0);
    expect(existsSync(lockPath())).toBe(false);
    openHere();
  });

  it.runIf(linux)("Node takes over the lock of a killed native process", async () => {
    const { child, line } = await startHolder();
    expect(line).toBe("locked");
    const start = startOf(child.pid);
    child.kill("SIGKILL");
    await exited(child);
    expect(readFileSync(lockPath(), "utf8")).toBe(lockText(child.pid, start));
    openHere();
    expect(readFileSync(lockPath(), "utf8")).toBe(myText());
  });
});
