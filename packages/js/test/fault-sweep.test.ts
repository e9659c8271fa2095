// The fault sweep through the WebAssembly bindings (crates/core/tests/fault_sweep.rs, from
// JavaScript): every operation that touches files — open (recovery), writes across memtable
// switches and the bindings' inline maintenance step, flush, maintenance steps, compact(),
// checkpoint, keyspace creation, close — runs on a failing JS storage host (fixtures/faulty-host)
// failing its 1st, 2nd, 3rd, ... storage call until it completes without reaching the fault:
// once with the call failing (ENOSPC for writes, truncations and creations, EIO otherwise; a
// failed sync drops the dirty pages) and once with the process dying there (that call and every
// later one fail). Then the database is reopened on a healthy host after a process restart, a
// strict power loss and a random one (and, after an error, by the same process on the same host,
// which a failed close must have left unlocked), and checked against the model of attempted writes
// (fixtures/write-model): it opens, holds every write promised to survive, and is the state of a
// prefix of the attempts. Its recovered state must itself survive another power loss.
//
// SHALEDB_SWEEP_SEEDS=n checks n random power losses per fault instead of one (a longer campaign).
import { afterAll, describe, expect, it } from "vitest";

import type { SyncDatabase } from "../src/types.js";
import { FaultyHost, type FiredAt, type PowerLossMode } from "./fixtures/faulty-host.js";
import { openOnHost, scanAll } from "./fixtures/host-database.js";
import { sameKV, WriteModel } from "./fixtures/write-model.js";

const SEEDS = Number(process.env["SHALEDB_SWEEP_SEEDS"] ?? "1") || 1;

const OPTIONS = {
  memtableSize: 64 * 1024,
  blockCacheSize: 1 << 20,
  // Idle-time maintenance would run between tests, not at a numbered call: steps come from the
  // scenarios (and the bindings' inline step, which autoMaintenance does not turn off).
  autoMaintenance: false,
} as const;

type Db = SyncDatabase<string, string>;

function key(i: number): string {
  return `key${String(i).padStart(5, "0")}`;
}

function value(i: number, v: number, len: number): string {
  const head = `v${v}-${i}-`;
  return head + String.fromCharCode(97 + (i % 26)).repeat(Math.max(0, len - head.length));
}

/** What a scenario works on. */
class Ctx {
  readonly host = new FaultyHost();
  readonly model = new WriteModel();
  db: Db | undefined;
  /** A checkpoint's destination, and whether the checkpoint returned. */
  dest: FaultyHost | undefined;
  checkpointed = false;
  /** Whether the synced put into keyspace "events" was acknowledged. */
  eventsAcked = false;

  open(): void {
    this.db = openOnHost(this.host, OPTIONS, this.dest === undefined ? {} : { dest: this.dest });
  }

  get opened(): Db {
    if (this.db === undefined) {
      throw new Error("the scenario's database is not open");
    }
    return this.db;
  }

  /**
   * Writes `from..to`: a put of key i (value version v) with `put`, every 7th a `batch` that
   * also deletes an earlier key, every 11th a lone `delete`; every 5th synced.
   */
  write(from: number, to: number, v: number, len: number): void {
    const db = this.opened;
    for (let i = from; i < to; i++) {
      const sync = i % 5 === 0;
      if (i % 11 === 6) {
        const k = key(i >> 1);
        this.model.attempt([[k, undefined]], sync, () => db.delete(k, { sync }));
      } else if (i % 7 === 3) {
        const [k, val, gone] = [key(i), value(i, v, len), key(i >> 1)];
        this.model.attempt([[k, val], [gone, undefined]], sync, () =>
          db.batch(
            [
              { type: "put", key: k, value: val },
              { type: "delete", key: gone },
            ],
            { sync },
          ),
        );
      } else {
        const [k, val] = [key(i), value(i, v, len)];
        this.model.attempt([[k, val]], sync, () => db.put(k, val, { sync }));
      }
    }
  }

  /** Closes the database, ignoring errors (a crashed process cannot close it anyway). */
  closeQuietly(): void {
    try {
      this.db?.close();
    } catch {
      // The storage failed or the process died: what the files hold is what the check sees.
    }
    this.db = undefined;
  }

  /** The process dies now: nothing more reaches the files. */
  kill(): void {
    this.host.crashAtNth(1);
    this.closeQuietly();
    this.host.disarm();
  }
}

/** An operation swept under faults: `setup` runs on a healthy host, `run` on the failing one. */
interface Scenario {
  name: string;
  setup(c: Ctx): void;
  run(c: Ctx): void;
  /** The faults go to the checkpoint's destination instead of the database's host. */
  faultsInDest?: boolean;
}

/** Runs `step`; true if it returned, false if it threw. */
function succeeds(step: () => unknown): boolean {
  try {
    step();
    return true;
  } catch {
    return false;
  }
}

const scenarios: Scenario[] = [
  {
    name: "open (recovery of logs and tables)",
    setup: (c) => {
      c.open();
      c.write(0, 30, 0, 900);
      c.opened.flush();
      c.model.allAckedDurable();
      // Past one memtable switch: a sealed log and the live one to replay.
      c.write(30, 120, 1, 900);
      c.kill();
    },
    run: (c) => {
      try {
        c.open();
      } catch {
        // A failed open is fine under a fault; the recovery check must open it.
      }
    },
  },
  {
    name: "writes across memtable switches",
    setup: (c) => c.open(),
    // 290 KB: four memtable switches and one inline maintenance step of the bindings (256 KiB).
    run: (c) => c.write(0, 200, 0, 1450),
  },
  {
    name: "flush",
    setup: (c) => {
      c.open();
      c.write(0, 40, 0, 700);
    },
    run: (c) => {
      if (succeeds(() => c.opened.flush())) {
        c.model.allAckedDurable();
      }
    },
  },
  {
    name: "maintain steps (L0 compaction)",
    setup: (c) => {
      c.open();
      for (let round = 0; round < 4; round++) {
        c.write(round * 20, round * 20 + 30, round, 800);
        c.opened.flush();
      }
      c.model.allAckedDurable();
    },
    run: (c) => {
      const db = c.opened;
      for (let more = true; more; ) {
        try {
          more = db.maintain(16 << 10);
        } catch {
          more = false;
        }
      }
    },
  },
  {
    name: "compact()",
    setup: (c) => {
      c.open();
      for (let round = 0; round < 2; round++) {
        c.write(round * 20, round * 20 + 30, round, 800);
        c.opened.flush();
      }
      c.write(40, 60, 2, 800);
    },
    run: (c) => {
      if (succeeds(() => c.opened.compact())) {
        c.model.allAckedDurable();
      }
    },
  },
  {
    name: "checkpoint (faults in the destination)",
    faultsInDest: true,
    setup: (c) => {
      c.dest = new FaultyHost();
      c.open();
      c.write(0, 30, 0, 800);
      c.opened.flush();
      c.write(30, 45, 1, 800);
    },
    run: (c) => {
      c.checkpointed = succeeds(() => c.opened.checkpoint("dest"));
    },
  },
  {
    name: "keyspace creation",
    setup: (c) => {
      c.open();
      c.write(0, 20, 0, 500);
    },
    run: (c) => {
      const db = c.opened;
      c.eventsAcked = succeeds(() => db.keyspace("events").put("e1", "signup", { sync: true }));
      c.write(20, 25, 0, 500);
    },
  },
  {
    name: "close",
    setup: (c) => {
      c.open();
      c.write(0, 30, 0, 600);
    },
    run: (c) => {
      const db = c.opened;
      c.db = undefined;
      if (succeeds(() => db.close())) {
        c.model.allAckedDurable();
      }
    },
  },
];

/**
 * What happens between the fault and the reopen: a process restart, a strict or a random power
 * loss, or (after an error) nothing: the same process reopens the database on the same host.
 */
type After = "restart" | "same process" | PowerLossMode;

function describeAfter(after: After): string {
  return typeof after === "string" ? after : `random power loss (seed ${after.seed})`;
}

/** `host` as it is after `after` (a copy, unless the same process goes on with it). */
function afterwards(host: FaultyHost, after: After): FaultyHost {
  if (after === "same process") {
    return host;
  }
  const h = host.fork();
  if (after !== "restart") {
    h.powerLoss(after);
  }
  return h;
}

/** Reopens the database after `after` and checks it against the model (module notes). */
function checkRecovery(c: Ctx, after: After): void {
  const host = afterwards(c.host, after);
  const powerLoss = after === "strict" || typeof after === "object";
  const must = powerLoss ? c.model.durableUpto : c.model.ackedUpto;
  let db: Db;
  try {
    db = openOnHost(host, OPTIONS);
  } catch (error) {
    throw new Error(`the database does not open: ${String(error)}`);
  }
  const got = scanAll(db);
  c.model.check(got, must);
  if (c.eventsAcked && db.keyspace("events").get("e1") !== "signup") {
    throw new Error("the acknowledged synced put into keyspace events is lost");
  }
  db.close();
  // The recovered state is durable: it survives another power loss as it is.
  host.powerLoss("strict");
  let again: Db;
  try {
    again = openOnHost(host, OPTIONS);
  } catch (error) {
    throw new Error(`the recovered database does not reopen after a power loss: ${String(error)}`);
  }
  const second = scanAll(again);
  again.close();
  if (!sameKV(second, got)) {
    throw new Error("a power loss after recovery changed the recovered state");
  }
  if (c.dest !== undefined) {
    checkCheckpoint(afterwards(c.dest, after), c);
  }
}

/**
 * A checkpoint that returned opens with every write acknowledged before it; one that failed
 * either does not open (with `createIfMissing: false`) or opens whole — never with other data —
 * and leaves no `CURRENT` that does not open.
 */
function checkCheckpoint(dest: FaultyHost, c: Ctx): void {
  let db: Db;
  try {
    db = openOnHost(dest, { ...OPTIONS, createIfMissing: false });
  } catch (error) {
    if (c.checkpointed) {
      throw new Error(`a completed checkpoint does not open: ${String(error)}`);
    }
    if (dest.memory.names.has("CURRENT")) {
      throw new Error(`a failed checkpoint left a CURRENT that does not open: ${String(error)}`);
    }
    return;
  }
  const got = scanAll(db);
  db.close();
  if (!sameKV(got, c.model.stateAfter(c.model.ackedUpto))) {
    throw new Error(
      `the checkpoint (which ${c.checkpointed ? "returned" : "failed"}) opens with other data`,
    );
  }
}

interface Counts {
  faults: number;
  checked: number;
}

/** Runs `scenario` with a fault at call `nth`, then checks every recovery; returns where it fired. */
function runOne(scenario: Scenario, crash: boolean, nth: number, counts: Counts): FiredAt | undefined {
  const c = new Ctx();
  scenario.setup(c);
  const target = scenario.faultsInDest === true ? c.dest : c.host;
  if (target === undefined) {
    throw new Error(`${scenario.name}: no host to fault`);
  }
  if (crash) {
    target.crashAtNth(nth);
  } else {
    target.failNth(nth);
  }
  scenario.run(c);
  const fired = target.firedAt;
  // After an error the process goes on and closes; after a crash nothing more gets through.
  c.closeQuietly();
  target.disarm();
  const afters: After[] = ["restart", "strict"];
  for (let s = 0; s < SEEDS; s++) {
    afters.push({ seed: nth * 1000 + s + (crash ? 500 : 0) });
  }
  if (!crash) {
    // Last: it changes the host. A failed close must still have released the lock.
    afters.push("same process");
  }
  for (const after of afters) {
    try {
      checkRecovery(c, after);
    } catch (error) {
      const where = fired === undefined ? "not reached" : `${fired.op} ${JSON.stringify(fired.name)}`;
      throw new Error(
        `${scenario.name}: ${crash ? "crashAtNth" : "failNth"}(${nth}) (${where}), then ` +
          `${describeAfter(after)}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    counts.checked += 1;
  }
  return fired;
}

/** Sweeps `scenario` under both fault kinds. */
function sweep(scenario: Scenario): Counts {
  const counts: Counts = { faults: 0, checked: 0 };
  for (const crash of [false, true]) {
    for (let nth = 1; nth < 100_000; nth++) {
      if (runOne(scenario, crash, nth, counts) === undefined) {
        break;
      }
      counts.faults += 1;
    }
  }
  return counts;
}

describe("fault sweep through the WebAssembly bindings", () => {
  const total: Counts = { faults: 0, checked: 0 };
  const started = performance.now();
  afterAll(() => {
    const ms = Math.round(performance.now() - started);
    const losses = `${SEEDS} random power loss${SEEDS === 1 ? "" : "es"}`;
    console.log(
      `fault sweep: ${total.faults} faults injected, ${total.checked} recoveries checked ` +
        `(${losses} per fault, ${ms} ms)`,
    );
  });
  for (const scenario of scenarios) {
    it(
      `${scenario.name}: every fault at every storage call loses no promised write and ` +
        "leaves an openable database",
      () => {
        const begun = performance.now();
        const counts = sweep(scenario);
        total.faults += counts.faults;
        total.checked += counts.checked;
        const ms = Math.round(performance.now() - begun);
        console.log(
          `fault sweep: ${scenario.name.padEnd(40)} ${String(counts.faults).padStart(5)} faults ` +
            `injected, ${String(counts.checked).padStart(5)} recoveries checked (${ms} ms)`,
        );
        expect(counts.faults, `${scenario.name}: no fault was reached`).toBeGreaterThan(0);
      },
      60_000 * SEEDS,
    );
  }
});
