/**
 * Flush and compaction as jobs run elsewhere (the core's `jobs` module): the database hands out
 * a job as bytes (a sealed log to turn into a table, or tables to compact), a {@link JobRunner}
 * runs it off this thread (Node: a maintenance worker with its own WebAssembly instance over the
 * same directory, `../node/maintenance-runner.ts`), and the output is installed here with one
 * manifest edit between requests. This thread then never writes a table or waits for a table's
 * fsync; a write that finds too many memtables waiting still flushes one itself (the core). The
 * next write-ahead log is made ahead the same way: created here, synced (with its directory
 * entry) by the runner, so that a memtable switch here waits for no sync — unless it comes
 * before that job's install, and then creates and syncs a log itself, as without jobs.
 * Obsolete tables and logs are removed by deletion jobs, and `compact()` of a range is done by
 * compaction jobs, one per level ({@link JobScheduler.compact}): this thread only seals the
 * memtable for it. Jobs run in two lanes ({@link JobLane}), so a flush never waits behind a
 * compaction; while a compaction is out and L0 is near its slowdown trigger, the core holds
 * flushes back instead (memtables wait, and past their limit a writer flushes one itself).
 *
 * A job that fails is taken back (its files are orphans, removed by the database) and handed out
 * again: a job can fail because this thread overtook it (a writer that found too many memtables
 * waiting flushed one itself, and the log the job reads is gone). After
 * {@link FAILURES_BEFORE_FALLBACK} failures in a row (the runner cannot start, its disk fails),
 * maintenance falls back to turns in this thread (`maintenance.ts`): slower for the event loop,
 * but never stuck, and a failure that is the database's own is then reported by it.
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import { MAINTENANCE_EVERY, type MaintenanceScheduler } from "./maintenance.js";

/** Jobs failed in a row after which maintenance runs in this thread instead. */
export const FAILURES_BEFORE_FALLBACK = 3;

/**
 * Which jobs may wait behind which: a flush or a log sync (short, and a memtable switch or a
 * writer's backlog waits for it) never waits behind a compaction or a deletion (long).
 */
export type JobLane = "flush" | "compaction";

/** Runs encoded maintenance jobs somewhere else. */
export interface JobRunner {
  /**
   * Runs `job`; resolves with its encoded output, rejects if it failed. Jobs of one lane may
   * run one after another; a job never waits for one of the other lane.
   */
  run(job: Uint8Array, lane: JobLane): Promise<Uint8Array>;
  /** Stops the runner; jobs under way are dropped (their files are orphans). */
  close(): Promise<void>;
}

/** The database whose jobs are run. Each call is synchronous, made between requests. */
export interface JobDatabase {
  /** The next job due, encoded; `undefined` if none. */
  nextJob(): Uint8Array | undefined;
  /**
   * A job that makes the next write-ahead log durable (created here, synced by the runner), so
   * that the next memtable switch waits for no sync here; `undefined` if none is due.
   */
  nextLogJob(): Uint8Array | undefined;
  /** Installs an output (`false`: refused, its inputs changed meanwhile). */
  installJob(output: Uint8Array): boolean;
  /** The lane of encoded job `job`: compactions and deletions may run long. */
  laneOf(job: Uint8Array): JobLane;
  /** Takes back encoded job `job`, whose runner failed. */
  abandonJob(job: Uint8Array): void;
  /** Whether maintenance runs as jobs: writes then do no inline maintenance step. */
  useJobs(on: boolean): void;
  /**
   * Asks for the default keyspace's keys in `[start, end]` (absent: unbounded) to be compacted
   * by jobs (seals the memtable now); returns the request's ticket.
   */
  requestCompaction(start: Uint8Array | undefined, end: Uint8Array | undefined): number;
  /** The last ticket of {@link requestCompaction} done (requests finish in order). */
  compactionsDone(): number;
  /** Whether the next write would flush a memtable itself (too many wait for a flush). */
  writeWouldFlush(): boolean;
  /** Compacts `[start, end]` here, at once (once the runner failed). */
  compactHere(start: Uint8Array | undefined, end: Uint8Array | undefined): void;
}

/** A compaction asked for through {@link JobScheduler.compact}, not yet done. */
interface RequestedCompaction {
  readonly ticket: number;
  readonly start: Uint8Array | undefined;
  readonly end: Uint8Array | undefined;
  resolve(): void;
  reject(error: unknown): void;
}

export interface JobSchedulerOptions {
  /** Runs a task between requests (the server's queue). */
  run(task: () => void): void;
  /** Maintenance in turns, used once the runner failed. */
  fallback: MaintenanceScheduler;
  /** Told `true` while a job is out, `false` when none is (keeps Node's process alive meanwhile). */
  busy?(busy: boolean): void;
}

/** Hands out the database's jobs to a runner and installs their outputs. */
export class JobScheduler {
  readonly #db: JobDatabase;
  readonly #runner: JobRunner;
  readonly #run: (task: () => void) => void;
  readonly #fallback: MaintenanceScheduler;
  readonly #busy: (busy: boolean) => void;
  /** Jobs out (the database has at most one flush, one compaction, one deletion and one log sync out). */
  #out = 0;
  #polling = false;
  #failed = false;
  /** Jobs failed since the last one that succeeded. */
  #failures = 0;
  #stopped = false;
  /** Bytes written since the last poll. */
  #unpolled = 0;
  /** Compactions asked for, in ticket order. */
  #compactions: RequestedCompaction[] = [];
  /** Told when a job ends (installed or not): writes wait for room this way. */
  #roomWaiters: (() => void)[] = [];
  /** What to do with the jobs that ended (install or take back), not done yet. */
  #ended: (() => void)[] = [];

  constructor(db: JobDatabase, runner: JobRunner, options: JobSchedulerOptions) {
    this.#db = db;
    this.#runner = runner;
    this.#run = options.run;
    this.#fallback = options.fallback;
    this.#busy = options.busy ?? (() => undefined);
    db.useJobs(true);
  }

  /** Looks for jobs due soon (between requests). */
  schedule(): void {
    if (this.#failed) {
      this.#fallback.schedule();
      return;
    }
    if (this.#polling || this.#stopped) {
      return;
    }
    this.#polling = true;
    this.#run(() => {
      this.#polling = false;
      this.#poll();
    });
  }

  /** Requests that wrote about `bytes` were served: a poll follows every {@link MAINTENANCE_EVERY} bytes. */
  served(bytes: number): void {
    if (this.#failed) {
      this.#fallback.served(bytes);
      return;
    }
    this.#unpolled += bytes;
    if (this.#unpolled >= MAINTENANCE_EVERY) {
      this.schedule();
    }
  }

  /**
   * Compacts `[start, end]` of the default keyspace (absent: unbounded) through jobs, as
   * `compact()` would here: resolves once it is done, rejects with what stopped it (the
   * database poisoned or closed). `undefined` once the runner failed: compact here instead.
   * Throws what the request met (a closed or read-only database).
   */
  compact(start: Uint8Array | undefined, end: Uint8Array | undefined): Promise<void> | undefined {
    if (this.#failed || this.#stopped) {
      return undefined;
    }
    const ticket = this.#db.requestCompaction(start, end);
    return new Promise<void>((resolve, reject) => {
      this.#compactions.push({ ticket, start, end, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Resolves once writes would not flush a memtable in this thread (too many wait for a flush
   * job): a server awaits it before a message that writes, so that its writers wait for the
   * runner, not the event loop for an inline flush. `undefined`: write now (there is room, or no
   * job is out that could make some: the write then flushes one itself, as without jobs).
   * While it waits, outputs are installed at once, not queued (the server runs nothing else).
   */
  roomForWrites(): Promise<void> | undefined {
    if (this.#failed || this.#stopped) {
      return undefined;
    }
    // Called between requests: outputs that came meanwhile are installed first.
    this.#handleEnded();
    try {
      if (!this.#db.writeWouldFlush()) {
        return undefined;
      }
    } catch {
      // Poisoned or closed: the write reports it.
      return undefined;
    }
    if (this.#out === 0) {
      // The flush that makes room is handed out now (called between requests).
      this.#poll();
      if (this.#out === 0) {
        return undefined;
      }
    }
    return new Promise<void>((resolve) => this.#roomWaiters.push(resolve)).then(() => this.roomForWrites());
  }

  /** Stops handing out jobs and stops the runner. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#endCompactions(new ShaleError("CLOSED", "shaledb: the database closed before the compaction ended"));
    this.#fallback.stop();
    this.#setOut(-this.#out);
    this.#wakeRoomWaiters();
    await this.#runner.close();
  }

  #poll(): void {
    this.#unpolled = 0;
    if (this.#stopped || this.#failed) {
      return;
    }
    let log: Uint8Array | undefined;
    try {
      log = this.#db.nextLogJob();
    } catch (error) {
      // The database is poisoned or closed: the next request reports it.
      this.#endCompactions(error);
      return;
    }
    // First: it is short (two syncs), and the next switch needs it.
    if (log !== undefined) {
      this.#dispatch(log, "flush");
    }
    while (!this.#stopped && !this.#failed) {
      let job: Uint8Array | undefined;
      try {
        job = this.#db.nextJob();
      } catch (error) {
        // The database is poisoned or closed: the next request reports it.
        this.#endCompactions(error);
        return;
      }
      if (job === undefined) {
        break;
      }
      this.#dispatch(job, this.#db.laneOf(job));
    }
    this.#settleCompactions();
  }

  /** Resolves the compactions done (a poll finds a request done once it has no pass left). */
  #settleCompactions(): void {
    if (this.#compactions.length === 0) {
      return;
    }
    const done = this.#db.compactionsDone();
    while (this.#compactions.length > 0 && (this.#compactions[0]?.ticket ?? Infinity) <= done) {
      this.#compactions.shift()?.resolve();
    }
  }

  /** Ends every compaction asked for with `error`. */
  #endCompactions(error: unknown): void {
    const ended = this.#compactions;
    this.#compactions = [];
    for (const c of ended) {
      c.reject(error);
    }
  }

  /** Once the runner failed: the compactions asked for are done here, in order. */
  #compactHere(): void {
    const left = this.#compactions;
    this.#compactions = [];
    for (const c of left) {
      try {
        this.#db.compactHere(c.start, c.end);
        c.resolve();
      } catch (error) {
        c.reject(error);
      }
    }
  }

  /**
   * Handles a job that ended (`task`) between requests: now if writes wait for room (the server
   * runs nothing meanwhile), else in a task queued on the server. Either way it is kept in
   * {@link #ended} until handled, so that writes that start waiting for room first handle what
   * ended before (a queued task would only run after them).
   */
  #between(task: () => void): void {
    this.#ended.push(task);
    if (this.#roomWaiters.length > 0) {
      this.#handleEnded();
      this.#wakeRoomWaiters();
    } else {
      this.#run(() => this.#handleEnded());
    }
  }

  #handleEnded(): void {
    const ended = this.#ended;
    this.#ended = [];
    for (const task of ended) {
      task();
    }
  }

  #wakeRoomWaiters(): void {
    const waiters = this.#roomWaiters;
    this.#roomWaiters = [];
    for (const wake of waiters) {
      wake();
    }
  }

  #dispatch(job: Uint8Array, lane: JobLane): void {
    this.#setOut(1);
    this.#runner.run(job, lane).then(
      (output) => {
        this.#between(() => {
          if (this.#stopped) {
            return;
          }
          this.#setOut(-1);
          this.#failures = 0;
          try {
            this.#db.installJob(output);
          } catch {
            // Poisoned (the next write reports it), or an output the database refused as
            // invalid (its files were removed; its work is handed out again).
          }
          this.#poll();
        });
      },
      () => {
        this.#between(() => {
          if (this.#stopped) {
            return;
          }
          this.#setOut(-1);
          try {
            this.#db.abandonJob(job);
          } catch {
            return;
          }
          this.#failures += 1;
          if (this.#failures < FAILURES_BEFORE_FALLBACK) {
            this.#poll();
            return;
          }
          // Maintenance goes on in this thread: it reports a failure the job met in the
          // database itself (poisoning it), or does the work.
          this.#failed = true;
          this.#db.useJobs(false);
          this.#compactHere();
          this.#fallback.schedule();
        });
      },
    );
  }

  #setOut(change: number): void {
    const before = this.#out;
    this.#out += change;
    if ((before === 0) !== (this.#out === 0)) {
      this.#busy(this.#out > 0);
    }
  }
}
