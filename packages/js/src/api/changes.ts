/**
 * `db.changes()` of the Promise API: the change feed fetched in chunks (up to
 * `CHANGES_CHUNK` changes or about `CHANGES_CHUNK_BYTES` per request). Without `follow` it ends
 * at the last change committed when a read comes back empty; with `follow` that read waits on
 * the server (no polling) for the next commit. It ends when the loop breaks (`return()`),
 * `signal` aborts (the wait under way is cancelled), or — `follow` only — the database closes
 * while it waits (how a process shuts its loops down). A pull on a closed database, and a read
 * without `follow` that the close cuts short (which could not be told from having caught up),
 * reject with `CLOSED`. Options are checked on the first pull (`./first-pull.ts`).
 *
 * @module
 */
import { CHANGES_CHUNK, CHANGES_CHUNK_BYTES, changesOptions } from "../arguments/change-options.js";
import { decodeChanges } from "../encoding/changes.js";
import { closedError } from "../errors.js";
import type { Transport } from "../transport/transport.js";
import type { Change } from "../types.js";
import { onFirstPull } from "./first-pull.js";
import { WaitingRequest } from "./waiting-request.js";
import type { Waits } from "./waits.js";

/** How long one read waits on the server before the feed asks again. */
const WAIT_MS = 60_000;

/** The feed (see the module notes); a bad option is `INVALID_ARGUMENT`, rejecting the first pull. */
export function changeFeed(transport: Transport, waits: Waits, options: unknown): AsyncIterableIterator<Change> {
  return onFirstPull(() => new ChangeFeed(transport, waits, changesOptions(options, true)));
}

class ChangeFeed implements AsyncIterableIterator<Change> {
  readonly #transport: Transport;
  readonly #follow: boolean;
  /** The next change wanted starts at or after this. */
  #next: number;
  /** Changes still to hand out (`limit`). */
  #left: number;
  readonly #buffer: Change[] = [];
  #ended = false;
  /** The read under way (it may wait on the server), which `#stop` ends. */
  readonly #request: WaitingRequest;

  constructor(transport: Transport, waits: Waits, options: ReturnType<typeof changesOptions>) {
    this.#transport = transport;
    this.#request = new WaitingRequest(transport, waits);
    this.#follow = options.follow;
    this.#next = options.since;
    this.#left = options.limit;
    if (options.signal?.aborted === true) {
      this.#ended = true;
    }
    options.signal?.addEventListener("abort", () => this.#stop(), { once: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Change> {
    return this;
  }

  async next(): Promise<IteratorResult<Change>> {
    if (!this.#ended && this.#transport.closed) {
      this.#stop();
      throw closedError("the database");
    }
    while (!this.#ended && this.#left > 0) {
      const change = this.#buffer.shift();
      if (change !== undefined) {
        this.#left -= 1;
        return { done: false, value: change };
      }
      const changes = await this.#read();
      if (changes === undefined || (changes.length === 0 && !this.#follow)) {
        break;
      }
      for (const c of changes) {
        this.#buffer.push(c);
        this.#next = c.lastSeq + 1;
      }
    }
    this.#stop();
    return { done: true, value: undefined };
  }

  return(): Promise<IteratorResult<Change>> {
    this.#stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  /** One read of the feed; `undefined` once the feed ended (or the database closed). */
  async #read(): Promise<Change[] | undefined> {
    const limit = Math.min(this.#left, CHANGES_CHUNK);
    const bytes = await this.#request.send(this.#follow, false, (waitId) =>
      this.#transport.request("changesRead", [this.#next, limit, CHANGES_CHUNK_BYTES, this.#follow ? WAIT_MS : 0, waitId]),
    );
    return bytes === undefined || this.#ended ? undefined : decodeChanges(bytes);
  }

  #stop(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#buffer.length = 0;
    this.#request.stop();
  }
}
