/**
 * The one thing the Promise API (`../api/`) needs of where the database runs: a line to the
 * server that carries its requests (`requests.ts`) out on the synchronous API (`../server/`).
 * Node has its own (`../node/`); browsers reach the worker that owns the database, in this tab
 * or another (`../browser/page/connection.ts`). The Promise API is written once, against this.
 *
 * Contract:
 * - Requests made one after another are carried out in that order, each to its end.
 * - A request that fails rejects with a `ShaleError` carrying the server's code and message;
 *   after `close()` (or once the transport failed for good) every request rejects.
 * - Iterators, snapshots and transactions live on the server that made them, named by the id it
 *   gave them. A request that uses one names that server (`server`); if another server answers
 *   now (a browser tab took the database over), it fails without being sent: `CLOSED` for an
 *   iterator or snapshot, `CONFLICT` for a transaction (so `transact` retries), `IO` for a commit
 *   whose outcome cannot be known — and a request that only releases one resolves.
 *
 * @module
 */
import type { Args, Op, Result } from "./requests.js";

export interface Transport {
  /** Where the database is: Node, its absolute directory; browsers, its name. */
  readonly location: string;
  /** Whether `close()` was called or the transport failed for good. */
  readonly closed: boolean;
  /** Sends request `op`; resolves with its result. `server`: see the module notes. */
  request<O extends Op>(op: O, args: Args<O>, server?: string): Promise<Result<O>>;
  /** Sends request `op`; resolves with its result and the id of the server that served it. */
  requestServed<O extends Op>(op: O, args: Args<O>, server?: string): Promise<[Result<O>, string]>;
  /**
   * Opens keyspace `name` (creating it if missing); resolves with this client's number for it,
   * which names it in requests for the life of the transport, whichever server serves them.
   */
  openKeyspace(name: string): Promise<number>;
  /** Waits for the requests under way, then closes the database (or leaves it). Idempotent. */
  close(): Promise<void>;
}
