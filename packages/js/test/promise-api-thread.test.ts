// Node's Promise API runs its engine in the calling thread by default, with flush and compaction
// as jobs in a maintenance worker (src/node/maintenance-runner.ts); with `engineThread: "own"`
// the whole engine runs in a worker thread (src/node/worker-transport.ts), as browsers run
// theirs, so nothing it does holds up the caller's event loop. Either way a process that forgets
// close() still ends by itself, releasing the database's lock.
import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { open, openSync } from "shaledb";

import { fixture } from "./fixtures/processes.js";
import { tempDir } from "./helpers.js";

/** Resolves on the next turn of the event loop (after pending I/O). */
const nextTurn = (): Promise<"turn"> => new Promise((resolve) => setImmediate(() => resolve("turn")));

describe('engineThread: "own" runs the Promise API\'s engine off the event loop', () => {
  it("the event loop turns while compact() rewrites the whole database", async () => {
    const db = await open(tempDir("thread-compact"), {
      engineThread: "own",
      memtableSize: 256 * 1024,
      autoMaintenance: false,
      compression: false,
    });
    const value = "v".repeat(1000);
    for (let round = 0; round < 20; round++) {
      const batch = db.batch();
      for (let i = 0; i < 400; i++) batch.put(`k${String((i * 7919 + round) % 8000).padStart(6, "0")}/${round}`, value);
      await batch.write();
    }
    await db.flush();
    // Some 8 MB in many overlapping tables: compact() takes tens of milliseconds, which the
    // event loop spends turning, not waiting.
    const compaction = db.compact();
    expect(await Promise.race([compaction.then(() => "compacted"), nextTurn()])).toBe("turn");
    await compaction;
    expect(await db.count()).toBe(8000);
    await db.close();
  });

  it("a count over many entries leaves the event loop free", async () => {
    const db = await open(tempDir("thread-count"), { engineThread: "own", valueEncoding: "binary" });
    const value = new Uint8Array(10);
    for (let round = 0; round < 50; round++) {
      const batch = db.batch();
      for (let i = 0; i < 1000; i++) batch.put(`k${String(round * 1000 + i).padStart(7, "0")}`, value);
      await batch.write();
    }
    const counted = db.count();
    expect(await Promise.race([counted.then(() => "counted"), nextTurn()])).toBe("turn");
    expect(await counted).toBe(50_000);
    await db.close();
  });
});

describe("a process that never closes its Promise-API database", () => {
  it("ends by itself, keeps what it wrote, and leaves no LOCK behind", () => {
    const dir = join(tempDir("thread-leave"), "db");
    const child = spawnSync(process.execPath, [fixture("open-and-leave.mjs"), dir], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(child.stderr).toBe("");
    expect(child.status).toBe(0);
    expect(child.stdout).toBe("written\n");
    expect(existsSync(join(dir, "LOCK"))).toBe(false);
    const db = openSync(dir);
    expect(db.get("left")).toBe("without close");
    db.close();
  });
});

describe('engineThread: "caller" (the default) runs the Promise API\'s engine in the calling thread', () => {
  /** One sequence of calls covering writes, reads, ranges, keyspaces and a transaction. */
  async function exercise(engineThread: "own" | "caller"): Promise<unknown[]> {
    const db = await open(tempDir(`thread-${engineThread}`), { engineThread, valueEncoding: "json" });
    const seen: unknown[] = [];
    await db.put("a", { n: 1 });
    await db.batch([
      { type: "put", key: "b", value: [2] },
      { type: "put", key: "c", value: "three" },
      { type: "delete", key: "a" },
    ]);
    seen.push(await db.get("a"), await db.get("b"), await db.getMany(["b", "c", "d"]));
    seen.push(await db.keys({ gte: "b" }).all(), await db.count());
    const ks = await db.keyspace("events", { valueEncoding: "utf8" });
    await ks.put("e1", "signup");
    seen.push(await ks.get("e1"), await db.get("e1"));
    await db.transact(async (tx) => {
      tx.put("d", (((await tx.get("b")) as number[] | undefined) ?? []).length);
    });
    seen.push(await db.get("d"));
    await db.flush();
    await db.compact();
    seen.push(await db.values().all());
    await db.close();
    return seen;
  }

  it("gives the same results as the engine in its own thread", async () => {
    expect(await exercise("caller")).toEqual(await exercise("own"));
  });

  it("a count over many entries pauses for the event loop between slices", async () => {
    const db = await open(tempDir("thread-count-caller"), { valueEncoding: "binary" });
    const value = new Uint8Array(10);
    for (let round = 0; round < 50; round++) {
      const batch = db.batch();
      for (let i = 0; i < 1000; i++) batch.put(`k${String(round * 1000 + i).padStart(7, "0")}`, value);
      await batch.write();
    }
    let turns = 0;
    const counted = db.count();
    const ticker = setInterval(() => {
      turns++;
    }, 0);
    try {
      // Counted whole (one view of the database), while timers ran between the slices.
      expect(await counted).toBe(50_000);
    } finally {
      clearInterval(ticker);
    }
    expect(turns).toBeGreaterThan(0);
    await db.close();
  });

  it("refuses any other value with INVALID_ARGUMENT", async () => {
    for (const engineThread of ["main", 1, null]) {
      await expect(
        open(tempDir("thread-bad"), { engineThread } as unknown as Parameters<typeof open>[1]),
      ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    }
  });

  it("a top-level await of close() with jobs under way settles: the workers keep the process alive until they exited", async () => {
    // The race this guards against is timing-dependent (a job's answer arriving while the
    // close terminates its worker unref'd the worker, and the process ended with the close
    // pending: exit code 13); one run caught it about once in six, so twelve run, four at a time.
    const runs = Array.from({ length: 12 }, (_, i) => join(tempDir(`thread-close-busy-${i}`), "db"));
    for (let i = 0; i < runs.length; i += 4) {
      const outcomes = await Promise.all(
        runs.slice(i, i + 4).map(
          (dir) =>
            new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
              execFile(process.execPath, [fixture("close-while-busy.mjs"), dir], { timeout: 30_000 }, (error, stdout, stderr) => {
                resolve({ code: error === null ? 0 : (error.code as number | null), stdout, stderr });
              });
            }),
        ),
      );
      for (const outcome of outcomes) {
        expect(outcome).toEqual({ code: 0, stdout: "closed\n", stderr: "" });
      }
    }
    for (const dir of runs) {
      expect(existsSync(join(dir, "LOCK"))).toBe(false);
    }
  }, 120_000);

  it("a process that never closes such a database, its maintenance worker busy, ends by itself and leaves no LOCK behind either", () => {
    const dir = join(tempDir("thread-leave-caller"), "db");
    const child = spawnSync(process.execPath, [fixture("open-and-leave.mjs"), dir, "caller", "busy"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(child.stderr).toBe("");
    expect(child.status).toBe(0);
    expect(existsSync(join(dir, "LOCK"))).toBe(false);
    const db = openSync(dir);
    expect(db.get("left")).toBe("without close");
    db.close();
  });
});
