/**
 * Who waits for items of which queue, in this thread: a queue object calls {@link notify} once
 * a push or a release to a queue has committed (and a read that may have moved items to a
 * dead-letter queue, for that one), and a waiting read of the Promise API's server
 * (`../server/queue-waits.ts`) listens. The synchronous API cannot wait, so without a server
 * nobody listens and a notification costs one map lookup.
 *
 * @module
 */

export class QueueSignals {
  readonly #listeners = new Map<string, Set<() => void>>();

  /** Calls `listener` after each notification about queue `name`; returns the unsubscriber. */
  listen(name: string, listener: () => void): () => void {
    let set = this.#listeners.get(name);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(name) === set) {
        this.#listeners.delete(name);
      }
    };
  }

  /** Items may have come to queue `name`: tells its listeners. */
  notify(name: string): void {
    const set = this.#listeners.get(name);
    if (set !== undefined) {
      for (const listener of [...set]) listener();
    }
  }
}
