// Flush and compaction without the caller's help: in idle time (autoMaintenance, the default),
// inline bounded steps when a tight loop never yields, and by hand with autoMaintenance: false.
// Assertions are about the shape of the tree (stats), never about time.
import { describe, expect, it } from "vitest";

import { open, openSync, type Stats } from "shaledb";

import { tempDir } from "./helpers.js";

/** The core's L0 limits (crates/core/src/db/options.rs): compaction starts at 4 files, writes
 * slow down at 12 and do maintenance steps themselves at 2 × 12 = 24. */
const L0_SLOWDOWN_TRIGGER = 12;
const L0_HARD_LIMIT = 2 * L0_SLOWDOWN_TRIGGER;

const MEMTABLE = 64 * 1024;
const VALUE = "v".repeat(200);

/** Keys in a scattered order, so every table overlaps every other. */
function key(i: number, n: number): string {
  return `k${String((i * 7919) % n).padStart(7, "0")}`;
}

function beyondL0(stats: Stats): number {
  return stats.levels.slice(1).reduce((sum, l) => sum + l.files, 0);
}

function l0(stats: Stats): number {
  return stats.levels[0]?.files ?? 0;
}

const idle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("automatic maintenance", () => {
  it("writes that yield to the event loop get flushed and compacted below L0 by themselves", async () => {
    const db = await open(tempDir("idle"), { memtableSize: MEMTABLE });
    const n = 20_000;
    let maxL0 = 0;
    let written = 0;
    // Stop as soon as compaction has moved tables below L0 (well before the hard limit).
    for (; written < n; written++) {
      await db.put(key(written, n), VALUE);
      if (written % 20 === 19) {
        await idle();
        const stats = await db.stats();
        maxL0 = Math.max(maxL0, l0(stats));
        if (beyondL0(stats) > 0 && written > 2_000) {
          break;
        }
      }
    }
    const stats = await db.stats();
    expect(beyondL0(stats), JSON.stringify(stats.levels)).toBeGreaterThan(0);
    // Idle-time steps kept up: L0 never came near the limit where writes do the work.
    expect(maxL0).toBeLessThan(L0_SLOWDOWN_TRIGGER);
    // Everything written is there.
    expect(await db.count()).toBe(written + 1);
    expect(await db.get(key(0, n))).toBe(VALUE);
    expect(await db.get(key(written, n))).toBe(VALUE);
    await db.close();
  });

  it("a tight synchronous loop (no yielding) keeps L0 bounded through inline steps, and loses nothing", () => {
    const db = openSync(tempDir("tight"), { memtableSize: MEMTABLE });
    // About 4 memtables per 1,000 writes: the L0 limit is reached about every 6,000 writes.
    const n = 20_000;
    let maxL0 = 0;
    for (let i = 0; i < n; i++) {
      db.put(key(i, n), VALUE);
      if (i % 10 === 0) {
        maxL0 = Math.max(maxL0, l0(db.stats()));
      }
    }
    const stats = db.stats();
    maxL0 = Math.max(maxL0, l0(stats));
    // Without yielding, nothing runs in idle time: the bound holds through inline steps only.
    // (The core lets L0 reach its hard limit, then one more flush: 2 × 12 + 1.)
    expect(maxL0).toBeLessThanOrEqual(L0_HARD_LIMIT + 1);
    expect(beyondL0(stats), JSON.stringify(stats.levels)).toBeGreaterThan(0);
    expect(db.count()).toBe(n);
    let i = 0;
    let wrong = 0;
    for (const [k, v] of db.iterator()) {
      if (k !== `k${String(i).padStart(7, "0")}` || v !== VALUE) wrong++;
      i++;
    }
    expect(i).toBe(n);
    expect(wrong, "entries with a wrong key or value").toBe(0);
    db.close();
  });

  // FINDING (see the report): with a memtable smaller than the bindings' inline-step interval
  // (256 KiB of writes, crates/wasm/src/database.rs INLINE_STEP_EVERY), every inline step finds
  // an immutable memtable to flush (flush goes first in Db::maintain), so compaction never
  // advances in a tight loop: L0 climbs file by file to the core's hard limit (24), and one
  // write then pays for compacting all of it (a stall of ~150 ms here) — a sawtooth instead of
  // the smooth slowdown DESIGN.md asks for. Expected: the inline steps keep L0 near the
  // compaction trigger, below the slowdown trigger.
  it.fails("a tight loop's inline steps keep L0 below the slowdown trigger (12 files)", () => {
    const db = openSync(tempDir("tight-smooth"), { memtableSize: MEMTABLE });
    const n = 12_000;
    let maxL0 = 0;
    try {
      for (let i = 0; i < n && maxL0 < L0_SLOWDOWN_TRIGGER; i++) {
        db.put(key(i, n), VALUE);
        if (i % 10 === 0) {
          maxL0 = Math.max(maxL0, l0(db.stats()));
        }
      }
      expect(maxL0).toBeLessThan(L0_SLOWDOWN_TRIGGER);
    } finally {
      db.close();
    }
  });

  it("with autoMaintenance: false nothing runs by itself, and maintain() reports pending work until it is done", async () => {
    const db = openSync(tempDir("manual"), { memtableSize: MEMTABLE, autoMaintenance: false });
    expect(db.maintain(), "an empty database has nothing to do").toBe(false);
    const n = 2_500;
    for (let i = 0; i < n; i++) {
      db.put(key(i, n), VALUE);
    }
    const before = db.stats();
    expect(l0(before), "enough L0 tables for a compaction").toBeGreaterThanOrEqual(4);
    // Idle time passes: with autoMaintenance off, the tree does not change.
    for (let i = 0; i < 10; i++) {
      await idle();
    }
    expect(db.stats().levels).toEqual(before.levels);

    let steps = 0;
    while (db.maintain(256 * 1024)) {
      steps++;
      expect(steps, "maintain() must finish").toBeLessThan(10_000);
    }
    expect(steps).toBeGreaterThan(0);
    const after = db.stats();
    expect(beyondL0(after), JSON.stringify(after.levels)).toBeGreaterThan(0);
    expect(l0(after)).toBeLessThan(4);
    // Done means done: another call finds nothing, and changes nothing.
    expect(db.maintain()).toBe(false);
    expect(db.stats().levels).toEqual(after.levels);
    expect(db.count()).toBe(n);
    expect(db.get(key(17, n))).toBe(VALUE);
    db.close();
  });

  it("maintain() of the Promise API drives the same steps", async () => {
    const db = await open(tempDir("manual-async"), { memtableSize: MEMTABLE, autoMaintenance: false });
    for (let i = 0; i < 2_000; i++) {
      await db.put(key(i, 2_000), VALUE);
    }
    let steps = 0;
    while (await db.maintain(1)) {
      steps++;
      expect(steps).toBeLessThan(100_000);
    }
    expect(steps).toBeGreaterThan(0);
    expect(await db.maintain()).toBe(false);
    const stats = await db.stats();
    expect(l0(stats)).toBeLessThan(4);
    expect(await db.count()).toBe(2_000);
    await db.close();
  });
});
