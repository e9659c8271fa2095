/**
 * One open database inside the WebAssembly instance, as the TypeScript layer tracks it: its
 * handle, the storage bridge it owns, the iterators, snapshots and transactions open on it, and
 * the scheduling of flush and compaction in idle time.
 *
 * @module
 */
import {
  call,
  checkGeneration,
  currentGeneration,
  onPanic,
  releaseIdleInstance,
  wasm,
} from "./instance.js";
import { forgetMemory, memorySize } from "./scratch.js";
import { closedError } from "../errors.js";
import { QueueSignals } from "./queue-signals.js";
import { MaintenanceScheduler } from "./maintenance.js";
import type { StorageHost } from "./storage-host.js";

/**
 * What an embedder adds around a database's writes (the browser's synchronous API in a worker:
 * its OPFS file pool must have files ready before a write, and maintenance follows writes).
 */
export interface WriteHooks {
  /** Before a call that may create files; throws (nothing written) if it must not run now. */
  before(): void;
  /** After a write. */
  after(): void;
}

/** Kinds of resources released when their database closes. */
export type ResourceKind = "iterator" | "snapshot" | "transaction";

const closers: Record<ResourceKind, (id: number) => void> = {
  iterator: (id) => wasm.iterClose(id),
  snapshot: (id) => wasm.snapshotClose(id),
  transaction: (id) => wasm.txRollback(id),
};

/**
 * Releases iterators and snapshots their user abandoned without `close()`, so they cannot pin
 * memory or hold back compaction forever.
 */
const abandoned = new FinalizationRegistry<{ db: DatabaseHandle; kind: ResourceKind; id: number }>(
  ({ db, kind, id }) => {
    db.release(kind, id);
  },
);

/**
 * When the last open database of this thread closes and the instance's memory has grown past
 * this, the instance is let go of so the memory is freed (WebAssembly memory never shrinks):
 * below it, keeping the instance is cheaper than instantiating a fresh one on the next open.
 */
const RELEASE_MEMORY_ABOVE = 64 << 20;

/** Databases open on the current instance (in this thread). */
let openDatabases = 0;

export class DatabaseHandle {
  readonly generation: number;
  #closed = false;
  /** Idle-time maintenance (with `autoMaintenance`). */
  readonly #maintenance: MaintenanceScheduler | undefined;
  readonly #resources = new Map<number, ResourceKind>();
  readonly #unsubscribePanic: () => void;
  /** See {@link WriteHooks}; none by default. */
  hooks: WriteHooks | undefined;
  /** Queues the core woke (pushes, releases, dead-letter moves, deletions), for waiting reads. */
  readonly queueSignals = new QueueSignals((on) => this.#listening(on));
  /** Topics the core woke (appends, deletions), for waiting subscriptions. */
  readonly topicSignals = new QueueSignals((on) => this.#listening(on));
  /** Listeners of the two above, and so whether the core logs woken objects. */
  #waiting = 0;
  /**
   * Writes to this database from this thread (one name, `""`: after every write call,
   * committed or not), for the change feeds that follow it (`changes({ follow: true })`).
   */
  readonly commitSignals = new QueueSignals();

  constructor(
    readonly id: number,
    readonly storage: StorageHost,
    readonly location: string,
    readonly autoMaintenance: boolean,
  ) {
    this.generation = currentGeneration();
    openDatabases += 1;
    this.#maintenance = autoMaintenance
      ? new MaintenanceScheduler(
          {
            maintain: (budget) => this.write(() => wasm.dbMaintain(this.id, budget)),
            memtableBytes: () => this.call(() => wasm.dbStats(this.id))[3] ?? 0,
            sealMemtable: () => this.write(() => wasm.dbSealMemtable(this.id)),
          },
          { run: (turn) => turn() },
        )
      : undefined;
    // After a panic the instance never drops its handles: release the files and the lock here.
    this.#unsubscribePanic = onPanic(() => {
      openDatabases = Math.max(0, openDatabases - 1);
      this.#closed = true;
      this.#maintenance?.stop();
      storage.releaseAll();
      this.commitSignals.notifyAll();
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Throws `CLOSED` or `PANIC` unless the database can be used. */
  check(): void {
    checkGeneration(this.generation);
    if (this.#closed) {
      throw closedError("the database");
    }
  }

  /** Calls into the instance for this database (checking it first). */
  call<T>(fn: () => T): T {
    this.check();
    return call(fn);
  }

  /**
   * Calls into the instance for a call that may write or create files (a write, a commit, a
   * flush, compaction, a new keyspace): as {@link call}, after the hooks' `before`.
   */
  write<T>(fn: () => T): T {
    this.mayWrite();
    return call(fn);
  }

  /** Throws unless a call that may write or create files may run now (see {@link write}). */
  mayWrite(): void {
    this.check();
    this.hooks?.before();
  }

  /**
   * Tracks resource `id` of `kind`, owned by JS object `owner`: released on `close()` of the
   * database, or when `owner` is garbage-collected without having been closed.
   */
  track(kind: ResourceKind, id: number, owner: object): void {
    this.#resources.set(id * 4 + kindIndex(kind), kind);
    abandoned.register(owner, { db: this, kind, id }, owner);
  }

  /** Releases a tracked resource (idempotent). */
  release(kind: ResourceKind, id: number, owner?: object): void {
    if (owner !== undefined) {
      abandoned.unregister(owner);
    }
    if (!this.#resources.delete(id * 4 + kindIndex(kind))) {
      return;
    }
    if (this.generation === currentGeneration() && !this.#closed) {
      try {
        call(() => closers[kind](id));
      } catch {
        // Only a panic can fail here, and it has been reported to whoever calls next.
      }
    }
  }

  /** Stops tracking a resource the instance has ended by itself (a committed transaction). */
  forget(kind: ResourceKind, id: number, owner?: object): void {
    if (owner !== undefined) {
      abandoned.unregister(owner);
    }
    this.#resources.delete(id * 4 + kindIndex(kind));
  }

  /**
   * After a write: make sure idle-time maintenance will run; wake the feeds that follow, and
   * the waiting reads of the queues and topics the core woke.
   */
  afterWrite(): void {
    this.#maintenance?.schedule();
    this.hooks?.after();
    this.commitSignals.notify("");
    if (this.#waiting > 0 && !this.#closed) {
      const woken = call(() => wasm.dbTakeWakes(this.id));
      for (let i = 0; i + 1 < woken.length; i += 2) {
        const signals = woken[i] === "queue" ? this.queueSignals : this.topicSignals;
        signals.notify(woken[i + 1] as string);
      }
    }
  }

  /** A waiting read of a queue or topic began (`true`) or ended: the core logs woken objects while any waits. */
  #listening(on: boolean): void {
    const before = this.#waiting;
    this.#waiting += on ? 1 : -1;
    if ((before === 0) !== (this.#waiting === 0) && !this.#closed && this.generation === currentGeneration()) {
      try {
        call(() => wasm.dbRecordWakes(this.id, this.#waiting > 0));
      } catch {
        // Only a panic can fail here, and it has been reported to whoever calls next.
      }
    }
  }

  /** Closes every resource, then the database, then the storage bridge. Idempotent. */
  close(): void {
    if (this.#closed) {
      return;
    }
    checkGeneration(this.generation);
    for (const [key, kind] of this.#resources) {
      call(() => closers[kind](Math.floor(key / 4)));
    }
    this.#resources.clear();
    this.#closed = true;
    this.#maintenance?.stop();
    this.#unsubscribePanic();
    openDatabases = Math.max(0, openDatabases - 1);
    try {
      call(() => wasm.dbClose(this.id));
    } finally {
      this.storage.releaseAll();
      // Watches of the synchronous API waiting for a commit end now (`./watch.ts`).
      this.commitSignals.notifyAll();
    }
    if (openDatabases === 0 && memorySize() > RELEASE_MEMORY_ABOVE && releaseIdleInstance()) {
      forgetMemory();
    }
  }
}

function kindIndex(kind: ResourceKind): number {
  return kind === "iterator" ? 0 : kind === "snapshot" ? 1 : 2;
}
