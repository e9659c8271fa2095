// A process killed during writes loses nothing acknowledged (DESIGN.md, "What acknowledged
// means"): a child Node process (fixtures/crash-writer.mjs) writes — single puts, overwrites and
// atomic batches across keyspaces that also delete — and prints the number of each write once
// its call returned; the parent kills it with SIGKILL at a random moment, reopens the database
// (the killed child's LOCK must not block that) and checks that it holds exactly the
// acknowledged writes, plus possibly the one write in flight, wholly or not at all. Rounds reuse
// one directory, so each round also recovers what the earlier kills left (tables flushed and
// compacted by the child's idle-time maintenance, and a WAL tail). The Promise API's default
// (the engine in the child's thread, flush and compaction as jobs in its maintenance worker) is
// killed the same way, with the worker busy, and leaves no orphan file after the next open.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { openSync, type SyncDatabase, type SyncKeyspace } from "shaledb";

import { operation, type BatchOp, type Put } from "./fixtures/crash-ops.mjs";
import { Child, fixture, tempDir } from "./fixtures/processes.js";

const temp = tempDir("crash");

afterAll(() => {
  temp.cleanup();
});

/** Key in the model: keyspace and key. */
type ModelKey = `${"default" | "events"} ${string}`;
type Model = Map<ModelKey, string>;

function apply(model: Model, op: Put | BatchOp): void {
  const ops = op.type === "batch" ? op.ops : [op];
  for (const inner of ops) {
    const id: ModelKey = `${inner.keyspace} ${inner.key}`;
    if (inner.type === "put") {
      model.set(id, inner.value);
    } else {
      model.delete(id);
    }
  }
}

/** What the database holds under prefix `r<round>/`, in the model's form. */
function contents(
  db: SyncDatabase<string, string>,
  events: SyncKeyspace<string, string>,
  round: number,
): Model {
  const found: Model = new Map();
  const prefix = `r${round}/`;
  for (const [k, v] of db.iterator({ prefix })) {
    found.set(`default ${k}`, v);
  }
  for (const [k, v] of events.iterator({ prefix })) {
    found.set(`events ${k}`, v);
  }
  return found;
}

function sameModel(a: Model, b: Model): boolean {
  if (a.size !== b.size) {
    return false;
  }
  for (const [k, v] of a) {
    if (b.get(k) !== v) {
      return false;
    }
  }
  return true;
}

/** What one round left for the next ones to check: the state it ended in. */
interface RoundResult {
  round: number;
  state: Model;
}

/**
 * Runs one round: the child writes until it is killed `delayMs` after its 10th acknowledged
 * write; then the parent reopens and checks this round and all earlier ones.
 */
async function crashRound(
  dir: string,
  round: number,
  mode: "sync" | "nosync",
  delayMs: number,
  earlier: readonly RoundResult[],
  api: "syncapi" | "promise" = "syncapi",
): Promise<RoundResult> {
  const writer = fixture("crash-writer.mjs");
  const child = new Child(process.execPath, [writer, dir, String(round), mode, api]);
  let lines: string[];
  try {
    expect(await child.firstLine(), child.stderr).toBe("open");
    await child.waitForLines(1 + 10);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  } finally {
    const end = await child.kill();
    expect(end.signal, `the writer ended by itself: ${end.stderr}`).toBe("SIGKILL");
    lines = child.lines;
  }

  // Acknowledged: operations 0..last, in order.
  const acknowledged = lines.slice(1).map(Number);
  acknowledged.forEach((n, index) => expect(n).toBe(index));
  const last = acknowledged.length - 1;
  expect(last).toBeGreaterThanOrEqual(9);

  const before: Model = new Map();
  for (let i = 0; i <= last; i++) {
    apply(before, operation(round, i));
  }
  // The one operation that may have been in flight when the kill came.
  const after: Model = new Map(before);
  apply(after, operation(round, last + 1));

  // The killed writer's lock file is still there, and does not block this open.
  expect(existsSync(join(dir, "LOCK"))).toBe(true);
  const db = openSync(dir);
  try {
    const events = db.keyspace("events");
    const found = contents(db, events, round);
    const matches = sameModel(found, before) || sameModel(found, after);
    if (!matches) {
      const missing = [...before.keys()].filter((k) => found.get(k) !== before.get(k));
      const extra = [...found.keys()].filter((k) => !before.has(k) && !after.has(k));
      expect.fail(
        `round ${round} (${mode}, killed ${delayMs} ms after the 10th write, ` +
          `${last + 1} acknowledged): missing or wrong ${missing.slice(0, 5).join(", ")} ` +
          `(${missing.length}); unexpected ${extra.slice(0, 5).join(", ")} (${extra.length})`,
      );
    }
    for (const { round: r, state } of earlier) {
      const survived = sameModel(contents(db, events, r), state);
      expect(survived, `round ${r} survived later rounds`).toBe(true);
    }

    // Consistent as a whole: full scans both ways agree, counts agree, point reads agree.
    const forward = [...db.keys()];
    expect([...db.keys({ reverse: true })].reverse()).toEqual(forward);
    expect(db.count()).toBe(forward.length);
    const eventKeys = [...events.keys()];
    expect([...events.keys({ reverse: true })].reverse()).toEqual(eventKeys);
    for (const [id, value] of found) {
      const [keyspace, key] = [id.slice(0, id.indexOf(" ")), id.slice(id.indexOf(" ") + 1)];
      expect((keyspace === "events" ? events : db).get(key)).toBe(value);
    }
    // No orphan: every table file is one the database names (the open removed the tables a
    // killed job was writing).
    const tables = readdirSync(dir).filter((name) => name.endsWith(".sst")).length;
    expect(tables).toBe(db.stats().levels.reduce((n, level) => n + level.files, 0));
    // And writable.
    db.put(`after-round-${round}`, "ok", { sync: true });
    return { round, state: found };
  } finally {
    db.close();
  }
}

/** Delays in ms after the 10th acknowledged write: spread out, with random jitter. */
function delays(base: readonly number[]): number[] {
  return base.map((d) => d + Math.floor(Math.random() * 60));
}

describe("a process killed during writes loses nothing acknowledged", () => {
  it("synced writes (sync: true): every acknowledged write survives SIGKILL, over 4 rounds in one directory", async () => {
    const dir = join(temp.path, "sync");
    const results: RoundResult[] = [];
    for (const [round, delay] of delays([0, 60, 200, 500]).entries()) {
      results.push(await crashRound(dir, round, "sync", delay, results));
    }
    const db = openSync(dir);
    expect(db.get("after-round-3")).toBe("ok");
    db.close();
  }, 60_000);

  it("the Promise API's default (maintenance jobs in a worker): every acknowledged write survives SIGKILL, over 4 rounds, no orphan left", async () => {
    const dir = join(temp.path, "promise");
    const results: RoundResult[] = [];
    for (const [round, delay] of delays([40, 120, 300, 600]).entries()) {
      results.push(await crashRound(dir, round, round % 2 === 0 ? "nosync" : "sync", delay, results, "promise"));
    }
    const db = openSync(dir);
    expect(db.stats().levels.slice(1).some((level) => level.files > 0)).toBe(true);
    db.close();
  }, 60_000);

  it("unsynced writes (the default): acknowledged writes reached the OS, so they survive SIGKILL too", async () => {
    const dir = join(temp.path, "nosync");
    const results: RoundResult[] = [];
    for (const [round, delay] of delays([20, 150]).entries()) {
      results.push(await crashRound(dir, round, "nosync", delay, results));
    }
  }, 60_000);
});
