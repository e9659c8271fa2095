/**
 * Reads of the Promise API that wait (`take`, `reserve` with `waitMs`), on the server, without
 * polling and without holding up the server: an empty first attempt registers a waiter, and the
 * request's reply is sent later ({@link Later}), while the server goes on with other requests.
 * The waiter tries again — as a job of the server's queue, alone like any request — when:
 * - a push or release to its queue commits (`QueueSignals`, from any client of this server, the
 *   synchronous API in the same thread, or a batch), or the queue is deleted (the attempt then
 *   fails, and so does the read);
 * - a lease or delay of its group falls due (a timer set to the core's `nextWake`);
 * - `waitMs` has passed: one last attempt, then the read resolves with what it got (nothing).
 * It ends early, with nothing, when its client cancels it (`queueCancelWait`) or leaves, or the
 * server closes.
 *
 * @module
 */
import type { QueueSignals } from "../engine/queue-signals.js";
import type { ClientResources } from "./client-resources.js";

/** The soonest a waiter tries again on a timer after an empty attempt. */
const MIN_RETRY_MS = 5;
/**
 * The longest delay a timer takes: a longer one fires after 1 ms instead (Node warns
 * `TimeoutOverflowWarning`), which would turn the longest wait into polling.
 */
const MAX_TIMER_MS = 0x7fff_ffff;

/** A request result that comes later: the server replies once `promise` settles. */
export class Later<T> {
  constructor(readonly promise: Promise<T>) {}
}

/** What a waiting read needs of its queue. */
export interface WaitTarget<T> {
  /** The queue's name (what pushes notify). */
  readonly name: string;
  /** One attempt at the read (never waits). */
  attempt(): T;
  /** Whether an attempt's result holds nothing. */
  empty(result: T): boolean;
  /** When the group next has an item come back by itself (ms since the epoch), if known. */
  nextWake(): number | undefined;
}

/**
 * Waits up to `waitMs` for `target` to yield something, for `client` (which names the wait
 * `waitId` to cancel it). `run` queues a job on the server; `signals` tells of pushes. The
 * first attempt was made (empty) by the caller.
 */
export function waitForItems<T>(
  target: WaitTarget<T>,
  nothing: T,
  waitMs: number,
  client: ClientResources,
  waitId: number,
  signals: QueueSignals,
  run: (job: () => void) => void,
): Later<T> {
  const deadline = Date.now() + waitMs;
  return new Later(
    new Promise<T>((resolve, reject) => {
      let done = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let queued = false;
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        unlisten();
        if (client.waits.get(waitId) === cancel) client.waits.delete(waitId);
        settle();
      };
      const arm = (): void => {
        clearTimeout(timer);
        const now = Date.now();
        // A wake time already past (what the last attempt left due) is retried after a few ms
        // rather than at once: never a spin.
        const wake = target.nextWake() ?? Infinity;
        const at = Math.min(deadline, wake <= now ? now + MIN_RETRY_MS : wake);
        // +1: a lease ending at `at` is due once the clock has passed it.
        timer = setTimeout(tryAgain, Math.min(MAX_TIMER_MS, Math.max(0, at - now) + 1));
      };
      function tryAgain(): void {
        if (done || queued) return;
        queued = true;
        run(() => {
          queued = false;
          if (done) return;
          try {
            const result = target.attempt();
            if (!target.empty(result) || Date.now() >= deadline) {
              finish(() => resolve(result));
            } else {
              arm();
            }
          } catch (error) {
            finish(() => reject(error));
          }
        });
      }
      const cancel = (): void => finish(() => resolve(nothing));
      const unlisten = signals.listen(target.name, tryAgain);
      client.waits.get(waitId)?.();
      client.waits.set(waitId, cancel);
      try {
        arm();
      } catch (error) {
        finish(() => reject(error));
      }
    }),
  );
}
