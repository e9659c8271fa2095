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
import { MAINTENANCE_EVERY, type MaintenanceScheduler } from "./maintenance.js";

/** Jobs failed in a row after which maintenance runs in this thread instead. */
export const FAILURES_BEFORE_FALLBACK = 3;

/** Runs encoded maintenance jobs somewhere else. */
export interface JobRunner {
  /** Runs `job`; resolves with its encoded output, rejects if it failed. */
  run(job: Uint8Array): Promise<Uint8Array>;
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
  /** Takes back encoded job `job`, whose runner failed. */
  abandonJob(job: Uint8Array): void;
  /** Whether maintenance runs as jobs: writes then do no inline maintenance step. */
  useJobs(on: boolean): void;
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
  /** Jobs out (the database has at most one flush and one compaction out). */
  #out = 0;
  #polling = false;
  #failed = false;
  /** Jobs failed since the last one that succeeded. */
  #failures = 0;
  #stopped = false;
  /** Bytes written since the last poll. */
  #unpolled = 0;

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

  /** Stops handing out jobs and stops the runner. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#fallback.stop();
    this.#setOut(-this.#out);
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
    } catch {
      // The database is poisoned or closed: the next request reports it.
      return;
    }
    // First: it is short (two syncs), and the next switch needs it.
    if (log !== undefined) {
      this.#dispatch(log);
    }
    while (!this.#stopped && !this.#failed) {
      let job: Uint8Array | undefined;
      try {
        job = this.#db.nextJob();
      } catch {
        // The database is poisoned or closed: the next request reports it.
        return;
      }
      if (job === undefined) {
        return;
      }
      this.#dispatch(job);
    }
  }

  #dispatch(job: Uint8Array): void {
    this.#setOut(1);
    this.#runner.run(job).then(
      (output) => {
        this.#run(() => {
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
        this.#run(() => {
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
