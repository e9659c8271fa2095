/**
 * A page's line to the worker that owns its database: requests go out, replies come back. The
 * page always starts a worker of its own ({@link spawnWorker}); if that worker owns the database
 * requests go to it, otherwise over BroadcastChannels to the owner in another tab, and when that
 * owner goes, to whichever worker takes over (perhaps this page's own).
 *
 * Requests made in one turn of the event loop travel in one message. When the owner changes,
 * requests it had not answered are sent again to the next one if that is safe: reads, and
 * writes (put, delete, batches), which the next owner carries out only if no owner applied them
 * yet (`applied-writes.ts`: exactly once); those tied to the gone owner's iterators, snapshots
 * and transactions fail (`CLOSED`; `CONFLICT` for a transaction, so that `transact` retries it),
 * and a commit or checkpoint whose outcome cannot be known fails with `IO`. Keyspaces are
 * numbered by the page (`page-keyspaces.ts`) and declared by name to each new owner, so the
 * same handles keep naming the same keyspaces.
 *
 * @module
 */
import { ShaleError, closedError } from "../../errors.js";
import type { Transport } from "../../transport/transport.js";
import { acquireLock, type Release } from "../locks.js";
import { databaseDirectory } from "../opfs/directories.js";
import { PageKeyspaces } from "../../transport/keyspace-numbers.js";
import {
  PROTOCOL_VERSION,
  channelNames,
  lockNames,
  type FromOwner,
  type FromWorker,
  type OpenRequest,
  type OwnerAnnouncement,
  type ToOwner,
} from "../messages.js";
import type { Args, Op, Reply, RequestMessage, Result } from "../../transport/requests.js";
import { firstMessage, spawnWorker } from "./spawn-worker.js";
import { requireStorageApis } from "../support.js";
import { fromWire } from "../../transport/wire-error.js";

/** How long a page waits for the owner of a database to answer before `open` fails. */
const WELCOME_TIMEOUT_MS = 10_000;
/** How long `close()` waits for the worker to close (after a panic it may not answer). */
const CLOSE_TIMEOUT_MS = 10_000;
/** How often a page repeats its hello while no owner has answered. */
const HELLO_INTERVAL_MS = 250;

/** Requests that only release something: harmless to drop with their owner. */
const RELEASES: ReadonlySet<Op> = new Set<Op>(["iterClose", "snapshotClose", "txRollback"]);
/** Requests whose effect cannot be known if their owner went away unanswered. */
const UNKNOWN_OUTCOME: ReadonlySet<Op> = new Set<Op>(["txCommit", "checkpoint"]);

interface Pending {
  op: Op;
  args: unknown[];
  /** The owner that must serve it (it uses that owner's iterators, snapshots, transactions). */
  bound: string | undefined;
  /** The owner it was sent to; `undefined` while unsent. */
  sentTo: string | undefined;
  /** Whether the caller wants `[result, owner]` rather than the result alone. */
  withOwner: boolean;
  /** Whether it was sent to an owner that went away without answering. */
  resent: boolean;
  resolve(value: unknown): void;
  reject(error: ShaleError): void;
}

/** The error of a request tied to an owner that went away. */
function ownerGone(op: Op, name: string): ShaleError {
  if (UNKNOWN_OUTCOME.has(op)) {
    return new ShaleError(
      "IO",
      `shaledb: the tab that owned database "${name}" went away before confirming this ${op === "txCommit" ? "commit" : "checkpoint"}; ` +
        "whether it took effect is unknown",
    );
  }
  if (op.startsWith("tx")) {
    return new ShaleError(
      "CONFLICT",
      `shaledb: the tab that owned database "${name}" went away during this transaction, which was not committed; retry it`,
    );
  }
  return new ShaleError(
    "CLOSED",
    `shaledb: the tab that owned database "${name}" went away, and with it this ${op.startsWith("iter") ? "iterator" : "snapshot"}; open a new one`,
  );
}


export class Connection implements Transport {
  /** Identifies this page's connection to other tabs. */
  readonly client: string;
  readonly name: string;
  /** Whether the database was created by this open. */
  readonly created: boolean;
  readonly #worker: Worker;
  /** Whether this page's own worker owns the database. */
  #local: boolean;
  /** The owner serving this page now; `undefined` while looking for one. */
  #owner: string | undefined;
  /** In the order of their ids (a Map keeps the order of insertion). */
  readonly #pending = new Map<number, Pending>();
  readonly #keyspaces = new PageKeyspaces();
  /** Ids of pending requests not sent yet. */
  #unsent: number[] = [];
  #nextId = 1;
  #sendQueued = false;
  /** Set when the connection can no longer serve (a panic, a failed takeover, close). */
  #failure: ShaleError | undefined;
  #closing: Promise<void> | undefined;
  #onDrained: (() => void) | undefined;
  #workerClosed: (() => void) | undefined;
  /** Whether the worker died (an uncaught error): it will not answer a close. */
  #workerDead = false;
  // While another tab owns the database:
  #channels: { requests: BroadcastChannel; replies: BroadcastChannel; announcements: BroadcastChannel } | undefined;
  #releaseClientLock: Release | undefined;
  #helloTimer: ReturnType<typeof setInterval> | undefined;
  /** The owner the last announcement named: only its welcome counts. */
  #announced: string | undefined;
  #welcomed: ((owner: string) => void) | undefined;
  #refused: ((error: ShaleError) => void) | undefined;

  private constructor(
    client: string,
    name: string,
    worker: Worker,
    owner: string | undefined,
    created: boolean,
  ) {
    this.client = client;
    this.name = name;
    this.#worker = worker;
    this.#local = owner !== undefined;
    this.#owner = owner;
    this.created = created;
    worker.onmessage = (event: MessageEvent<FromWorker>) => this.#fromWorker(event.data);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#workerDead = true;
      this.#fail(new ShaleError("IO", `shaledb: the ShaleDB worker failed: ${event.message}`));
    };
  }

  /** Starts a worker for `request` and connects to whoever owns the database. */
  static async open(options: Omit<OpenRequest, "client">): Promise<Connection> {
    requireStorageApis();
    const request: OpenRequest = { ...options, client: crypto.randomUUID() };
    const worker = spawnWorker();
    const answer = firstMessage(worker);
    // While the worker starts, the page looks the database's directory up (OPFS lookups take a
    // few milliseconds each) and hands it over with the request.
    const directory = await databaseDirectory(request.name, request.options.createIfMissing !== false).catch(
      () => undefined,
    );
    let first: FromWorker;
    try {
      try {
        worker.postMessage(directory === undefined ? request : { ...request, directory });
      } catch {
        worker.postMessage(request); // a browser that cannot post directory handles
      }
      first = await answer;
    } catch (error) {
      worker.terminate();
      throw error;
    }
    if (first.type !== "opened") {
      worker.terminate();
      throw first.type === "failed"
        ? fromWire(first.error)
        : new ShaleError("IO", `shaledb: unexpected message from the worker: ${first.type}`);
    }
    const connection = new Connection(request.client, request.name, worker, first.owner, first.created);
    if (first.owner === undefined) {
      try {
        await connection.#joinRemote(request);
      } catch (error) {
        await connection.close().catch(() => undefined);
        throw error;
      }
    }
    return connection;
  }

  /** The database's name. */
  get location(): string {
    return this.name;
  }

  /** Whether `close()` was called or the connection failed for good. */
  get closed(): boolean {
    return this.#closing !== undefined || this.#failure !== undefined;
  }

  /** The owner serving this page now (iterators, snapshots and transactions are tied to it). */
  get owner(): string | undefined {
    return this.#owner;
  }

  /**
   * Sends request `op`; resolves with its result and the owner that served it. `bound`: the
   * owner that must serve it (the one holding the iterator, snapshot or transaction it uses).
   */
  requestServed<O extends Op>(op: O, args: Args<O>, bound?: string): Promise<[Result<O>, string]> {
    return this.#request(op, args, bound, true) as Promise<[Result<O>, string]>;
  }

  /** Sends request `op`; resolves with its result. */
  request<O extends Op>(op: O, args: Args<O>, bound?: string): Promise<Result<O>> {
    return this.#request(op, args, bound, false) as Promise<Result<O>>;
  }

  /**
   * Opens keyspace `name` (creating it if missing) and resolves with this page's number for it,
   * which names it for the life of this connection, whichever tab owns the database.
   */
  async openKeyspace(name: string): Promise<number> {
    const number = this.#keyspaces.numberOf(name);
    const [, owner] = await this.requestServed("keyspace", [name, number]);
    this.#keyspaces.opened(name, owner);
    return number;
  }

  #request(op: Op, args: unknown[], bound: string | undefined, withOwner: boolean): Promise<unknown> {
    if (this.#closing !== undefined) {
      return Promise.reject(closedError(`database "${this.name}"`));
    }
    if (this.#failure !== undefined) {
      return Promise.reject(this.#failure);
    }
    if (bound !== undefined && bound !== this.#owner) {
      if (RELEASES.has(op)) {
        return Promise.resolve(withOwner ? [undefined, bound] : undefined);
      }
      return Promise.reject(ownerGone(op, this.name));
    }
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#pending.set(id, { op, args, bound, sentTo: undefined, withOwner, resent: false, resolve, reject });
      this.#unsent.push(id);
      this.#queueSend();
    });
  }

  #queueSend(): void {
    if (!this.#sendQueued) {
      this.#sendQueued = true;
      queueMicrotask(() => {
        this.#sendQueued = false;
        this.#send();
      });
    }
  }

  /** Sends every unsent request to the current owner, in one message. */
  #send(): void {
    const owner = this.#owner;
    if (owner === undefined || this.#failure !== undefined) {
      return;
    }
    if (this.#unsent.length === 0) {
      return;
    }
    // In the order they were made (requests rerouted from a departed owner come first).
    const ids = this.#unsent.sort((a, b) => a - b);
    this.#unsent = [];
    const requests: RequestMessage[] = [];
    for (const id of ids) {
      const pending = this.#pending.get(id);
      if (pending !== undefined && pending.sentTo === undefined) {
        pending.sentTo = owner;
        const request = [id, pending.op, pending.args] as unknown as RequestMessage;
        if (pending.resent) {
          request[3] = 1;
        }
        requests.push(request);
      }
    }
    const keyspaces = this.#keyspaces.declarationsFor(owner);
    try {
      if (this.#local) {
        this.#worker.postMessage(
          keyspaces === undefined ? { type: "requests", requests } : { type: "requests", requests, keyspaces },
        );
      } else {
        // Every request numbered below the first one still pending has its answer.
        const settled = this.#pending.keys().next().value ?? this.#nextId;
        this.#channels?.requests.postMessage({
          type: "requests",
          client: this.client,
          owner,
          requests,
          ...(keyspaces === undefined ? {} : { keyspaces }),
          settled,
        } satisfies ToOwner);
      }
    } catch (error) {
      // A value that cannot be cloned (a JSON value is encoded before, so: a bug): fail these.
      for (const [id] of requests) {
        this.#settle(id, false, {
          code: "INVALID_ARGUMENT",
          message: `shaledb: cannot send the request to the worker: ${String(error)}`,
        });
      }
    }
  }

  #settle(id: number, ok: boolean, value: unknown): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) {
      return;
    }
    this.#pending.delete(id);
    if (ok) {
      pending.resolve(pending.withOwner ? [value, pending.sentTo ?? ""] : value);
    } else {
      const error = fromWire(value as Parameters<typeof fromWire>[0]);
      if (error.code === "PANIC" && this.#local) {
        // This page's own instance is dead: every later call fails the same way.
        this.#failure ??= error;
      }
      pending.reject(error);
    }
    if (this.#pending.size === 0) {
      this.#onDrained?.();
    }
  }

  #onReplies(from: string, replies: Reply[]): void {
    for (const [id, ok, value] of replies) {
      const pending = this.#pending.get(id);
      if (pending !== undefined && pending.sentTo === from) {
        this.#settle(id, ok, value);
      }
    }
  }

  #fromWorker(message: FromWorker): void {
    switch (message.type) {
      case "replies":
        if (this.#local && this.#owner !== undefined) {
          this.#onReplies(this.#owner, message.replies);
        }
        break;
      case "owner":
        // This page's worker took over from an owner that went away (perhaps while this page
        // was still waiting for that owner's welcome: then `open` is done too).
        this.#leaveRemote();
        this.#local = true;
        this.#changeOwner(message.owner);
        this.#welcomed?.(message.owner);
        break;
      case "failed":
        this.#refused?.(fromWire(message.error));
        this.#fail(fromWire(message.error));
        break;
      case "closed":
        this.#workerClosed?.();
        break;
      default:
        break;
    }
  }

  /** The owner changed (or went away: `next` undefined) — reroute what the old one left. */
  #changeOwner(next: string | undefined): void {
    const previous = this.#owner;
    this.#owner = next;
    for (const [id, pending] of this.#pending) {
      if (pending.sentTo === undefined || pending.sentTo === next) {
        continue;
      }
      if (pending.bound === undefined && !UNKNOWN_OUTCOME.has(pending.op)) {
        // Safe to repeat: the next owner gets it (and answers a write an owner applied already
        // without applying it again: `applied-writes.ts`).
        pending.sentTo = undefined;
        pending.resent = true;
        this.#unsent.push(id);
      } else if (RELEASES.has(pending.op)) {
        this.#settle(id, true, undefined);
      } else {
        this.#pending.delete(id);
        pending.reject(ownerGone(pending.op, this.name));
      }
    }
    if (this.#pending.size === 0) {
      this.#onDrained?.();
    }
    if (next !== undefined && next !== previous) {
      this.#send();
    }
  }

  /** Fails every pending and later request with `error`. */
  #fail(error: ShaleError): void {
    this.#failure ??= error;
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.reject(error);
    }
    this.#onDrained?.();
    this.#workerClosed?.();
  }

  /** Connects to the owner in another tab: holds this client's liveness lock, says hello. */
  async #joinRemote(request: OpenRequest): Promise<void> {
    const release = await acquireLock(lockNames.client(this.client));
    if (release === undefined) {
      throw new ShaleError("IO", "shaledb: could not take this page's client lock");
    }
    if (this.#local || this.#failure !== undefined) {
      // Meanwhile this page's worker took the database over (or failed): no one to join.
      release();
      if (this.#failure !== undefined) {
        throw this.#failure;
      }
      return;
    }
    this.#releaseClientLock = release;
    const channels = {
      requests: new BroadcastChannel(channelNames.requests(this.name)),
      replies: new BroadcastChannel(channelNames.replies(this.client)),
      announcements: new BroadcastChannel(channelNames.announcements(this.name)),
    };
    this.#channels = channels;
    channels.replies.onmessage = (event: MessageEvent<FromOwner>) => this.#fromOwner(event.data);
    channels.announcements.onmessage = (event: MessageEvent<OwnerAnnouncement>) => {
      if (this.#local) {
        return;
      }
      this.#announced = event.data.owner;
      if (event.data.owner !== this.#owner) {
        this.#changeOwner(undefined);
        this.#hello();
      }
    };
    const welcomed = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new ShaleError(
            "LOCKED",
            `shaledb: database "${this.name}" is held by another tab or worker that does not answer`,
          ),
        );
      }, WELCOME_TIMEOUT_MS);
      this.#welcomed = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#refused = (error) => {
        clearTimeout(timer);
        reject(error);
      };
    });
    this.#hello();
    await welcomed;
    if (request.options.errorIfExists === true) {
      throw new ShaleError("ALREADY_EXISTS", `shaledb: database "${this.name}" already exists (it is open in another tab)`);
    }
  }

  /** Says hello until an owner welcomes this page. */
  #hello(): void {
    const say = (): void => {
      this.#channels?.requests.postMessage({
        type: "hello",
        client: this.client,
        version: PROTOCOL_VERSION,
      } satisfies ToOwner);
    };
    say();
    if (this.#helloTimer === undefined) {
      this.#helloTimer = setInterval(say, HELLO_INTERVAL_MS);
    }
  }

  #fromOwner(message: FromOwner): void {
    if (this.#local) {
      return;
    }
    switch (message.type) {
      case "welcome":
        // A late welcome from an owner that has since been replaced does not count.
        if (this.#owner !== message.owner && (this.#announced ?? message.owner) === message.owner) {
          clearInterval(this.#helloTimer);
          this.#helloTimer = undefined;
          this.#changeOwner(message.owner);
          this.#welcomed?.(message.owner);
        }
        break;
      case "refused":
        clearInterval(this.#helloTimer);
        this.#helloTimer = undefined;
        if (this.#refused !== undefined) {
          this.#refused(fromWire(message.error));
        }
        this.#fail(fromWire(message.error));
        break;
      case "replies":
        this.#onReplies(message.owner, message.replies);
        break;
    }
  }

  /** Stops talking to other tabs (this page's worker took over, or close). */
  #leaveRemote(): void {
    clearInterval(this.#helloTimer);
    this.#helloTimer = undefined;
    const channels = this.#channels;
    this.#channels = undefined;
    if (channels !== undefined) {
      if (this.#owner !== undefined && this.#failure === undefined) {
        channels.requests.postMessage({ type: "bye", client: this.client, owner: this.#owner } satisfies ToOwner);
      }
      channels.requests.close();
      channels.replies.close();
      channels.announcements.close();
    }
    this.#releaseClientLock?.();
    this.#releaseClientLock = undefined;
  }

  /**
   * Closes: waits for the requests under way, then closes the database if this page's worker
   * owns it (another tab may take over) or says goodbye to the owner. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#pending.size > 0 && this.#failure === undefined) {
      await new Promise<void>((resolve) => {
        this.#onDrained = resolve;
      });
    }
    this.#onDrained = undefined;
    this.#leaveRemote();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // The worker closes the database if it owns it (or is taking it over), and lets go of its
      // lock, before `close()` resolves: the database is then free for an import, say.
      if (!this.#workerDead) {
        const closed = new Promise<void>((resolve) => {
          this.#workerClosed = resolve;
          timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
        });
        this.#worker.postMessage({ type: "close" });
        await closed;
      }
    } finally {
      clearTimeout(timer);
      this.#worker.terminate();
    }
  }
}
