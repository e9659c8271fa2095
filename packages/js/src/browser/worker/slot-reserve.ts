/**
 * Sizing the OPFS slot pool (`../opfs/opfs-pool.ts`) as the owner serves: the engine creates
 * files synchronously, but slots can only be made asynchronously, so enough free ones must be
 * ready before any request or maintenance step that may create files.
 *
 * @module
 */
import { ShaleError } from "../../errors.js";
import type { Args, Op } from "../../transport/requests.js";
import { createsFiles } from "../../server/operations/table.js";
import { openLivePool } from "../opfs/live-pool.js";
import type { OpfsPool } from "../opfs/opfs-pool.js";

/**
 * Free slots (pool files ready to hold a new engine file). A write may create a few files (a new
 * log, a table, a manifest): with fewer than `SLOTS_LOW` free before one, the pool grows first
 * (the synchronous API in a worker, which cannot wait: `BUSY`); below the targets' `growBelow` it
 * grows in the background, to their `target` ({@link SlotTargets}). Reads create no files
 * and never wait. A close keeps `SLOTS_KEPT`, what the next open needs (a new manifest, its
 * `CURRENT`, a new log, a table of the log it replays): each free slot costs an open a file
 * handle to open, its main cost. The pool grows a moment after the open.
 */
export const SLOTS_LOW = 8;
export const SLOTS_KEPT = 4;

/** When the pool grows in the background (below `growBelow` free slots), and to how many. */
export interface SlotTargets {
  growBelow: number;
  target: number;
}

/** An owner serving requests, which waits for the pool before a request that needs it. */
export const SERVED_SLOTS: SlotTargets = { growBelow: 10, target: 14 };

/**
 * The synchronous API in a worker (`../own-worker/`): its writes cannot wait for the pool, which
 * grows only while the application awaits something, so more free slots are kept ready (each
 * memtable switch takes one, each flush one, a compaction step a few).
 */
export const SYNC_SLOTS: SlotTargets = { growBelow: 24, target: 32 };
/** How long after an open the pool grows to its working size. */
export const GROW_AFTER_OPEN_MS = 100;
/** A maintenance budget above this may rewrite the whole tree: reserve a slot per file first. */
const LARGE_BUDGET = 64 << 20;

/** Opens the live slot pool of database directory `dir` (`../opfs/live-pool.ts`), with `SLOTS_KEPT` free. */
export function openPool(dir: FileSystemDirectoryHandle): Promise<OpfsPool> {
  return openLivePool(dir, { minFree: SLOTS_KEPT });
}

export class SlotReserve {
  readonly #pool: OpfsPool;
  readonly #stopped: () => boolean;
  readonly #targets: SlotTargets;
  /** The background growth of the pool under way. */
  #growing: Promise<void> | undefined;

  /** `stopped`: whether the owner stopped serving (no growth then). */
  constructor(pool: OpfsPool, stopped: () => boolean, targets: SlotTargets = SERVED_SLOTS) {
    this.#pool = pool;
    this.#stopped = stopped;
    this.#targets = targets;
  }

  /** Free slots request `op` needs before it runs. */
  #needed<O extends Op>(op: O, args: Args<O>): number {
    if (op === "compact" || (op === "maintain" && (args[0] as number) > LARGE_BUDGET)) {
      // A compaction of everything writes up to one new table per table before freeing any.
      return this.#pool.usedSlots + SLOTS_LOW;
    }
    return createsFiles(op) ? SLOTS_LOW : 0;
  }

  /** Resolves once the pool has the free slots request `op` needs; `undefined` if it has. */
  prepare(op: Op, args: Args<Op>): Promise<void> | undefined {
    const need = this.#needed(op, args);
    return this.#pool.freeSlots < need ? this.#pool.reserve(need + this.#targets.target) : undefined;
  }

  /**
   * Before a synchronous call that may create files, which cannot wait for the pool: throws
   * `BUSY` (nothing runs; the pool starts growing) unless `SLOTS_LOW` slots are free, and starts
   * topping the pool up in the background when it is getting low.
   */
  checkSyncWrite(): void {
    void this.growLater();
    if (this.#pool.freeSlots >= SLOTS_LOW) {
      return;
    }
    throw new ShaleError(
      "BUSY",
      "shaledb: no OPFS file is ready for what this write may create (the pool grows only while " +
        "the worker awaits something): nothing was written; await db.ready() and retry",
    );
  }

  /** Resolves once the pool has its target of free slots (rejects `QUOTA` if it cannot grow). */
  async ready(): Promise<void> {
    await this.#growing;
    if (this.#pool.freeSlots < this.#targets.target) {
      await this.#pool.reserve(this.#targets.target);
    }
  }

  /** Whether a run of writes (which may create files) may be committed now. */
  canMerge(): boolean {
    return this.#pool.freeSlots >= SLOTS_LOW;
  }

  /**
   * Whether a maintenance step (which may create files) may run now. If not, the pool grows in
   * the background (requests meanwhile do not wait for it) and `resume` is called once it has
   * (not if it could not grow: out of quota).
   */
  mayMaintain(resume: () => void): boolean {
    if (this.#pool.freeSlots >= SLOTS_LOW) {
      return true;
    }
    void this.growLater().then(() => {
      if (this.#pool.freeSlots >= SLOTS_LOW) {
        resume();
      }
    });
    return false;
  }

  /**
   * Tops the pool up in the background if it is getting low. Outside the job queue: requests
   * go on meanwhile (the pool adds the new slots atomically once they are open).
   */
  growLater(): Promise<void> {
    if (this.#stopped() || this.#pool.freeSlots >= this.#targets.growBelow) {
      return Promise.resolve();
    }
    this.#growing ??= this.#pool
      .reserve(this.#targets.target)
      .catch(() => undefined) // Out of quota: the request that needs a slot reports it.
      .finally(() => {
        this.#growing = undefined;
      });
    return this.#growing;
  }
}
