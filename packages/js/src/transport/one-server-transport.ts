/**
 * What a {@link Transport} to exactly one server shares, whatever carries its messages (Node's:
 * a server in this thread, `../node/in-thread-transport.ts`, or in the engine's worker thread,
 * `../node/worker-transport.ts`): requests made in one turn go as one message, keyspace numbers
 * are this client's, every iterator, snapshot and transaction lives on that one server, and once
 * closing or failed every request rejects. A subclass delivers a message ({@link deliver}), hands
 * the replies back to {@link replies}, and closes its server ({@link closeServer}).
 *
 * @module
 */
import { closedError, type ShaleError } from "../errors.js";
import { KeyspaceNumbers } from "./keyspace-numbers.js";
import { PendingRequests } from "./pending-requests.js";
import type { Args, KeyspaceDeclaration, Op, Reply, RequestMessage, Result } from "./requests.js";
import type { Transport } from "./transport.js";

export abstract class OneServerTransport implements Transport {
  abstract readonly location: string;
  /** The server's id (iterators, snapshots and transactions are bound to it). */
  readonly #server: string;
  readonly #requests = new PendingRequests(() => this.#send());
  readonly #keyspaces = new KeyspaceNumbers();
  #closing: Promise<void> | undefined;

  constructor(server: string) {
    this.#server = server;
  }

  get closed(): boolean {
    return this.#closing !== undefined || this.failure !== undefined;
  }

  request<O extends Op>(op: O, args: Args<O>, server?: string): Promise<Result<O>> {
    return this.#request(op, args, server, false) as Promise<Result<O>>;
  }

  requestServed<O extends Op>(op: O, args: Args<O>, server?: string): Promise<[Result<O>, string]> {
    return this.#request(op, args, server, true) as Promise<[Result<O>, string]>;
  }

  async openKeyspace(name: string): Promise<number> {
    const number = this.#keyspaces.numberOf(name);
    await this.request("keyspace", [name, number]);
    this.#keyspaces.opened(name, this.#server);
    return number;
  }

  close(): Promise<void> {
    this.#closing ??= this.closeServer();
    return this.#closing;
  }

  /** Whether `close()` was called. */
  protected get closing(): boolean {
    return this.#closing !== undefined;
  }

  /** Requests sent and not answered yet. */
  protected get pendingRequests(): number {
    return this.#requests.size;
  }

  /** The error every request gets once the line to the server failed for good; else `undefined`. */
  protected get failure(): ShaleError | undefined {
    return undefined;
  }

  /** Sends one message of requests (with the keyspaces the server must bind first) to the server. */
  protected abstract deliver(requests: RequestMessage[], keyspaces: KeyspaceDeclaration[] | undefined): void;

  /** Closes the server, once {@link drained} (for `close()`, which calls it once). */
  protected abstract closeServer(): Promise<void>;

  /** After a request was added (a subclass keeps its thread alive meanwhile, for one). */
  protected requestAdded(): void {}

  /** The server's replies to a message of {@link deliver}. */
  protected replies(replies: Reply[]): void {
    this.#requests.onReplies(this.#server, replies);
  }

  /** Resolves once every request made so far has been answered. */
  protected drained(): Promise<void> {
    return this.#requests.drained();
  }

  /** Rejects every request waiting for an answer with `error` (the line failed for good). */
  protected failAll(error: ShaleError): void {
    this.#requests.failAll(error);
  }

  #request(op: Op, args: unknown[], server: string | undefined, withServer: boolean): Promise<unknown> {
    if (this.#closing !== undefined) {
      return Promise.reject(closedError("the database"));
    }
    const failure = this.failure;
    if (failure !== undefined) {
      return Promise.reject(failure);
    }
    const result = this.#requests.add(op, args, server, withServer);
    this.requestAdded();
    return result;
  }

  /** Sends the requests made in this turn, in one message. */
  #send(): void {
    const requests = this.#requests.take(this.#server);
    if (requests.length === 0 || this.failure !== undefined) {
      return;
    }
    this.deliver(requests, this.#keyspaces.declarationsFor(this.#server));
  }
}
