/**
 * Locks of a slot pool. The worker already holds the database's Web Lock (no other worker can
 * open these files), so a pool's lock only stops a second open of the database inside that
 * worker.
 *
 * @module
 */
import { poolError } from "./pool-errors.js";

export class PoolLocks {
  /** Held locks: id to name (ids share the pool's id space with open files). */
  readonly #held = new Map<number, string>();

  /** Whether `id` is a held lock's. */
  has(id: number): boolean {
    return this.#held.has(id);
  }

  /** Takes lock `name` as `id`; `LOCKED` if it is held already. */
  take(name: string, id: number): void {
    for (const held of this.#held.values()) {
      if (held === name) {
        throw poolError(
          "LOCKED",
          `lock ${JSON.stringify(name)}: ${JSON.stringify(name)} is locked by this database's ` +
            "worker; close the database before opening it again",
        );
      }
    }
    this.#held.set(id, name);
  }

  /** Releases lock `id`; `EBADF` if no lock has it. */
  release(id: number): void {
    if (!this.#held.delete(id)) {
      throw poolError("EBADF", `unlock: no lock with id ${id}`);
    }
  }

  /** Forgets every lock (the pool was released). */
  clear(): void {
    this.#held.clear();
  }
}
