// Node's Promise API by default runs flush and compaction as jobs (the core's `jobs` module) in a
// maintenance worker with its own WebAssembly instance over the same directory
// (src/node/maintenance-runner.ts), installing each output here with one manifest edit; when the
// runner fails, maintenance falls back to turns in this thread (src/engine/job-maintenance.ts).
// Assertions are about what the database holds and the shape of its tree, never about time.
import { readFileSync, readdirSync } from "node:fs";

import { describe, expect, it } from "vitest";

import "../src/node.js";
// The package as built: its maintenance worker is a module beside it (dist/node/).
import { open, openSync, type Stats } from "shaledb";

import { MEMTABLE, VALUE, failingRunner, key, orphans, scheduled } from "./fixtures/scheduled-database.js";
import { tempDir } from "./helpers.js";

function beyondL0(stats: Stats): number {
  return stats.levels.slice(1).reduce((sum, l) => sum + l.files, 0);
}

/** Resolves once `check` holds, polling between turns of the event loop (fails after 20 s). */
async function eventually(check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error("condition not reached in 20 s");
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the Promise API's maintenance worker", () => {
  it("flushes and compacts as jobs installed here, and the database holds every write", async () => {
    const dir = tempDir("jobs-default");
    const db = await open(dir, { memtableSize: MEMTABLE });
    const n = 4000;
    for (let i = 0; i < 3 * n; i++) {
      await db.put(key(i, n), `${VALUE}${i}`);
    }
    await eventually(async () => {
      const stats = await db.stats();
      return stats.jobsInstalled > 0 && beyondL0(stats) > 0;
    });
    for (let i = 2 * n; i < 3 * n; i++) {
      expect(await db.get(key(i, n))).toBe(`${VALUE}${i}`);
    }
    expect(await db.count()).toBe(n);
    await db.close();

    const again = openSync(dir);
    expect(orphans(dir, again.stats())).toBe(0);
    expect(again.count()).toBe(n);
    expect(again.get(key(3 * n - 1, n))).toBe(`${VALUE}${3 * n - 1}`);
    again.close();
  }, 60_000);

  it("compact() runs as compaction jobs in the workers, which also remove the files it made obsolete", async () => {
    const dir = tempDir("jobs-compact");
    const db = await open(dir, { memtableSize: MEMTABLE });
    const n = 3000;
    for (let i = 0; i < 2 * n; i++) {
      await db.put(key(i, n), `${VALUE}${i}`);
    }
    for (let i = 0; i < n; i += 2) {
      await db.delete(key(i, n));
    }
    const installed = (await db.stats()).jobsInstalled;
    const compacted = db.compact();
    // Served while the compaction runs in the worker.
    await db.put("meanwhile", "kept");
    await compacted;
    const stats = await db.stats();
    expect(stats.jobsInstalled).toBeGreaterThan(installed);
    expect(stats.levels.slice(1).filter((l) => l.files > 0).length).toBe(1);
    expect(await db.get("meanwhile")).toBe("kept");
    expect(await db.count()).toBe(n / 2 + 1);
    // The tables it replaced are removed by a deletion job, not left until the next open.
    await eventually(async () => orphans(dir, await db.stats()) === 0);
    await db.close();
  }, 60_000);

  it.runIf(process.platform === "linux")("the maintenance workers run at the lowest CPU priority (nice 19) on Linux", async () => {
    const dir = tempDir("jobs-nice");
    const db = await open(dir, { memtableSize: MEMTABLE });
    for (let i = 0; i < 3000; i++) {
      await db.put(key(i, 3000), `${VALUE}${i}`);
    }
    await eventually(async () => (await db.stats()).jobsInstalled > 0);
    // Field 19 of /proc/<pid>/task/<tid>/stat is the thread's nice value (counted from the
    // last ")", as the command name may hold anything).
    const nice = readdirSync("/proc/self/task").map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
    });
    expect(nice).toContain(19);
    expect(nice).toContain(0);
    await db.close();
  }, 60_000);

  it("a runner that fails hands maintenance back to this thread: flushes and compactions go on, nothing is lost", async () => {
    const dir = tempDir("jobs-fallback");
    const { runner: failing, attempts } = failingRunner();
    const { db, jobs, runTasks } = scheduled(dir, failing);
    const n = 3000;
    for (let i = 0; i < 3 * n; i++) {
      db.put(key(i, n), `${VALUE}${i}`);
      jobs.served(400);
      runTasks();
      if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 1));
      runTasks();
    }
    await eventually(() => {
      runTasks();
      const stats = db.stats();
      return beyondL0(stats) > 0 && stats.levels[0]!.files < 4;
    });
    expect(attempts()).toBeGreaterThan(0);
    expect(db.stats().jobsInstalled).toBe(0);
    expect(orphans(dir, db.stats())).toBe(0);
    expect(db.count()).toBe(n);
    await jobs.stop();
    db.close();
  }, 60_000);
});
