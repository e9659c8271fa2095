/**
 * Runs jobs one at a time, in order, each to its end (awaiting it if it is asynchronous), so
 * that requests, maintenance and pool growth never interleave. A job that needs no waiting runs
 * at once, inside the call that queued it.
 *
 * @module
 */

export type Job = () => void | Promise<void>;

export class JobQueue {
  readonly #jobs: Job[] = [];
  #running = false;

  /** Queues `job`; it runs after every job queued before it. Its failures are its own business. */
  push(job: Job): void {
    this.#jobs.push(job);
    if (!this.#running) {
      void this.#drain();
    }
  }

  /** Whether nothing is queued or running. */
  get idle(): boolean {
    return !this.#running && this.#jobs.length === 0;
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      for (let job = this.#jobs.shift(); job !== undefined; job = this.#jobs.shift()) {
        try {
          const pending = job();
          if (pending !== undefined) {
            await pending;
          }
        } catch {
          // A job reports its own failures; one failing must not stop the others.
        }
      }
    } finally {
      this.#running = false;
    }
  }
}
