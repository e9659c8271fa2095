/**
 * When the owner of a database changes (its tab went away and another worker took over), what
 * becomes of the requests a page had sent it: those safe to repeat go to the next owner (reads,
 * and writes — put, delete, batches —, which the next owner carries out only if no owner applied
 * them yet: `../../server/applied-writes.ts`, exactly once); those tied to the gone owner's
 * iterators, snapshots and transactions fail (`CLOSED`; `CONFLICT` for a transaction, so that
 * `transact` retries it), those that only release something resolve, and a commit or checkpoint
 * whose outcome cannot be known fails with `IO`.
 *
 * @module
 */
import { ShaleError } from "../../errors.js";
import type { PendingRequests } from "../../transport/pending-requests.js";
import type { Op } from "../../transport/requests.js";

/** Requests that only release something: harmless to drop with their owner. */
export const RELEASES: ReadonlySet<Op> = new Set<Op>(["iterClose", "snapshotClose", "txRollback"]);
/** Requests whose effect cannot be known if their owner went away unanswered. */
const UNKNOWN_OUTCOME: ReadonlySet<Op> = new Set<Op>(["txCommit", "checkpoint"]);

/** The error of request `op` tied to an owner of database `name` that went away. */
export function ownerGone(op: Op, name: string): ShaleError {
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

/**
 * The owner of database `name` is now `next` (`undefined`: none yet): every request of
 * `requests` sent to another owner is put back to be sent again, resolved or failed, as the
 * module notes say. The caller sends what was put back once it has an owner.
 */
export function reroute(requests: PendingRequests, next: string | undefined, name: string): void {
  for (const [id, pending] of [...requests.entries()]) {
    if (pending.sentTo === undefined || pending.sentTo === next) {
      continue;
    }
    if (pending.bound === undefined && !UNKNOWN_OUTCOME.has(pending.op)) {
      requests.requeue(id);
    } else if (RELEASES.has(pending.op)) {
      requests.settle(id, true, undefined);
    } else {
      requests.fail(id, ownerGone(pending.op, name));
    }
  }
}
