/**
 * A page's line to the worker that owns its database — the browser's {@link Transport}. The page
 * always starts a worker of its own ({@link startWorker}: in a dedicated worker, its protocol in
 * that thread); if that worker owns the database,
 * requests go to it, otherwise to the owner in another tab ({@link OwnerLink}), and when that
 * owner goes, to whichever worker takes over (perhaps this page's own), rerouting what the
 * departed owner left unanswered (`rerouting.ts`). Requests made in one turn of the event loop
 * travel in one message (`../../transport/pending-requests.ts`). Keyspaces are numbered by the
 * page (`../../transport/keyspace-numbers.ts`) and declared by name to each new owner, so the
 * same handles keep naming the same keyspaces.
 *
 * @module
 */
import { ShaleError, closedError } from "../../errors.js";
import { KeyspaceNumbers } from "../../transport/keyspace-numbers.js";
import { PendingRequests } from "../../transport/pending-requests.js";
import type { Args, Op, Reply, Result } from "../../transport/requests.js";
import type { Transport } from "../../transport/transport.js";
import { fromWire } from "../../transport/wire-error.js";
import { acquireLock } from "../locks.js";
import { lockNames, type FromWorker, type OpenRequest } from "../messages.js";
import { databaseDirectory } from "../opfs/directories.js";
import { requireStorageApis } from "../support.js";
import { OwnerLink } from "./owner-link.js";
import { RELEASES, ownerGone, reroute } from "./rerouting.js";
import { firstMessage, startWorker, type WorkerLike } from "./spawn-worker.js";

/** How long a page waits for the owner of a database to answer before `open` fails. */
const WELCOME_TIMEOUT_MS = 10_000;
/** How long `close()` waits for the worker to close (after a panic it may not answer). */
const CLOSE_TIMEOUT_MS = 10_000;

export class Connection implements Transport {
  /** Identifies this page's connection to other tabs. */
  readonly client: string;
  readonly name: string;
  /** Whether the database was created by this open. */
  readonly created: boolean;
  readonly #worker: WorkerLike;
  /** Whether this page's own worker owns the database. */
  #local: boolean;
  /** The owner serving this page now; `undefined` while looking for one. */
  #owner: string | undefined;
  readonly #requests: PendingRequests;
  readonly #keyspaces = new KeyspaceNumbers();
  /** Set when the connection can no longer serve (a panic, a failed takeover, close). */
  #failure: ShaleError | undefined;
  #closing: Promise<void> | undefined;
  #workerClosed: (() => void) | undefined;
  /** Whether the worker died (an uncaught error): it will not answer a close. */
  #workerDead = false;
  /** While another tab owns the database: the link to it. */
  #link: OwnerLink | undefined;
  /** While `open` waits for an owner to welcome this page. */
  #welcomed: ((owner: string) => void) | undefined;
  #refused: ((error: ShaleError) => void) | undefined;

  private constructor(client: string, name: string, worker: WorkerLike, owner: string | undefined, created: boolean) {
    this.client = client;
    this.name = name;
    this.#worker = worker;
    this.#local = owner !== undefined;
    this.#owner = owner;
    this.created = created;
    this.#requests = new PendingRequests(
      () => this.#send(),
      (error) => {
        if (error.code === "PANIC" && this.#local) {
          // This page's own instance is dead: every later call fails the same way.
          this.#failure ??= error;
        }
      },
    );
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
    const worker = await startWorker();
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

  requestServed<O extends Op>(op: O, args: Args<O>, bound?: string): Promise<[Result<O>, string]> {
    return this.#request(op, args, bound, true) as Promise<[Result<O>, string]>;
  }

  request<O extends Op>(op: O, args: Args<O>, bound?: string): Promise<Result<O>> {
    return this.#request(op, args, bound, false) as Promise<Result<O>>;
  }

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
    return this.#requests.add(op, args, bound, withOwner);
  }

  /** Sends every unsent request to the current owner, in one message. */
  #send(): void {
    const owner = this.#owner;
    if (owner === undefined || this.#failure !== undefined) {
      return;
    }
    const requests = this.#requests.take(owner);
    if (requests.length === 0) {
      return;
    }
    const keyspaces = this.#keyspaces.declarationsFor(owner);
    try {
      if (this.#local) {
        this.#worker.postMessage(
          keyspaces === undefined ? { type: "requests", requests } : { type: "requests", requests, keyspaces },
        );
      } else {
        this.#link?.send({
          type: "requests",
          client: this.client,
          owner,
          requests,
          ...(keyspaces === undefined ? {} : { keyspaces }),
          settled: this.#requests.settledBelow,
        });
      }
    } catch (error) {
      // A value that cannot be cloned (a JSON value is encoded before, so: a bug): fail these.
      for (const [id] of requests) {
        this.#requests.settle(id, false, {
          code: "INVALID_ARGUMENT",
          message: `shaledb: cannot send the request to the worker: ${String(error)}`,
        });
      }
    }
  }

  #onReplies(from: string, replies: Reply[]): void {
    this.#requests.onReplies(from, replies);
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
    reroute(this.#requests, next, this.name);
    if (next !== undefined && next !== previous) {
      this.#send();
    }
  }

  /** Fails every pending and later request with `error`. */
  #fail(error: ShaleError): void {
    this.#failure ??= error;
    this.#requests.failAll(error);
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
    const link = new OwnerLink(this.client, this.name, release, {
      currentOwner: () => this.#owner,
      welcomed: (owner) => {
        if (!this.#local) {
          this.#changeOwner(owner);
          this.#welcomed?.(owner);
        }
      },
      refused: (error) => {
        if (!this.#local) {
          this.#refused?.(error);
          this.#fail(error);
        }
      },
      replies: (owner, replies) => {
        if (!this.#local) {
          this.#onReplies(owner, replies);
        }
      },
      ownerGone: () => {
        if (!this.#local) {
          this.#changeOwner(undefined);
        }
      },
    });
    this.#link = link;
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
    link.hello();
    await welcomed;
    if (request.options.errorIfExists === true) {
      throw new ShaleError("ALREADY_EXISTS", `shaledb: database "${this.name}" already exists (it is open in another tab)`);
    }
  }

  /** Stops talking to other tabs (this page's worker took over, or close). */
  #leaveRemote(): void {
    const link = this.#link;
    this.#link = undefined;
    link?.leave(this.#owner !== undefined && this.#failure === undefined ? this.#owner : undefined);
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
    if (this.#failure === undefined) {
      await this.#requests.drained();
    }
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
