/**
 * The server side of every transport: one open database (the synchronous API) serving the
 * request messages of its clients, in Node (in this thread or a worker thread) and in the
 * browser worker that owns a database (for its own page and other tabs).
 *
 * Messages, maintenance turns and whatever the host adds (a browser owner's pool growth) run one
 * at a time ({@link JobQueue}), each to its end, so a request never sees another half done. In a
 * message, writes that arrived together are committed as one batch (`write-path.ts`), the rest
 * run one by one in order (`executor.ts`); the replies of a message go back together, but for
 * waiting queue reads, each answered on its own once it has an item (`queue-waits.ts`).
 *
 * With `asyncSync` (Node's server in the caller's thread), the server never waits on an fsync:
 * the database defers its WAL syncs (`../engine/sync-database.ts`, `setDeferredSync`), so a
 * write returns once it is in the log and the memtable, and a synced one — with every write
 * after it — becomes visible only once the log is synced. A message whose writes are not
 * visible yet has its replies held, and a sync job is queued behind the messages already
 * waiting: it runs `asyncSync` (`fs.fdatasync` in libuv's pool) on the log, nothing else runs
 * meanwhile, and the messages that arrive meanwhile wait in the queue, to be committed together
 * and covered by the next sync (group commit). When it succeeds the held replies go out in
 * order; when it fails the database is poisoned (every later write fails) and the held
 * messages' writes fail with the poisoning error. Reads see visible writes only, as always; and
 * in a message, a request other than a write that follows writes waiting for their sync runs
 * after that sync (awaited, off this thread), so it sees them as it would without deferral.
 *
 * @module
 */
import {
  beginWalSync,
  commitSeqs,
  finishWalSync,
  jobDatabase,
  sealMemtable,
  setDeferredSync,
  type SyncDatabaseImpl,
} from "../engine/sync-database.js";
import type { Args, KeyspaceDeclaration, Op, Reply, RequestMessage } from "../transport/requests.js";
import { toWire } from "../transport/wire-error.js";
import { AppliedWrites } from "./applied-writes.js";
import type { ClientResources } from "./client-resources.js";
import { Executor, checkRequest, type ServerServices } from "./executor.js";
import { bytesWritten, merges } from "./operations/table.js";
import { JobQueue, type Job } from "./job-queue.js";
import { Later } from "./queue-waits.js";
import { OP_META } from "../encoding/wire.js";
import { MAINTENANCE_EVERY, MaintenanceScheduler } from "../engine/maintenance.js";
import { JobScheduler, type JobRunner } from "../engine/job-maintenance.js";
import { WritePath, isRejection } from "./write-path.js";

/**
 * What a server needs of where it runs, beyond the database: the services that depend on it
 * (checkpoints, export, stats, test hooks) and, for a browser owner, its slot pool's sizing.
 */
export interface ServerHost extends Omit<ServerServices, "debugFailMergedWrite" | "run" | "compact"> {
  /**
   * Resolves once request `op` may run (a browser owner grows its slot pool first when the
   * request may create files); `undefined`: it may run now.
   */
  prepare?(op: Op, args: Args<Op>): Promise<void> | undefined;
  /** Whether writes that arrived together may be committed as one batch now (default: yes). */
  canMerge?(): boolean;
  /** Before each maintenance step: `false` pauses maintenance (see `../engine/maintenance.ts`). */
  mayMaintain?(): boolean;
  /** After each message is answered. */
  afterMessage?(): void;
}

export interface ServerOptions {
  /** Run flush and compaction in turns between messages (the database's `autoMaintenance`). */
  autoMaintenance: boolean;
  /** Seal a big memtable once requests pause (browsers: `../engine/maintenance.ts`, idle seal). */
  idleSeal: boolean;
  /** Told when maintenance work starts (`true`) and when none is left (`false`). */
  busy?: (busy: boolean) => void;
  /**
   * With `autoMaintenance`: run flush and compaction as jobs on this runner
   * (`../engine/job-maintenance.ts`) instead of in turns between messages.
   */
  jobs?: JobRunner;
  /**
   * Syncs storage file `file` off this thread (Node: `fs.fdatasync`): the server then defers
   * the WAL syncs of synced writes to it, group-committed, instead of syncing inline (module
   * doc). Absent (worker threads, browsers), syncs run inline.
   */
  asyncSync?: (file: number) => Promise<void>;
}

/** A message's replies held until the writes committed by its end are visible. */
interface HeldReplies {
  /** The last sequence number assigned when the message was done. */
  readonly seq: number;
  readonly replies: Reply[];
  /** The ids of its requests that committed something (failed if the sync fails). */
  readonly writes: ReadonlySet<number>;
  readonly reply: (replies: Reply[]) => void;
}

export class DatabaseServer {
  readonly db: SyncDatabaseImpl;
  /** The applied-write records of served clients (`applied-writes.ts`). */
  readonly applied: AppliedWrites;
  readonly #host: ServerHost;
  readonly #executor: Executor;
  readonly #writes: WritePath;
  readonly #queue = new JobQueue();
  readonly #maintenance: MaintenanceScheduler | JobScheduler | undefined;
  readonly #asyncSync: ((file: number) => Promise<void>) | undefined;
  /** Replies waiting for a deferred sync, in message order. */
  readonly #held: HeldReplies[] = [];
  #syncQueued = false;
  #stopped = false;

  constructor(db: SyncDatabaseImpl, host: ServerHost, options: ServerOptions) {
    this.db = db;
    this.#host = host;
    this.applied = new AppliedWrites(db);
    this.#executor = new Executor(db, {
      checkpoint: (destination) => host.checkpoint(destination),
      exportArchive: () => host.exportArchive(),
      stats: () => host.stats(),
      debugPanic: (message) => host.debugPanic(message),
      debugLoseReplies: (client) => host.debugLoseReplies(client),
      debugFailMergedWrite: (code) => this.#writes.failNextMerged(code),
      run: (job) => this.#queue.push(job),
      compact: (start, end) => this.#compact(start, end),
    });
    this.#writes = new WritePath(this.#executor, this.applied);
    const turns = options.autoMaintenance
      ? new MaintenanceScheduler(
          {
            maintain: (budget) => db.maintain(budget),
            memtableBytes: () => db.stats().memtableBytes,
            sealMemtable: () => sealMemtable(db),
          },
          {
            run: (turn) => this.#queue.push(turn),
            ...(host.mayMaintain === undefined ? {} : { mayStep: () => host.mayMaintain?.() ?? true }),
            idleSeal: options.idleSeal,
            ...(options.busy === undefined ? {} : { busy: options.busy }),
          },
        )
      : undefined;
    this.#maintenance =
      turns !== undefined && options.jobs !== undefined
        ? new JobScheduler(jobDatabase(db), options.jobs, {
            run: (task) => this.#queue.push(task),
            fallback: turns,
            ...(options.busy === undefined ? {} : { busy: options.busy }),
          })
        : turns;
    this.#asyncSync = options.asyncSync;
    if (this.#asyncSync !== undefined) {
      setDeferredSync(db, true);
    }
    // Work left by an earlier session (immutable memtables recovered, a deep L0) starts now.
    this.maintainSoon();
  }

  /**
   * `compact()`: by the maintenance jobs when they run (this thread then only seals the
   * memtable), else here, whole.
   */
  #compact(start: Uint8Array | undefined, end: Uint8Array | undefined): void | Later<void> {
    const byJobs = this.#maintenance instanceof JobScheduler ? this.#maintenance.compact(start, end) : undefined;
    if (byJobs !== undefined) {
      return new Later(byJobs);
    }
    this.db.compact({ start, end });
  }

  /** Whether the server stopped serving (it closed, or its instance panicked). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Schedules a maintenance turn (with `autoMaintenance`). */
  maintainSoon(): void {
    this.#maintenance?.schedule();
  }

  /**
   * A write made on the database directly, not through a request (the synchronous API in a
   * browser worker, beside the tabs it serves): maintenance and the idle seal follow it as they
   * follow served writes.
   */
  wroteDirectly(): void {
    this.#maintenance?.served(MAINTENANCE_EVERY);
  }

  /** Runs `job` after everything queued before it (requests, maintenance), alone. */
  run(job: Job): void {
    this.#queue.push(job);
  }

  /**
   * Serves one message of `client`: binds the keyspaces it declares, carries its requests out in
   * order, then calls `reply` with every reply (after the messages queued before it); a waiting
   * queue read is answered later, by a call of `reply` of its own.
   */
  serve(
    client: ClientResources,
    requests: RequestMessage[],
    keyspaces: KeyspaceDeclaration[] | undefined,
    reply: (replies: Reply[]) => void,
  ): void {
    this.#queue.push(() => this.#process(client, requests, keyspaces, reply));
  }

  /**
   * Stops serving and scheduling maintenance; later messages fail as the closed database does.
   * Resolves once a job runner is stopped too (its jobs under way are dropped).
   */
  stop(): Promise<void> {
    this.#stopped = true;
    return Promise.resolve(this.#maintenance?.stop());
  }

  /**
   * The requests of a message whose arguments their rows accept (`./executor.ts`,
   * `checkRequest`); each other one is answered with its `INVALID_ARGUMENT` in `replies`.
   */
  #checked(client: ClientResources, requests: RequestMessage[], replies: Reply[]): RequestMessage[] {
    const good: RequestMessage[] = [];
    for (const request of requests) {
      try {
        checkRequest(request);
        good.push(request);
      } catch (error) {
        if (client.tracked && merges(request[1])) this.#writes.notCommitted(client, request);
        replies.push([request[0], false, toWire(error)]);
      }
    }
    return good;
  }

  async #process(
    client: ClientResources,
    requests: RequestMessage[],
    keyspaces: KeyspaceDeclaration[] | undefined,
    reply: (replies: Reply[]) => void,
  ): Promise<void> {
    const replies: Reply[] = [];
    /** Deferred syncs: the requests of this message that committed something. */
    const wrote = new Set<number>();
    let written = 0;
    if (keyspaces !== undefined && !this.#stopped) {
      this.#executor.declare(client, keyspaces);
    }
    const checked = this.#checked(client, requests, replies);
    const todo = this.#stopped ? checked : this.#writes.skipApplied(client, checked, replies);
    if (this.#maintenance instanceof JobScheduler && todo.some(([, op, args]) => bytesWritten(op, args) > 0)) {
      // Too many memtables wait for a flush job: the writes wait for it (the event loop does not).
      const room = this.#maintenance.roomForWrites();
      if (room !== undefined) {
        await room;
      }
    }
    /** Writes before this index run one by one (a merged batch of them was refused). */
    let separately = 0;
    for (let i = 0; i < todo.length; i++) {
      // Writes that arrived together are written together (a group commit).
      let end = i;
      while (end < todo.length && mergeable(todo[end] as RequestMessage)) {
        end++;
      }
      if (end - i >= 2 && i >= separately && !this.#stopped && (this.#host.canMerge?.() ?? true)) {
        const run = todo.slice(i, end);
        const failure = this.#writes.commitMerged(client, run);
        if (failure === undefined || !isRejection(failure)) {
          for (const [id] of run) {
            wrote.add(id);
            replies.push(failure === undefined ? [id, true, undefined] : [id, false, toWire(failure)]);
          }
          if (failure === undefined) {
            written += run.reduce((n, [, op, args]) => n + bytesWritten(op, args), 0);
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
      const tracked = client.tracked && merges(op);
      if (this.#asyncSync !== undefined && !mergeable(request) && this.#waitingForSync()) {
        // Anything but a write sees the writes before it, as without deferred syncs: their sync
        // runs first (off this thread; the server waits, the event loop does not).
        const failure = await this.#syncPending();
        if (failure !== undefined) {
          this.#failWrites(wrote, replies, failure);
        }
      }
      const lastBefore = this.#asyncSync === undefined ? 0 : this.#lastSeq();
      try {
        const ready = this.#stopped ? undefined : this.#host.prepare?.(op, args);
        if (ready !== undefined) {
          await ready.catch((error: unknown) => {
            if (tracked) this.#writes.notCommitted(client, request);
            throw error;
          });
        }
        let result: unknown;
        if (tracked) {
          this.#writes.commitTracked(client, request);
        } else {
          result = this.#executor.execute(client, op, args);
          if (result instanceof Later) {
            // Replied to on its own once it settles (a waiting queue read), while the server
            // goes on: the other replies of this message do not wait for it.
            result.promise.then(
              (value) => reply([[id, true, value]]),
              (error: unknown) => reply([[id, false, toWire(error)]]),
            );
            continue;
          }
          if (result instanceof Promise) {
            result = await result;
          }
        }
        if (this.#asyncSync !== undefined && this.#lastSeq() !== lastBefore) wrote.add(id);
        replies.push([id, true, result]);
        written += bytesWritten(op, args);
      } catch (error) {
        replies.push([id, false, toWire(error)]);
      }
    }
    this.#answer(wrote, replies, reply);
    this.#maintenance?.served(written);
    this.#host.afterMessage?.();
  }

  /**
   * Sends a message's replies, or holds them (deferred syncs) until the writes committed by now
   * are visible, queuing the sync they wait for.
   */
  #answer(wrote: ReadonlySet<number>, replies: Reply[], reply: (replies: Reply[]) => void): void {
    if (this.#asyncSync === undefined) {
      reply(replies);
      return;
    }
    let seq: number;
    try {
      const [visible, last] = commitSeqs(this.db);
      if (visible >= last && this.#held.length === 0) {
        reply(replies);
        return;
      }
      seq = last;
    } catch (error) {
      // The database is closed or its instance gone: what waits will never be known durable.
      this.#failHeld(error);
      reply(replies);
      return;
    }
    this.#held.push({ seq, replies, writes: wrote, reply });
    this.#queueSync();
  }

  /** Queues the sync job, unless it is queued already. */
  #queueSync(): void {
    if (!this.#syncQueued) {
      this.#syncQueued = true;
      this.#queue.push(() => this.#syncLog());
    }
  }

  /**
   * The sync job (deferred syncs): syncs the log off this thread for every write committed
   * before it, then sends the replies that waited for it — or fails their writes if it failed.
   * Nothing else runs on the database until it is done.
   */
  async #syncLog(): Promise<void> {
    this.#syncQueued = false;
    await this.#syncPending();
  }

  /** The last sequence number assigned (a request that changes it committed a write); -1 if unknown. */
  #lastSeq(): number {
    try {
      return commitSeqs(this.db)[1];
    } catch {
      return -1;
    }
  }

  /** Whether writes committed so far wait for a deferred sync (`false` if that cannot be known). */
  #waitingForSync(): boolean {
    try {
      const [visible, last] = commitSeqs(this.db);
      return visible < last;
    } catch {
      return false;
    }
  }

  /**
   * Runs the deferred sync that committed writes wait for (none: publishes what a sync covered
   * already), then sends the held replies it made visible, or fails their writes if it failed;
   * returns the failure. Nothing else runs on the database meanwhile (the caller is a job).
   */
  async #syncPending(): Promise<unknown> {
    const asyncSync = this.#asyncSync;
    if (asyncSync === undefined) return undefined;
    try {
      // An older log sealed without a sync may come first; then the waiting writes' own log.
      for (let file = beginWalSync(this.db); file >= 0; file = beginWalSync(this.db)) {
        let failure: unknown;
        try {
          await asyncSync(file);
        } catch (error) {
          failure = error ?? new Error("fdatasync failed");
        }
        finishWalSync(this.db, failure);
      }
    } catch (error) {
      this.#failHeld(error);
      return error;
    }
    this.#release();
    // Waiting reads and change feeds were told of these writes when they committed, before they
    // were visible: they look again now.
    const handle = this.db.db;
    handle.queueSignals.notifyAll();
    handle.topicSignals.notifyAll();
    handle.commitSignals.notify("");
    return undefined;
  }

  /** The sync of requests `writes` failed: their successful replies in `replies` fail. */
  #failWrites(writes: ReadonlySet<number>, replies: Reply[], error: unknown): void {
    const wire = toWire(error);
    for (let i = 0; i < replies.length; i++) {
      const r = replies[i] as Reply;
      if (r[1] && writes.has(r[0])) replies[i] = [r[0], false, wire];
    }
  }

  /** Sends the held replies whose writes are visible now, in order. */
  #release(): void {
    let visible: number;
    try {
      visible = commitSeqs(this.db)[0];
    } catch (error) {
      this.#failHeld(error);
      return;
    }
    while (this.#held.length > 0 && (this.#held[0] as HeldReplies).seq <= visible) {
      const held = this.#held.shift() as HeldReplies;
      held.reply(held.replies);
    }
    if (this.#held.length > 0) this.#queueSync();
  }

  /** The deferred sync failed: every held write fails with `error` (the poisoning error). */
  #failHeld(error: unknown): void {
    const wire = toWire(error);
    for (const held of this.#held.splice(0)) {
      held.reply(held.replies.map((r): Reply => (r[1] && held.writes.has(r[0]) ? [r[0], false, wire] : r)));
    }
  }
}

/**
 * Whether `request` may be committed in one batch with the writes around it: a write, except
 * one carrying a meta for the change feed (its first operation is `OP_META`), which must stay
 * the meta of its own batch.
 */
function mergeable(request: RequestMessage): boolean {
  const [, op, args] = request;
  return merges(op) && !(op === "write" && (args as Args<"write">)[0][0] === OP_META);
}
