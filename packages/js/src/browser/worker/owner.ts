/**
 * The worker that owns a database: it holds the database's Web Lock, its OPFS slot pool and the
 * open engine, and serves requests from its own page and, over BroadcastChannels, from pages of
 * other tabs. Requests, maintenance steps and pool growth run one at a time ({@link JobQueue}),
 * each request to its end, so a request never sees another half done.
 *
 * @module
 */
import { debugPanic } from "../../core.js";
import { onPanic, wasm } from "../../engine/instance.js";
import { ShaleError } from "../../errors.js";
import { openDatabaseSync, type Environment, type SyncDatabaseImpl } from "../../engine/sync-database.js";
import { AppliedWrites } from "../../server/applied-writes.js";
import { ClientResources, Executor, WRITES } from "../../server/executor.js";
import { JobQueue } from "../../server/job-queue.js";
import { openLivePool } from "../opfs/live-pool.js";
import { acquireLock, whenReleased, type Release } from "../locks.js";
import type { OpfsPool } from "../opfs/opfs-pool.js";
import {
  checkDatabaseName,
  databaseDirectory,
  encodeDatabaseName,
  removeDatabaseDirectory,
} from "../opfs/directories.js";
import {
  PROTOCOL_VERSION,
  channelNames,
  lockNames,
  type BrowserStats,
  type FromOwner,
  type OpenRequest,
  type OwnerAnnouncement,
  type ToOwner,
} from "../messages.js";
import type {
  Args,
  KeyspaceDeclaration,
  Op,
  Reply,
  RequestMessage,
} from "../../transport/requests.js";
import { TarWriter } from "./tar.js";
import { toWire } from "../../transport/wire-error.js";
import { WritePath, isRejection } from "../../server/write-path.js";

/**
 * Free slots (pool files ready to hold a new engine file). A write may create a few files (a new
 * log, a table, a manifest): with fewer than `SLOTS_LOW` free before one, the pool grows first;
 * below `SLOTS_GROW_BELOW` it grows in the background, to `SLOTS_TARGET`. Reads create no files
 * and never wait. A close keeps `SLOTS_KEPT`, what the next open needs (a new manifest, its
 * `CURRENT`, a new log, a table of the log it replays): each free slot costs an open a file
 * handle to open, its main cost. The pool grows a moment after the open.
 */
const SLOTS_LOW = 8;
const SLOTS_GROW_BELOW = 10;
const SLOTS_TARGET = 14;
const SLOTS_KEPT = 4;
const GROW_AFTER_OPEN_MS = 100;
/** Requests that may create files (a write may start a new log and flush inline). */
const CREATES_FILES: ReadonlySet<Op> = new Set<Op>([
  "put",
  "delete",
  "write",
  "txCommit",
  "flush",
  "compact",
  "maintain",
  "keyspace",
]);
/** A maintenance budget above this may rewrite the whole tree: reserve a slot per file first. */
const LARGE_BUDGET = 64 << 20;
/** Bytes of table output per maintenance step, and how long one turn of steps may run. */
const STEP_BUDGET = 512 << 10;
const TURN_MS = 4;
/**
 * After this long without requests, a maintenance turn runs, and a memtable of at least
 * `IDLE_SEAL_BYTES` is sealed and flushed in idle time (close flushes one too): the log the next
 * open replays stays short (a tab is often closed without `close()`, and reopened next visit).
 */
const IDLE_SEAL_MS = 1000;
const IDLE_SEAL_BYTES = 256 << 10;

/**
 * Bytes a request writes, roughly (a commit's are unknown: counted as `MAINTENANCE_EVERY`);
 * flush and compaction may have work only after writes.
 */
function bytesWritten(request: RequestMessage): number {
  switch (request[1]) {
    case "put": {
      const [, key, value] = request[2] as Args<"put">;
      return key.length + value.length;
    }
    case "delete":
      return (request[2] as Args<"delete">)[1].length;
    case "write":
      return (request[2] as Args<"write">)[0].length;
    case "txCommit":
      return MAINTENANCE_EVERY;
    default:
      return 0;
  }
}

/**
 * A maintenance turn is scheduled after this many bytes of writes (not after every write: a
 * turn that finds nothing to do still costs a timer and a call), and once requests pause.
 */
const MAINTENANCE_EVERY = 64 << 10;

/** Sends replies to the owner's own page (transferring the buffers listed). */
export type PostToPage = (replies: Reply[], transfer: Transferable[]) => void;

interface RemoteClient {
  /** What it has open, its keyspace numbers; its id. */
  resources: ClientResources;
  channel: BroadcastChannel;
  /** Stops watching the client's liveness lock. */
  stopWatching: AbortController;
}

/** Opens the live slot pool of database directory `dir` (`live-pool.ts`). */
function openPool(dir: FileSystemDirectoryHandle): Promise<OpfsPool> {
  return openLivePool(dir, { minFree: SLOTS_KEPT });
}

/** Below this size a buffer is copied rather than transferred (cheaper, for small ones). */
const TRANSFER_FROM = 16 << 10;

/** The large Uint8Arrays of a result that own their whole buffer (fresh copies: safe to move). */
function transferables(result: unknown, into: Transferable[]): void {
  if (result instanceof Uint8Array) {
    if (
      result.byteLength >= TRANSFER_FROM &&
      result.byteOffset === 0 &&
      result.byteLength === result.buffer.byteLength
    ) {
      into.push(result.buffer as ArrayBuffer);
    }
  } else if (Array.isArray(result)) {
    for (const item of result) {
      transferables(item, into);
    }
  }
}

export class Owner {
  /** Identifies this owner (and its era: a later owner of the same database has another id). */
  readonly id = crypto.randomUUID();
  readonly #name: string;
  readonly #pool: OpfsPool;
  readonly #db: SyncDatabaseImpl;
  readonly #executor: Executor;
  readonly #applied: AppliedWrites;
  readonly #writes: WritePath;
  readonly #queue = new JobQueue();
  readonly #local: ClientResources;
  readonly #clients = new Map<string, RemoteClient>();
  readonly #release: Release;
  readonly #exclusive: boolean;
  readonly #autoMaintenance: boolean;
  readonly #requests: BroadcastChannel;
  readonly #unsubscribePanic: () => void;
  #closed = false;
  #maintenanceScheduled = false;
  /** The background growth of the pool under way. */
  #growing: Promise<void> | undefined;
  /** When the last request was served (`performance.now()`), and whether an idle check is due. */
  #lastRequest = 0;
  #idleCheck: ReturnType<typeof setTimeout> | undefined;
  /** Bytes written since the last maintenance turn was scheduled. */
  #unmaintained = 0;
  /** Whether the applied-write records of pages gone were swept (once per owner). */
  #swept = false;

  private constructor(
    request: OpenRequest,
    pool: OpfsPool,
    db: SyncDatabaseImpl,
    release: Release,
  ) {
    this.#name = request.name;
    this.#pool = pool;
    this.#db = db;
    this.#release = release;
    this.#exclusive = request.exclusive;
    this.#autoMaintenance = request.options.autoMaintenance !== false;
    this.#local = new ClientResources(request.client, false);
    this.#applied = new AppliedWrites(db);
    this.#executor = new Executor(db, {
      checkpoint: (destination) => this.#checkpoint(destination),
      exportArchive: () => this.#exportArchive(),
      stats: () => this.#stats(),
      debugPanic: (message) => debugPanic(message),
      debugLoseReplies: (client) => {
        client.loseNextReplies = true;
      },
      debugFailMergedWrite: (code) => this.#writes.failNextMerged(code),
    });
    this.#writes = new WritePath(this.#executor, this.#applied);
    // After a panic the engine's files are closed (by the database handle's own listener): let
    // another tab take over, while this one's page gets PANIC for everything.
    this.#unsubscribePanic = onPanic(() => {
      this.#stopServing();
      this.#release();
    });
    this.#requests = new BroadcastChannel(channelNames.requests(this.#name));
    this.#requests.onmessage = (event: MessageEvent<ToOwner>) => this.#onRemote(event.data);
    const announcements = new BroadcastChannel(channelNames.announcements(this.#name));
    announcements.postMessage({ type: "owner", owner: this.id } satisfies OwnerAnnouncement);
    announcements.close();
    // Work left by an earlier session (immutable memtables recovered, a deep L0) starts now, and
    // the pool grows to its working size a moment after the page has its answer (a write that
    // comes first makes it grow at once).
    this.#scheduleMaintenance();
    setTimeout(() => void this.#growLater(), GROW_AFTER_OPEN_MS);
  }

  /**
   * Opens database `request.name` for a worker that holds its lock (`release` lets go of it).
   * `takeover`: another owner had it open a moment ago, so it exists and its files may still be
   * closing. `wasmReady` settles once the WebAssembly module is loaded. Returns the owner and
   * whether the database was created.
   */
  static async open(
    request: OpenRequest,
    release: Release,
    takeover: boolean,
    wasmReady: Promise<void>,
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
      return { owner: new Owner(request, pool, db, release), created };
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
   * Serves requests of the owner's own page (after binding the keyspaces it declares); `post`
   * sends the replies back.
   */
  serveLocal(
    requests: RequestMessage[],
    keyspaces: KeyspaceDeclaration[] | undefined,
    post: PostToPage,
  ): void {
    this.#queue.push(() =>
      this.#process(this.#local, requests, keyspaces, (replies) => {
        const transfer: Transferable[] = [];
        for (const reply of replies) {
          if (reply[1]) transferables(reply[2], transfer);
        }
        post(replies, transfer);
      }),
    );
  }

  /** Closes the database (after every request queued before) and lets go of its lock. */
  close(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push(async () => {
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
      clearTimeout(this.#idleCheck);
      try {
        if (this.#db.stats().memtableBytes >= IDLE_SEAL_BYTES) {
          this.#db.flush(); // so that the next open has no log to replay
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

  /** Stops serving other tabs (on close, or after a panic). */
  #stopServing(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    this.#unsubscribePanic();
    this.#requests.close();
    for (const client of this.#clients.keys()) {
      // Not gone: it will send what this owner leaves unanswered to the next one, whose
      // answers depend on the client's applied-write record; that stays.
      this.#forget(client, false);
    }
  }

  /** Free slots request `op` needs before it runs. */
  #slotsNeeded<O extends Op>(op: O, args: Args<O>): number {
    if (op === "compact" || (op === "maintain" && (args[0] as number) > LARGE_BUDGET)) {
      // A compaction of everything writes up to one new table per table before freeing any.
      return this.#pool.usedSlots + SLOTS_LOW;
    }
    return CREATES_FILES.has(op) ? SLOTS_LOW : 0;
  }

  async #process(
    client: ClientResources,
    requests: RequestMessage[],
    keyspaces: KeyspaceDeclaration[] | undefined,
    reply: (replies: Reply[]) => void,
  ): Promise<void> {
    const replies: Reply[] = [];
    let written = 0;
    if (keyspaces !== undefined && !this.#closed) {
      this.#executor.declare(client, keyspaces);
    }
    const todo = this.#closed ? requests : this.#writes.skipApplied(client, requests, replies);
    /** Writes before this index run one by one (a merged batch of them was refused). */
    let separately = 0;
    for (let i = 0; i < todo.length; i++) {
      // Writes that arrived together are written together (a group commit).
      let end = i;
      while (end < todo.length && WRITES.has((todo[end] as RequestMessage)[1])) {
        end++;
      }
      if (end - i >= 2 && i >= separately && !this.#closed && this.#pool.freeSlots >= SLOTS_LOW) {
        const run = todo.slice(i, end);
        const failure = this.#writes.commitMerged(client, run);
        if (failure === undefined || !isRejection(failure)) {
          for (const [id] of run) {
            replies.push(failure === undefined ? [id, true, undefined] : [id, false, toWire(failure)]);
          }
          if (failure === undefined) {
            written += run.reduce((n, request) => n + bytesWritten(request), 0);
          }
          i = end - 1;
          continue;
        }
        // Refused before anything was written (a bad one among them): each runs alone, so that
        // only the bad one fails.
        separately = end;
      }
      const request = todo[i] as RequestMessage;
      const [id, op, args] = request;
      const tracked = client.tracked && WRITES.has(op);
      try {
        const need = this.#slotsNeeded(op, args);
        if (!this.#closed && this.#pool.freeSlots < need) {
          await this.#pool.reserve(need + SLOTS_TARGET).catch((error: unknown) => {
            if (tracked) this.#writes.notCommitted(client, request);
            throw error;
          });
        }
        let result: unknown;
        if (tracked) {
          this.#writes.commitTracked(client, request);
        } else {
          result = this.#executor.execute(client, op, args);
          if (result instanceof Promise) {
            result = await result;
          }
        }
        replies.push([id, true, result]);
        written += bytesWritten(request);
      } catch (error) {
        replies.push([id, false, toWire(error)]);
      }
    }
    reply(replies);
    this.#lastRequest = performance.now();
    if (written > 0) {
      this.#unmaintained += written;
      if (this.#unmaintained >= MAINTENANCE_EVERY) {
        this.#scheduleMaintenance();
      }
      this.#idleCheck ??= setTimeout(() => this.#whenIdle(), IDLE_SEAL_MS);
    }
    if (this.#applied.opened && !this.#swept) {
      this.#swept = true;
      void this.#sweepApplied();
    }
    void this.#growLater();
  }

  /** Removes the applied-write records of pages that are gone (their client locks are free). */
  async #sweepApplied(): Promise<void> {
    let held: Set<string>;
    try {
      const snapshot = await navigator.locks.query();
      const prefix = lockNames.client("");
      held = new Set(
        [...(snapshot.held ?? []), ...(snapshot.pending ?? [])]
          .map((lock) => lock.name ?? "")
          .filter((name) => name.startsWith(prefix))
          .map((name) => name.slice(prefix.length)),
      );
    } catch {
      return; // Kept until a later owner sweeps.
    }
    this.#queue.push(() => {
      if (this.#closed) {
        return;
      }
      try {
        this.#applied.sweep((client) => client === this.#local.id || held.has(client) || this.#clients.has(client));
      } catch {
        // A failed write: the next owner sweeps again.
      }
    });
  }

  /** Seals a big memtable once requests have paused for `IDLE_SEAL_MS`. */
  #whenIdle(): void {
    const quiet = performance.now() - this.#lastRequest;
    if (quiet < IDLE_SEAL_MS) {
      this.#idleCheck = setTimeout(() => this.#whenIdle(), IDLE_SEAL_MS - quiet);
      return;
    }
    this.#idleCheck = undefined;
    this.#queue.push(() => {
      if (this.#closed || !this.#autoMaintenance) {
        return;
      }
      if (this.#db.stats().memtableBytes >= IDLE_SEAL_BYTES) {
        const db = this.#db.db;
        db.call(() => wasm.dbSealMemtable(db.id));
      }
      this.#scheduleMaintenance();
    });
  }

  /**
   * Tops the pool up in the background if it is getting low. Outside the job queue: requests
   * go on meanwhile (the pool adds the new slots atomically once they are open).
   */
  #growLater(): Promise<void> {
    if (this.#closed || this.#pool.freeSlots >= SLOTS_GROW_BELOW) {
      return Promise.resolve();
    }
    this.#growing ??= this.#pool
      .reserve(SLOTS_TARGET)
      .catch(() => undefined) // Out of quota: the request that needs a slot reports it.
      .finally(() => {
        this.#growing = undefined;
      });
    return this.#growing;
  }

  #scheduleMaintenance(): void {
    if (!this.#autoMaintenance || this.#maintenanceScheduled || this.#closed) {
      return;
    }
    this.#maintenanceScheduled = true;
    this.#unmaintained = 0;
    setTimeout(() => this.#queue.push(() => this.#maintenanceTurn()), 0);
  }

  /** Steps of flush and compaction for a few milliseconds; reschedules while work remains. */
  async #maintenanceTurn(): Promise<void> {
    this.#maintenanceScheduled = false;
    const deadline = performance.now() + TURN_MS;
    while (!this.#closed) {
      if (this.#pool.freeSlots < SLOTS_LOW) {
        // A step may create files: grow first, in the background, and come back (requests
        // meanwhile do not wait for it).
        void this.#growLater().then(() => {
          if (this.#pool.freeSlots >= SLOTS_LOW) {
            this.#scheduleMaintenance(); // (not if the pool could not grow: out of quota)
          }
        });
        return;
      }
      // A failed step poisoned the database (the next write reports it) or panicked the
      // instance (every request reports it): either way, nothing more to do here.
      if (!this.#db.maintain(STEP_BUDGET)) {
        return;
      }
      if (performance.now() >= deadline) {
        this.#scheduleMaintenance();
        return;
      }
    }
  }

  #onRemote(message: ToOwner): void {
    if (this.#closed) {
      return;
    }
    switch (message.type) {
      case "hello":
        this.#hello(message.client, message.version);
        break;
      case "requests": {
        if (message.owner !== this.id) {
          return; // Meant for an earlier owner: the client resends them to this one.
        }
        const client = this.#clients.get(message.client) ?? this.#register(message.client);
        this.#applied.settled(message.client, message.settled);
        this.#queue.push(() =>
          this.#process(client.resources, message.requests, message.keyspaces, (replies) => {
            const answer: FromOwner = { type: "replies", owner: this.id, replies };
            if (client.resources.loseNextReplies && !message.requests.some((r) => r[1] === "debugLoseReplies")) {
              client.resources.loseNextReplies = false; // (a test hook: as if this tab went away now)
            } else if (this.#clients.get(message.client) === client) {
              client.channel.postMessage(answer);
            } else {
              // Forgotten meanwhile (a panic stops serving): it still gets these answers, so that
              // a request that panicked is not repeated on the next owner.
              const channel = new BroadcastChannel(channelNames.replies(message.client));
              channel.postMessage(answer);
              channel.close();
            }
          }),
        );
        break;
      }
      case "bye":
        if (message.owner === this.id) {
          this.#queue.push(() => this.#forget(message.client, true));
        }
        break;
    }
  }

  #hello(client: string, version: number): void {
    const refuse = (message: string): void => {
      const channel = new BroadcastChannel(channelNames.replies(client));
      const error = toWire(new ShaleError("LOCKED", message));
      channel.postMessage({ type: "refused", owner: this.id, error } satisfies FromOwner);
      channel.close();
    };
    if (this.#exclusive) {
      refuse(
        `shaledb: database "${this.#name}" is open with { exclusive: true } in another tab or worker, which serves no other`,
      );
      return;
    }
    if (version !== PROTOCOL_VERSION) {
      refuse(
        `shaledb: database "${this.#name}" is open in another tab that runs a different version of shaledb ` +
          `(protocol ${PROTOCOL_VERSION}, this tab ${version}); reload or close that tab`,
      );
      return;
    }
    const known = this.#clients.get(client) ?? this.#register(client);
    known.channel.postMessage({ type: "welcome", owner: this.id } satisfies FromOwner);
  }

  #register(id: string): RemoteClient {
    const client: RemoteClient = {
      resources: new ClientResources(id, true),
      channel: new BroadcastChannel(channelNames.replies(id)),
      stopWatching: new AbortController(),
    };
    this.#clients.set(id, client);
    // The client's page holds this lock while it is open: it comes free when the page goes.
    whenReleased(lockNames.client(id), client.stopWatching.signal, () => {
      this.#queue.push(() => this.#forget(id, true));
    });
    return client;
  }

  /**
   * Stops serving client `id` and releases what it had open. `gone`: the client went away or
   * closed (it will send nothing again), so its applied-write record goes too.
   */
  #forget(id: string, gone: boolean): void {
    const client = this.#clients.get(id);
    if (client === undefined) {
      return;
    }
    this.#clients.delete(id);
    client.stopWatching.abort();
    client.channel.close();
    try {
      client.resources.closeAll();
    } catch {
      // After a panic nothing can be released; the instance is gone anyway.
    }
    if (gone && !this.#closed) {
      try {
        this.#applied.forget(id);
      } catch {
        // A failed write: a later sweep removes it.
      }
    }
  }

  #exportArchive(): Blob {
    // The archive's directory: the database's name where a tar name field (99 bytes) holds it.
    const encoded = encodeDatabaseName(this.#name);
    const directory = encoded.length <= 99 ? encoded : "database";
    const tar = new TarWriter(directory, Math.floor(Date.now() / 1000));
    for (const { name } of this.#pool.files()) {
      tar.addFile(name, this.#pool.readAll(name));
    }
    return tar.finish();
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

  /** Writes a consistent copy into new database `destination` (which must not exist). */
  async #checkpoint(destination: string): Promise<void> {
    checkDatabaseName(destination);
    if (destination === this.#name) {
      throw new ShaleError("ALREADY_EXISTS", `shaledb: cannot checkpoint database "${destination}" into itself`);
    }
    const release = await acquireLock(lockNames.database(destination), { ifAvailable: true });
    if (release === undefined) {
      throw new ShaleError("LOCKED", `shaledb: database "${destination}" is open in this or another tab`);
    }
    let pool: OpfsPool | undefined;
    let created = false;
    try {
      pool = await openPool(await databaseDirectory(destination, true));
      if (pool.list().length > 0) {
        throw new ShaleError("ALREADY_EXISTS", `shaledb: database "${destination}" already exists`);
      }
      created = true;
      await pool.reserve(this.#pool.usedSlots + SLOTS_LOW);
      const target = pool;
      const db = this.#db.db;
      db.call(() => wasm.dbCheckpoint(db.id, target));
      await pool.trim(SLOTS_KEPT);
    } catch (error) {
      pool?.releaseAll();
      pool = undefined;
      if (created) {
        await removeDatabaseDirectory(destination).catch(() => undefined);
      }
      throw error;
    } finally {
      pool?.releaseAll();
      release();
    }
  }
}
