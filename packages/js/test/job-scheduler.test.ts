// The job scheduler of databases opened in the calling thread (src/engine/job-maintenance.ts),
// with a runner that runs the jobs for real (the core's runJob over the same directory) in this
// thread, but holds each lane's jobs until the test lets them go: which lane each job takes,
// writes that wait for a flush job instead of flushing here, and compact() carried out by
// compaction jobs. Assertions are about the database and the jobs, never about time.
import { describe, expect, it } from "vitest";

import { jobDatabase } from "../src/engine/sync-database.js";

import { HeldRunner, VALUE, failingRunner, key, orphans, scheduled } from "./fixtures/scheduled-database.js";
import { tempDir } from "./helpers.js";

describe("the job scheduler of a database in the calling thread", () => {
  it("runs flushes and log syncs in one lane, compactions and deletions in the other", async () => {
    const dir = tempDir("lanes");
    const runner = new HeldRunner(dir);
    runner.release("flush");
    runner.release("compaction");
    const { db, jobs, drain, write } = scheduled(dir, runner);
    const n = 3000;
    await write(3 * n, n, 200);
    await drain();
    expect(runner.lanes.filter((l) => l === "flush").length).toBeGreaterThan(3);
    expect(runner.lanes.filter((l) => l === "compaction").length).toBeGreaterThan(1);
    expect(db.stats().jobsInstalled).toBeGreaterThan(3);
    // The deletions ran: no table is left that the database does not name.
    expect(orphans(dir, db.stats())).toBe(0);
    expect(db.count()).toBe(n);
    await jobs.stop();
    db.close();
  }, 60_000);

  it("a flush is not held behind a compaction that is out", async () => {
    const dir = tempDir("flush-beside-compaction");
    const runner = new HeldRunner(dir);
    runner.release("flush");
    const { db, jobs, drain, write } = scheduled(dir, runner);
    const n = 2000;
    // Until a compaction is out (held): L0 reached the compaction trigger.
    for (let rounds = 0; !runner.lanes.includes("compaction"); rounds++) {
      await write(100, n, 100);
      expect(rounds).toBeLessThan(500);
    }
    const installed = db.stats().jobsInstalled;
    // More memtables fill: their flushes run and install while the compaction is held.
    await write(400, n);
    await drain();
    expect(db.stats().jobsInstalled).toBeGreaterThan(installed);
    runner.release("compaction");
    await drain();
    await jobs.stop();
    db.close();
  }, 60_000);

  it("writes wait for a flush job when too many memtables wait, instead of flushing here", async () => {
    const dir = tempDir("room");
    const runner = new HeldRunner(dir);
    runner.release("compaction");
    const { db, jobs, drain, write } = scheduled(dir, runner);
    const n = 4000;
    // Flushes are held: memtables pile up until the next write would flush one itself.
    for (let i = 0; !jobDatabase(db).writeWouldFlush(); i++) {
      await write(1, n, 1);
      expect(i).toBeLessThan(10_000);
    }
    const installed = db.stats().jobsInstalled;
    const room = jobs.roomForWrites();
    expect(room).toBeInstanceOf(Promise);
    let roomMade = false;
    void room?.then(() => {
      roomMade = true;
    });
    await drain();
    expect(roomMade).toBe(false);
    runner.release("flush");
    await room;
    expect(jobDatabase(db).writeWouldFlush()).toBe(false);
    // A flush job made the room (installed at once, not queued behind the waiting writes).
    expect(db.stats().jobsInstalled).toBeGreaterThan(installed);
    const last = await write(50, n);
    expect(db.get(last)).toMatch(VALUE);
    await drain();
    await jobs.stop();
    db.close();
  }, 60_000);

  it("compact() is carried out by compaction jobs, one per level, and writes made meanwhile are kept", async () => {
    const dir = tempDir("compact-jobs");
    const runner = new HeldRunner(dir);
    runner.release("flush");
    runner.release("compaction");
    const { db, jobs, drain, write } = scheduled(dir, runner);
    const n = 3000;
    await write(3 * n, n, 300);
    for (let i = 0; i < n; i += 3) db.delete(key(i, n));
    runner.hold("compaction");
    const before = runner.lanes.filter((l) => l === "compaction").length;
    const done = jobs.compact(undefined, undefined);
    expect(done).toBeInstanceOf(Promise);
    let finished = false;
    void done?.then(() => {
      finished = true;
    });
    // Written while the compaction is requested: kept.
    db.put("written-meanwhile", "yes");
    await drain();
    expect(finished).toBe(false);
    runner.release("compaction");
    while (!finished) await drain();
    expect(runner.lanes.filter((l) => l === "compaction").length).toBeGreaterThan(before);
    const stats = db.stats();
    expect(stats.levels.filter((l) => l.files > 0).length).toBe(1);
    expect(stats.levels[0]?.files).toBe(0);
    expect(db.get("written-meanwhile")).toBe("yes");
    expect(db.count()).toBe(n - Math.ceil(n / 3) + 1);
    await jobs.stop();
    db.close();
  }, 60_000);

  it("a compact() asked for when the runner has failed is done here; one pending when it fails is done here too", async () => {
    const dir = tempDir("compact-fallback");
    const { runner: failing, attempts } = failingRunner();
    const { db, jobs, drain, write } = scheduled(dir, failing);
    await write(2000, 2000);
    const pending = jobs.compact(undefined, undefined);
    expect(pending).toBeInstanceOf(Promise);
    while (attempts() < 3) await drain();
    await drain();
    await pending;
    expect(db.stats().levels[0]?.files).toBe(0);
    expect(jobs.compact(undefined, undefined)).toBeUndefined();
    expect(db.count()).toBe(2000);
    await jobs.stop();
    db.close();
  }, 60_000);

  it("a compact() pending when the scheduler stops is rejected as CLOSED", async () => {
    const dir = tempDir("compact-stop");
    const runner = new HeldRunner(dir);
    const { db, jobs, drain, write } = scheduled(dir, runner);
    await write(2000, 2000);
    const pending = jobs.compact(undefined, undefined);
    await drain();
    await jobs.stop();
    await expect(pending).rejects.toMatchObject({ code: "CLOSED" });
    db.close();
  }, 60_000);
});
