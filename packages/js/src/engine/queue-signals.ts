/**
 * Who waits for something of which named object (a queue, a topic; or `""`: any commit), in
 * this thread: a waiting read of the Promise API's server (`../server/queue-waits.ts`) listens,
 * and the database handle notifies the objects the core says were woken after each write call
 * (`database-handle.ts`: the core's log of woken queues and topics, the same notification its
 * own waits block on). The synchronous API cannot wait, so without a server nobody listens.
 *
 * @module
 */

export class QueueSignals {
  readonly #listeners = new Map<string, Set<() => void>>();
  #count = 0;

  readonly #listening: ((on: boolean) => void) | undefined;

  /** `listening(true)` when the first listener comes, `listening(false)` when the last goes. */
  constructor(listening?: (on: boolean) => void) {
    this.#listening = listening;
  }

  /** Calls `listener` after each notification about queue `name`; returns the unsubscriber. */
  listen(name: string, listener: () => void): () => void {
    let set = this.#listeners.get(name);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    if (!set.has(listener)) {
      set.add(listener);
      if (this.#count++ === 0) this.#listening?.(true);
    }
    return () => {
      if (!set.delete(listener)) return;
      if (set.size === 0 && this.#listeners.get(name) === set) {
        this.#listeners.delete(name);
      }
      if (--this.#count === 0) this.#listening?.(false);
    };
  }

  /**
   * Tells every listener (writes became visible later than they committed: deferred WAL syncs,
   * `../server/database-server.ts`); a listener woken for nothing tries again and waits on.
   */
  notifyAll(): void {
    for (const set of [...this.#listeners.values()]) {
      for (const listener of [...set]) listener();
    }
  }

  /** Items may have come to queue `name`: tells its listeners. */
  notify(name: string): void {
    const set = this.#listeners.get(name);
    if (set !== undefined) {
      for (const listener of [...set]) listener();
    }
  }
}
