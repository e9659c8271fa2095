/**
 * How the owner commits writes (`put`, `delete`, `write`), beyond carrying them out:
 * - writes that arrived together are committed as one batch (a group commit); if that batch
 *   fails with `INVALID_ARGUMENT` (found before anything is committed) the caller runs them
 *   alone, so that only the bad one fails; any other failure leaves the outcome unknown, and
 *   every write of the batch fails with it, none run again;
 * - writes of a served page carry its applied-write record in the same batch, and a write it
 *   sends again after a takeover is answered "done" if a record says it was applied
 *   (`applied-writes.ts`): exactly once.
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import type { AppliedWrites } from "./applied-writes.js";
import type { ClientResources } from "./client-resources.js";
import type { Executor } from "./executor.js";
import { merges } from "./operations/table.js";
import type { Reply, RequestMessage } from "../transport/requests.js";
import { toWire } from "../transport/wire-error.js";

/** Whether `error` says a write was refused before anything was committed. */
export function isRejection(error: unknown): boolean {
  return error instanceof ShaleError && error.code === "INVALID_ARGUMENT";
}

function asShaleError(error: unknown): ShaleError {
  return error instanceof ShaleError ? error : new ShaleError("IO", `shaledb: ${String(error)}`, { cause: error });
}

export class WritePath {
  readonly #executor: Executor;
  readonly #applied: AppliedWrites;
  /** Tests only (`debugFailMergedWrite`): the next merged write fails with this code. */
  #failNextMerged: ShaleError["code"] | undefined;

  constructor(executor: Executor, applied: AppliedWrites) {
    this.#executor = executor;
    this.#applied = applied;
  }

  /** Tests only: the next {@link commitMerged} fails with `code`, writing nothing. */
  failNextMerged(code: ShaleError["code"]): void {
    this.#failNextMerged = code;
  }

  /**
   * The requests to carry out: writes sent again that an owner applied already are answered
   * (in `replies`) instead of run again.
   */
  skipApplied(client: ClientResources, requests: RequestMessage[], replies: Reply[]): RequestMessage[] {
    if (!requests.some((r) => r[3] === 1 && merges(r[1]))) {
      return requests;
    }
    const todo: RequestMessage[] = [];
    for (const request of requests) {
      if (request[3] === 1 && merges(request[1])) {
        try {
          if (this.#applied.wasApplied(client.id, request[0])) {
            replies.push([request[0], true, undefined]);
            continue;
          }
        } catch (error) {
          // Whether it was applied cannot be known: better an error than a write made twice.
          replies.push([request[0], false, toWire(error)]);
          continue;
        }
      }
      todo.push(request);
    }
    return todo;
  }

  /**
   * Commits a run of writes as one batch (with the client's applied-write record if it is
   * tracked); returns the error if it failed. After `INVALID_ARGUMENT` nothing was written (run
   * them alone); after any other error the outcome is unknown (fail them all with it).
   */
  commitMerged(client: ClientResources, run: readonly RequestMessage[]): ShaleError | undefined {
    let committing = false;
    try {
      const record = client.tracked ? this.#applied.recordOp(client.id, lastId(run)) : undefined;
      const injected = this.#failNextMerged;
      if (injected !== undefined) {
        this.#failNextMerged = undefined;
        throw new ShaleError(injected, "shaledb: injected failure of a merged write (test hook)");
      }
      committing = true;
      this.#executor.commitWrites(client, run, record);
      return undefined;
    } catch (error) {
      const failure = asShaleError(error);
      // Refused before anything was written: the caller runs them alone, which notes again
      // those refused then.
      if (client.tracked && !isRejection(failure)) {
        this.#failed(client, run, committing ? failure : undefined);
      }
      return failure;
    }
  }

  /** Commits one write of a tracked (served) client with its applied-write record. */
  commitTracked(client: ClientResources, request: RequestMessage): void {
    let committing = false;
    try {
      const record = this.#applied.recordOp(client.id, request[0]);
      committing = true;
      this.#executor.commitWrites(client, [request], record);
    } catch (error) {
      this.#failed(client, [request], committing ? error : undefined);
      throw error;
    }
  }

  /** Notes that tracked write `request` failed before it reached the commit. */
  notCommitted(client: ClientResources, request: RequestMessage): void {
    this.#failed(client, [request], undefined);
  }

  /**
   * Notes tracked writes `run` that failed: `error` is the commit's error, `undefined` if they
   * failed before the commit (nothing written). Those not applied are listed as such in the
   * client's next record, so that a copy sent again runs rather than being taken as done.
   */
  #failed(client: ClientResources, run: readonly RequestMessage[], error: unknown): void {
    let applied = false;
    if (error !== undefined && !isRejection(error)) {
      // The outcome of a failed commit is unknown: the record, committed with the writes or
      // not, tells.
      try {
        applied = this.#applied.wasApplied(client.id, lastId(run));
      } catch {
        return; // Cannot tell (the instance is gone, say): note nothing.
      }
    }
    if (!applied) {
      for (const [id] of run) {
        this.#applied.rejected(client.id, id);
      }
    }
  }
}

function lastId(run: readonly RequestMessage[]): number {
  return (run[run.length - 1] as RequestMessage)[0];
}
