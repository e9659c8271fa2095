/**
 * Snapshots of the Promise API: a snapshot lives on the server that made it.
 *
 * @module
 */
import { closedError, invalidArgument } from "../errors.js";
import type { Transport } from "../transport/transport.js";
import type { Snapshot } from "../types.js";
import { track, untrack, type Held } from "./server-resources.js";

export class PromiseSnapshot implements Snapshot {
  #closed = false;

  constructor(
    readonly transport: Transport,
    readonly id: number,
    readonly server: string,
  ) {
    track(this, this.#held());
  }

  #held(): Held {
    return { transport: this.transport, op: "snapshotClose", id: this.id, server: this.server };
  }

  get closed(): boolean {
    return this.#closed || this.transport.closed;
  }

  close(): void {
    if (!this.#closed) {
      this.#closed = true;
      untrack(this, this.#held());
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * The snapshot id and server a read with option `snapshot` uses: `[0, undefined]` (the latest
 * state, any server) when absent. A snapshot of another database is `INVALID_ARGUMENT`, a closed
 * one `CLOSED`.
 */
export function snapshotTarget(
  transport: Transport,
  snapshot: unknown,
): [id: number, server: string | undefined] {
  if (snapshot === undefined) {
    return [0, undefined];
  }
  if (!(snapshot instanceof PromiseSnapshot) || snapshot.transport !== transport) {
    throw invalidArgument("options.snapshot must be a snapshot of this database");
  }
  if (snapshot.closed) {
    throw closedError("the snapshot");
  }
  return [snapshot.id, snapshot.server];
}
