/**
 * Every request of the Promise API, in one table: each declared once as a row (`./row.ts`) in
 * the file of its concept. The transport's request types (`Op`, `Args`, `Result`), the server's
 * dispatch and argument checks (`../executor.ts`), the writes it merges into group commits,
 * a browser owner's slot reservation (`../../browser/worker/slot-reserve.ts`) and maintenance
 * pacing (`../database-server.ts`) all derive from it. docs/ARCHITECTURE.md ("Adding an
 * operation") says how to add one.
 *
 * @module
 */
import { changeOps } from "./change-ops.js";
import { databaseOps } from "./database-ops.js";
import { iteratorOps } from "./iterator-ops.js";
import { keyspaceOps } from "./keyspace-ops.js";
import { queueOps } from "./queue-ops.js";
import type { Row, Settled } from "./row.js";
import { topicOps } from "./topic-ops.js";
import { transactionOps } from "./transaction-ops.js";

export const OPERATIONS = {
  ...keyspaceOps,
  ...iteratorOps,
  ...transactionOps,
  ...queueOps,
  ...topicOps,
  ...changeOps,
  ...databaseOps,
};

type Operations = typeof OPERATIONS;

/** A request's name. */
export type Op = keyof Operations;
/** Its arguments as they cross. */
export type Args<O extends Op> = Operations[O] extends Row<infer A, unknown> ? A : never;
/** What it resolves with. */
export type Result<O extends Op> = Settled<ReturnType<Operations[O]["run"]>>;

/** The rows by name (a map: looked up several times per request). */
const ROWS: ReadonlyMap<unknown, Row<unknown[], unknown>> = new Map(
  Object.entries(OPERATIONS) as unknown as [string, Row<unknown[], unknown>][],
);

/** The row of request `op`, if `op` names one. */
export function rowOf(op: unknown): Row<unknown[], unknown> | undefined {
  return ROWS.get(op);
}

/** Whether request `op` is a write the server may merge into one batch with others. */
export function merges(op: Op): boolean {
  return rowOf(op)?.merges === true;
}

/** Whether request `op` may create files. */
export function createsFiles(op: Op): boolean {
  return rowOf(op)?.createsFiles === true;
}

/** Roughly the bytes request `op` with `args` writes (for pacing maintenance). */
export function bytesWritten<O extends Op>(op: O, args: Args<O>): number {
  return rowOf(op)?.bytes?.(args) ?? 0;
}
