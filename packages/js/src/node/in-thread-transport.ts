/**
 * A {@link Transport} to a server in this thread (`node-server.ts`): the Promise API with
 * `engineThread: "caller"`. Requests made in one turn of the event loop go to the server as one
 * message in a later turn (`setImmediate`), so every call of the Promise API yields to the event
 * loop, and replies settle their promises there. No thread hop, so single awaited calls are
 * fast; but the engine's longer steps (maintenance with its fsyncs, `compact()`) run on the event
 * loop (the default, `worker-transport.ts`, keeps them off it).
 *
 * @module
 */
import { closedError, type ShaleError } from "../errors.js";
import type { DatabaseServer } from "../server/database-server.js";
import { ClientResources } from "../server/client-resources.js";
import { KeyspaceNumbers } from "../transport/keyspace-numbers.js";
import { PendingRequests } from "../transport/pending-requests.js";
import type { Args, Op, Result } from "../transport/requests.js";
import type { Transport } from "../transport/transport.js";

/** The id of the one server (iterators, snapshots and transactions are bound to it). */
const SERVER = "this-thread";

export class InThreadTransport implements Transport {
  readonly location: string;
  readonly #server: DatabaseServer;
  readonly #client = new ClientResources("node", false);
  readonly #requests = new PendingRequests(() => this.#send());
  readonly #keyspaces = new KeyspaceNumbers();
  #closing: Promise<void> | undefined;

  constructor(server: DatabaseServer) {
    this.#server = server;
    this.location = server.db.location;
  }

  get closed(): boolean {
    return this.#closing !== undefined;
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
    this.#keyspaces.opened(name, SERVER);
    return number;
  }

  #request(op: Op, args: unknown[], server: string | undefined, withServer: boolean): Promise<unknown> {
    if (this.#closing !== undefined) {
      return Promise.reject(closedError("the database"));
    }
    return this.#requests.add(op, args, server, withServer);
  }

  /** Hands the requests made in this turn to the server, in a later turn. */
  #send(): void {
    const requests = this.#requests.take(SERVER);
    if (requests.length === 0) {
      return;
    }
    const keyspaces = this.#keyspaces.declarationsFor(SERVER);
    setImmediate(() => {
      this.#server.serve(this.#client, requests, keyspaces, (replies) => {
        this.#requests.onReplies(SERVER, replies);
      });
    });
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Waits for the requests under way, then closes the database (after them, in its queue). */
  async #close(): Promise<void> {
    await this.#requests.drained();
    await new Promise<void>((resolve, reject) => {
      this.#server.run(() => {
        try {
          this.#server.stop();
          this.#client.closeAll();
          this.#server.db.close();
          resolve();
        } catch (error) {
          reject(error as ShaleError);
        }
      });
    });
  }
}
