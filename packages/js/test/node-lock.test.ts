// The lock file appears complete: its text is written into a temporary file that is then
// hard-linked into place, so no reader ever sees it empty or half written (with the old
// create-then-write, a live lock whose owner stalled between the two could be judged garbled,
// hence stale, and broken). Temporary files left behind block nothing; without hard links the
// protocol falls back to create-then-write. And the protocol's text is one text, byte for byte,
// in crates/core/src/storage/lock_file.rs, src/node/node-lock.ts and docs/FORMAT.md.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import {
  GARBLED_LOCK_STALE_AFTER_MS,
  LOCK_ATTEMPTS,
  acquireLock,
  codedError,
  currentOwner,
  ownerText,
  type LinkFn,
} from "../src/node/node-lock.js";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "shaledb-node-lock-"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function lockPath(): string {
  return join(dir, "LOCK");
}

/** The directory's entries, sorted. */
function entries(): string[] {
  return readdirSync(dir).sort();
}

/** The code of what `f` threw (it must throw). */
function codeOf(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  throw new Error("expected an exception");
}

/** A `link` that fails as on a file system without hard links. */
function noHardLinks(code: string): LinkFn {
  return () => {
    throw codedError(code, `link: ${code} (simulated)`);
  };
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
  it("is never observed empty or partial by a reader polling while many acquire/release cycles run", async () => {
    const mine = ownerText(currentOwner());
    const poller = pollLockFile(lockPath(), mine);
    await poller.ready;
    const deadline = Date.now() + 20_000;
    for (let cycle = 0; cycle < 3000 && Date.now() < deadline; cycle++) {
      const held = acquireLock(lockPath(), "LOCK");
      expect(readFileSync(lockPath(), "latin1")).toBe(mine);
      held.release();
    }
    const { complete, incomplete } = await poller.stop();
    expect(incomplete).toEqual([]);
    expect(complete, "the reader never saw the lock file").toBeGreaterThan(0);
    expect(entries(), "no temporary file is left behind").toEqual([]);
  }, 60_000);

  it("temporary files left behind (by a process killed between write and link) do not block the lock", () => {
    const me = currentOwner();
    const leftovers = [`LOCK.${me.pid}.0000000000000000.tmp`, "LOCK.1.ffffffffffffffff.tmp"];
    writeFileSync(join(dir, leftovers[0] as string), ownerText(me));
    writeFileSync(join(dir, leftovers[1] as string), "");
    const held = acquireLock(lockPath(), "LOCK");
    expect(readFileSync(lockPath(), "utf8")).toBe(ownerText(me));
    expect(entries(), "only LOCK was added").toEqual(["LOCK", ...leftovers].sort());
    held.release();
    expect(entries()).toEqual([...leftovers].sort());
    acquireLock(lockPath(), "LOCK").release();
  });

  it("a held lock refuses a second acquire with LOCKED and leaves no temporary file", () => {
    const held = acquireLock(lockPath(), "LOCK");
    for (let i = 0; i < 3; i++) {
      expect(codeOf(() => acquireLock(lockPath(), "LOCK"))).toBe("LOCKED");
    }
    expect(entries()).toEqual(["LOCK"]);
    held.release();
    expect(entries()).toEqual([]);
  });

  for (const code of ["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS"]) {
    it(`without hard links (link fails with ${code}) the lock falls back to create-then-write, and both paths exclude each other`, () => {
      const fallback = noHardLinks(code);
      const held = acquireLock(lockPath(), "LOCK", fallback);
      expect(readFileSync(lockPath(), "utf8")).toBe(ownerText(currentOwner()));
      expect(entries()).toEqual(["LOCK"]);
      expect(codeOf(() => acquireLock(lockPath(), "LOCK", fallback))).toBe("LOCKED");
      expect(codeOf(() => acquireLock(lockPath(), "LOCK"))).toBe("LOCKED");
      held.release();
      expect(entries()).toEqual([]);
      const linked = acquireLock(lockPath(), "LOCK");
      expect(codeOf(() => acquireLock(lockPath(), "LOCK", fallback))).toBe("LOCKED");
      linked.release();
      expect(entries()).toEqual([]);
    });
  }
});

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** The lines from "The lock-file protocol, version 1." to the end of its limits. */
function protocolBlock(lines: readonly string[], file: string): string {
  const start = lines.findIndex((line) => line.startsWith("The lock-file protocol, version 1."));
  const end = lines.findIndex((line) => line.endsWith("must not share a database directory."));
  expect(start, `${file} states the protocol`).toBeGreaterThanOrEqual(0);
  expect(end, `${file} states the protocol's limits`).toBeGreaterThan(start);
  return lines.slice(start, end + 1).join("\n");
}

/** The lines of a comment, without its prefix (`//! ` or ` * `). */
function commentLines(text: string, prefix: RegExp): string[] {
  return text
    .split("\n")
    .filter((line) => prefix.test(line))
    .map((line) => line.replace(prefix, ""));
}

describe("one protocol", () => {
  it("is stated byte for byte the same in lock_file.rs, node-lock.ts and docs/FORMAT.md", () => {
    const read = (path: string): string => readFileSync(join(repoRoot, path), "utf8");
    const rust = commentLines(read("crates/core/src/storage/lock_file.rs"), /^\/\/! ?/);
    const node = read("packages/js/src/node/node-lock.ts");
    const nodeHeader = node.slice(0, node.indexOf("*/"));
    const ts = commentLines(nodeHeader, /^ \* ?/);
    const format = read("docs/FORMAT.md");
    const lockSection = format.slice(format.indexOf("\n## LOCK file\n"), format.indexOf("\n## OPFS slot files"));
    const expected = protocolBlock(rust, "lock_file.rs");
    expect(protocolBlock(ts, "node-lock.ts")).toBe(expected);
    expect(protocolBlock(lockSection.split("\n"), "docs/FORMAT.md")).toBe(expected);
  });

  it("has the limits the text states: 5 seconds for an unparseable file, 8 rounds", () => {
    expect(GARBLED_LOCK_STALE_AFTER_MS).toBe(5000);
    expect(LOCK_ATTEMPTS).toBe(8);
  });
});
