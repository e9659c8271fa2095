/**
 * The requests of the Promise API and their replies, as they cross a transport (`transport.ts`):
 * keys and values already encoded (the client runs the codecs, so the server sees bytes only),
 * iterators, snapshots and transactions named by the server's numbers, keyspaces by the
 * client's. The same in Node (to the engine in this thread or in a worker thread) and in
 * browsers (to the worker that owns the database, in this tab or another). Each request is
 * declared once, with its arguments and result, in the server's table
 * (`../server/operations/table.ts`).
 *
 * @module
 */
import type { ShaleErrorCode } from "../errors.js";
import type { Args, Op } from "../server/operations/table.js";

export type { Args, Op, Result } from "../server/operations/table.js";
export type { WireRange } from "../server/operations/wire-checks.js";

/**
 * One request: a number unique per client (increasing), the operation, its arguments, and
 * `1` if it was sent before to an owner that went away without answering it (a write then
 * runs only if no owner applied it yet: `../server/applied-writes.ts`).
 */
export type RequestMessage<O extends Op = Op> = [id: number, op: O, args: Args<O>, resent?: 1];

/** A keyspace a page opened earlier, declared to a new owner: the page's number and the name. */
export type KeyspaceDeclaration = [number: number, name: string];

/** An error as it crosses: a ShaleError's code and message. */
export interface WireError {
  code: ShaleErrorCode;
  message: string;
  /** `ShaleError.details`, if any. */
  details?: Readonly<Record<string, number>>;
}

/** One reply: to request `id`, its result or its error. */
export type Reply = [id: number, ok: true, result: unknown] | [id: number, ok: false, error: WireError];
