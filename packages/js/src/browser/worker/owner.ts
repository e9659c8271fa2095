/**
 * The worker that owns a database: it holds the database's Web Lock, its OPFS slot pool and the
 * open engine, and serves requests (`../../server/database-server.ts`) from its own page and,
 * through the tab registry (`tab-registry.ts`), from pages of other tabs. This module opens and
 * closes; the pool's sizing is `slot-reserve.ts`, export and checkpoint have their own modules.
 *
 * @module
 */
import type { WriteHooks } from "../../engine/database-handle.js";
import { closedError } from "../../errors.js";
import { debugPanic } from "../../engine/module-functions.js";
import { onPanic } from "../../engine/instance.js";
import { openDatabaseSync, type Environment, type SyncDatabaseImpl } from "../../engine/sync-database.js";
import { DatabaseServer } from "../../server/database-server.js";
import { ClientResources } from "../../server/client-resources.js";
import { IDLE_SEAL_BYTES } from "../../engine/maintenance.js";
import type { KeyspaceDeclaration, Reply, RequestMessage } from "../../transport/requests.js";
import { ownBuffers, transferables } from "../../transport/transferables.js";
import type { Release } from "../locks.js";
import { channelNames, type BrowserStats, type OpenRequest, type OwnerAnnouncement } from "../messages.js";
import { databaseDirectory, encodeDatabaseName } from "../opfs/directories.js";
import type { OpfsPool } from "../opfs/opfs-pool.js";
import { checkpointInto } from "./checkpoint.js";
import { exportDatabase } from "../../archive/export-database.js";
import {
  GROW_AFTER_OPEN_MS,
  SERVED_SLOTS,
  SLOTS_KEPT,
  SlotReserve,
  openPool,
  type SlotTargets,
} from "./slot-reserve.js";
import { TabRegistry } from "./tab-registry.js";

/** The write hooks of a database served directly once it closes: its writes fail `CLOSED`. */
const CLOSED_HOOKS: WriteHooks = {
  before: () => {
    throw closedError("the database");
  },
  after: () => undefined,
};

/** Sends replies to the owner's own page (transferring the buffers listed). */
export type PostToPage = (replies: Reply[], transfer: Transferable[]) => void;

export class Owner {
  /** Identifies this owner (and its era: a later owner of the same database has another id). */
  readonly id = crypto.randomUUID();
  readonly #name: string;
  readonly #pool: OpfsPool;
  readonly #db: SyncDatabaseImpl;
  readonly #server: DatabaseServer;
  readonly #slots: SlotReserve;
  readonly #tabs: TabRegistry;
  readonly #local: ClientResources;
  readonly #release: Release;
  readonly #unsubscribePanic: () => void;
  #closed = false;

  private constructor(
    request: OpenRequest,
    pool: OpfsPool,
    db: SyncDatabaseImpl,
    release: Release,
    slots: SlotTargets,
  ) {
    this.#name = request.name;
    this.#pool = pool;
    this.#db = db;
    this.#release = release;
    this.#local = new ClientResources(request.client, false);
    this.#slots = new SlotReserve(pool, () => this.#closed, slots);
    this.#server = new DatabaseServer(
      db,
      {
        checkpoint: (destination) => checkpointInto(db, pool, this.#name, destination),
        exportArchive: () => exportDatabase(db, encodeDatabaseName(this.#name)),
        stats: () => this.#stats(),
        debugPanic: (message) => debugPanic(message),
        debugLoseReplies: (client) => {
          client.loseNextReplies = true;
        },
        prepare: (op, args) => this.#slots.prepare(op, args),
        canMerge: () => this.#slots.canMerge(),
        mayMaintain: () => this.#slots.mayMaintain(() => this.#server.maintainSoon()),
        afterMessage: () => {
          this.#tabs.afterMessage();
          void this.#slots.growLater();
        },
      },
      { autoMaintenance: request.options.autoMaintenance !== false, idleSeal: true },
    );
    this.#tabs = new TabRegistry(this.id, request.name, request.exclusive, this.#server, request.client);
    // After a panic the engine's files are closed (by the database handle's own listener): let
    // another tab take over, while this one's page gets PANIC for everything.
    this.#unsubscribePanic = onPanic(() => {
      this.#stopServing();
      this.#release();
    });
    const announcements = new BroadcastChannel(channelNames.announcements(this.#name));
    announcements.postMessage({ type: "owner", owner: this.id } satisfies OwnerAnnouncement);
    announcements.close();
    // The pool grows to its working size a moment after the page has its answer (a write that
    // comes first makes it grow at once).
    setTimeout(() => void this.#slots.growLater(), GROW_AFTER_OPEN_MS);
  }

  /**
   * Opens database `request.name` for a worker that holds its lock (`release` lets go of it).
   * `takeover`: another owner had it open a moment ago, so it exists and its files may still be
   * closing. `wasmReady` settles once the WebAssembly module is loaded. `slots`: how many free
   * slots the pool keeps ready. Returns the owner and whether the database was created.
   */
  static async open(
    request: OpenRequest,
    release: Release,
    takeover: boolean,
    wasmReady: Promise<void>,
    slots: SlotTargets = SERVED_SLOTS,
  ): Promise<{ owner: Owner; created: boolean }> {
    let pool: OpfsPool | undefined;
    // Settled here too, so that a failure is never an unhandled rejection.
    const loaded = wasmReady.then(
      () => undefined,
      (error: unknown) => error,
    );
    try {
      pool = await Owner.#openPool(request, takeover);
      const created = !pool.exists("CURRENT");
      const failure = await loaded;
      if (failure !== undefined) {
        throw failure;
      }
      const env: Environment = {
        resolve: (name) => name,
        storage: () => pool as OpfsPool,
      };
      const db = openDatabaseSync(env, request.name, {
        ...request.options,
        ...(takeover ? { errorIfExists: false } : {}),
        keyEncoding: "binary",
        valueEncoding: "binary",
        autoMaintenance: false,
      });
      return { owner: new Owner(request, pool, db, release, slots), created };
    } catch (error) {
      pool?.releaseAll();
      release();
      throw error;
    }
  }

  /**
   * Opens the slot pool of the database's directory: the one the page looked up, unless it has
   * gone since (the database deleted before this worker had its lock), else looked up now.
   */
  static async #openPool(request: OpenRequest, takeover: boolean): Promise<OpfsPool> {
    if (request.directory !== undefined) {
      try {
        return await openPool(request.directory);
      } catch (error) {
        const cause = (error as { cause?: unknown }).cause;
        if (!(cause instanceof DOMException && cause.name === "NotFoundError")) {
          throw error;
        }
      }
    }
    const create = takeover || request.options.createIfMissing !== false;
    return openPool(await databaseDirectory(request.name, create));
  }

  /**
   * Makes the owner's database usable directly, through the synchronous API in this worker
   * (`../own-worker/`), beside the tabs it serves: writes first check that the pool has free
   * slots (`BUSY` if not, nothing written) and are followed by maintenance. Returns the database
   * (binary keys and values; other encodings are views of the same handle).
   */
  serveDirectly(): SyncDatabaseImpl {
    this.#db.db.hooks = {
      before: () => this.#slots.checkSyncWrite(),
      after: () => this.#server.wroteDirectly(),
    };
    return this.#db;
  }

  /** Resolves once the pool has its target of free slots (`QUOTA` if it cannot grow). */
  ready(): Promise<void> {
    return this.#slots.ready();
  }

  /** The database's files as a plain tar archive (as the page's `export()`). */
  exportNow(): Blob {
    this.#slots.checkSyncWrite(); // the checkpoint flushes the memtable into a new table
    return exportDatabase(this.#db, encodeDatabaseName(this.#name));
  }

  /**
   * Serves requests of the owner's own page (after binding the keyspaces it declares); `post`
   * sends the replies back.
   */
  serveLocal(requests: RequestMessage[], keyspaces: KeyspaceDeclaration[] | undefined, post: PostToPage): void {
    this.#server.serve(this.#local, requests, keyspaces, (replies) => {
      const transfer: ArrayBuffer[] = [];
      for (const reply of replies) {
        if (reply[1]) {
          reply[2] = ownBuffers(reply[2]);
          transferables(reply[2], transfer);
        }
      }
      post(replies, transfer);
    });
  }

  /**
   * Closes the database (after every request queued before) and lets go of its lock. Served
   * directly, its writes fail `CLOSED` from this call on, before the close itself runs.
   */
  close(): Promise<void> {
    if (this.#db.db.hooks !== undefined) {
      this.#db.db.hooks = CLOSED_HOOKS;
    }
    return new Promise((resolve, reject) => {
      this.#server.run(async () => {
        try {
          await this.#close();
          resolve();
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
  }

  async #close(): Promise<void> {
    if (this.#closed) {
      return;
    }
    this.#stopServing();
    try {
      this.#local.closeAll();
      try {
        if (this.#db.stats().memtableBytes >= IDLE_SEAL_BYTES) {
          // So that the next open has no log to replay (past the closed database's write hooks).
          const hooks = this.#db.db.hooks;
          this.#db.db.hooks = undefined;
          try {
            this.#db.flush();
          } finally {
            this.#db.db.hooks = hooks;
          }
        }
      } catch {
        // A poisoned database closes as it is: reopening replays its log.
      }
      try {
        await this.#pool.trim(SLOTS_KEPT);
      } catch {
        // Extra free slots only cost the next open a little time.
      }
      this.#db.close();
    } finally {
      // Only once the files are closed, so that the next owner can open them at once.
      this.#release();
    }
  }

  /** Stops serving (on close, or after a panic). */
  #stopServing(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    this.#unsubscribePanic();
    void this.#server.stop();
    this.#tabs.close();
  }

  async #stats(): Promise<BrowserStats> {
    const stats = this.#db.stats();
    let persisted = false;
    try {
      persisted = await navigator.storage.persisted();
    } catch {
      // Not answerable here: report it as not granted.
    }
    return { ...stats, persisted, slots: { used: this.#pool.usedSlots, free: this.#pool.freeSlots } };
  }
}
