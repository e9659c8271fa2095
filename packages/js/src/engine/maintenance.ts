/**
 * Flush and compaction without threads: the one scheduler of maintenance turns, used by the
 * synchronous API (`database-handle.ts`) and by every server (`../server/database-server.ts`:
 * Node's, and the browser owner's). WebAssembly has no background thread, so maintenance runs in turns between other
 * work: each turn runs bounded steps (`Db::maintain` with {@link STEP_BUDGET} bytes of table
 * output) for at most {@link TURN_MS} and comes back while work remains.
 *
 * @module
 */

/** Bytes of table output one maintenance step may write. */
export const STEP_BUDGET = 512 << 10;
/** How long one turn of steps may keep its thread (milliseconds). */
export const TURN_MS = 4;
/**
 * A server schedules a turn after this many bytes of writes (not after every write: a turn that
 * finds nothing to do still costs a timer and a call), and once requests pause.
 */
export const MAINTENANCE_EVERY = 64 << 10;
/**
 * With the idle seal on, after this long without requests a turn runs, and a memtable of at
 * least {@link IDLE_SEAL_BYTES} is sealed and flushed in idle time: the log the next open
 * replays stays short (a browser tab is often closed without `close()`, and reopened next
 * visit). Browsers' owners also flush such a memtable when they close.
 */
export const IDLE_SEAL_MS = 1000;
export const IDLE_SEAL_BYTES = 256 << 10;

/** The database a scheduler maintains. */
export interface Maintainable {
  /** One bounded step of flush or compaction; whether more work is pending. Throws if it failed. */
  maintain(budget: number): boolean;
  /** Bytes in the mutable memtable. */
  memtableBytes(): number;
  /** Makes the memtable immutable, for later steps to flush. */
  sealMemtable(): void;
}

export interface MaintenanceOptions {
  /**
   * Runs a turn: the synchronous API calls it at once; a server queues it between requests, so
   * that no request sees a step half done. Called from a task scheduled by {@link later}.
   */
  run(turn: () => void): void;
  /** Schedules `task` soon, after pending I/O and timers (Node `setImmediate`, else `setTimeout`). */
  later?(task: () => void): void;
  /**
   * Before each step: `false` pauses the turn (a browser owner first grows its slot pool, then
   * calls {@link MaintenanceScheduler.schedule} again). Default: always go on.
   */
  mayStep?(): boolean;
  /** Seal a memtable of {@link IDLE_SEAL_BYTES} once requests paused {@link IDLE_SEAL_MS} (default off). */
  idleSeal?: boolean;
  /**
   * Told `true` when a turn is scheduled while none was, and `false` when a turn ends with no
   * work left (or the scheduler stops): Node's engine worker keeps the process alive meanwhile.
   */
  busy?(busy: boolean): void;
}

/** `setImmediate` where it exists (Node: a ref'd one, so a pending backlog keeps the process
 * alive until it is done or the database closed; an unref'd one would not wake a loop blocked
 * on I/O), else `setTimeout(0)`. */
const soon: (task: () => void) => void =
  typeof setImmediate === "function"
    ? (task) => {
        setImmediate(task);
      }
    : (task) => {
        setTimeout(task, 0);
      };

/** Resolves in a later turn of the event loop (after pending I/O and timers): where a long request pauses. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    soon(resolve);
  });
}

export class MaintenanceScheduler {
  readonly #db: Maintainable;
  readonly #run: (turn: () => void) => void;
  readonly #later: (task: () => void) => void;
  readonly #mayStep: () => boolean;
  readonly #idleSeal: boolean;
  readonly #busy: (busy: boolean) => void;
  #scheduled = false;
  /** Whether work may remain (a turn is scheduled, or the last one ran out of time). */
  #working = false;
  #stopped = false;
  /** Bytes written since the last turn was scheduled. */
  #unmaintained = 0;
  /** When requests were last served (`performance.now()`), and the pending idle check. */
  #lastActive = 0;
  #idleCheck: ReturnType<typeof setTimeout> | undefined;

  constructor(db: Maintainable, options: MaintenanceOptions) {
    this.#db = db;
    this.#run = options.run;
    this.#later = options.later ?? soon;
    this.#mayStep = options.mayStep ?? (() => true);
    this.#idleSeal = options.idleSeal === true;
    this.#busy = options.busy ?? (() => undefined);
  }

  /** Schedules a turn unless one is scheduled already (or the scheduler is stopped). */
  schedule(): void {
    if (this.#scheduled || this.#stopped) {
      return;
    }
    this.#scheduled = true;
    this.#unmaintained = 0;
    this.#setWorking(true);
    this.#later(() => {
      this.#run(() => this.#turn());
    });
  }

  /**
   * A server served requests that wrote about `bytes`: a turn follows every
   * {@link MAINTENANCE_EVERY} bytes, and (with the idle seal) an idle check once requests pause.
   */
  served(bytes: number): void {
    this.#lastActive = performance.now();
    if (bytes <= 0) {
      return;
    }
    this.#unmaintained += bytes;
    if (this.#unmaintained >= MAINTENANCE_EVERY) {
      this.schedule();
    }
    if (this.#idleSeal) {
      this.#idleCheck ??= setTimeout(() => this.#whenIdle(), IDLE_SEAL_MS);
    }
  }

  /** Stops scheduling (the database closes); a turn already queued finds it stopped. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#idleCheck);
    this.#idleCheck = undefined;
    this.#setWorking(false);
  }

  #setWorking(working: boolean): void {
    if (working !== this.#working) {
      this.#working = working;
      this.#busy(working);
    }
  }

  /** Steps for up to {@link TURN_MS}; schedules the next turn while work remains. */
  #turn(): void {
    this.#scheduled = false;
    if (this.#steps()) {
      this.schedule();
    } else if (!this.#scheduled) {
      this.#setWorking(false);
    }
  }

  /** Runs steps until none is pending (false) or the turn's time is up (true: more to do). */
  #steps(): boolean {
    const deadline = performance.now() + TURN_MS;
    while (!this.#stopped && this.#mayStep()) {
      try {
        if (!this.#db.maintain(STEP_BUDGET)) {
          return false;
        }
      } catch {
        // A failed step poisoned the database (the next write reports it) or panicked the
        // instance (every request reports it): either way, nothing more to do here.
        return false;
      }
      if (performance.now() >= deadline) {
        return true;
      }
    }
    return false;
  }

  /** Seals a big memtable once requests have paused for {@link IDLE_SEAL_MS}. */
  #whenIdle(): void {
    const quiet = performance.now() - this.#lastActive;
    if (quiet < IDLE_SEAL_MS) {
      this.#idleCheck = setTimeout(() => this.#whenIdle(), IDLE_SEAL_MS - quiet);
      return;
    }
    this.#idleCheck = undefined;
    this.#run(() => {
      if (this.#stopped) {
        return;
      }
      try {
        if (this.#db.memtableBytes() >= IDLE_SEAL_BYTES) {
          this.#db.sealMemtable();
        }
      } catch {
        return; // As a failed step (above).
      }
      this.schedule();
    });
  }
}
