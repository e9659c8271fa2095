/**
 * A read of a long-lived Promise API loop that may wait on its server (the change feed's
 * `changes({ follow: true })`, a watch): one request at a time, named by a wait id of the
 * database's {@link Waits} while it waits, which {@link WaitingRequest.stop} cancels on the server
 * and ends here at once.
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import type { Transport } from "../transport/transport.js";
import type { Waits } from "./waits.js";

export class WaitingRequest {
  readonly #transport: Transport;
  readonly #waits: Waits;
  /** The wait id of the request under way, while it may wait. */
  #waitId: number | undefined;
  /** Ends a request under way when stopped. */
  #interrupt: (() => void) | undefined;
  #stopped = false;

  constructor(transport: Transport, waits: Waits) {
    this.#transport = transport;
    this.#waits = waits;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Sends `send(waitId)` (`waitId` 0 unless `wait`). Resolves its result, or `undefined` when
   * stopped meanwhile, or — if `wait`, or `closedEnds` — when the database closed under it (a
   * waiting loop ends at close); other errors reject.
   */
  async send<T>(wait: boolean, closedEnds: boolean, send: (waitId: number) => Promise<T>): Promise<T | undefined> {
    const waitId = wait ? this.#waits.start() : 0;
    this.#waitId = wait ? waitId : undefined;
    const request = send(waitId);
    const interrupted = new Promise<undefined>((resolve) => {
      this.#interrupt = () => resolve(undefined);
    });
    try {
      const result = await Promise.race([request, interrupted]);
      return this.#stopped ? undefined : result;
    } catch (error) {
      if ((wait || closedEnds) && error instanceof ShaleError && error.code === "CLOSED") {
        return undefined;
      }
      throw error;
    } finally {
      request.catch(() => undefined);
      this.#interrupt = undefined;
      if (wait) this.#waits.open.delete(waitId);
      this.#waitId = undefined;
    }
  }

  /** Ends the request under way (cancelling its wait on the server) and every later one's result. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#waitId !== undefined && !this.#transport.closed) {
      this.#transport.request("queueCancelWait", [this.#waitId]).catch(() => undefined);
    }
    this.#interrupt?.();
  }
}
