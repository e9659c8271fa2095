/**
 * Web Locks held for as long as the holder wants: ownership of a database, liveness of a client.
 *
 * @module
 */

import { requireStorageApis } from "./support.js";

/** Releases a held lock (idempotent). */
export type Release = () => void;

/**
 * Requests lock `name`. With `ifAvailable`, resolves `undefined` at once if someone else holds
 * it; otherwise waits for it (until `signal` aborts, which rejects). Resolves a function that
 * releases the lock.
 */
export function acquireLock(
  name: string,
  options: { ifAvailable?: boolean; signal?: AbortSignal } = {},
): Promise<Release | undefined> {
  try {
    requireStorageApis();
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise((resolve, reject) => {
    const request: LockOptions = options.ifAvailable === true ? { ifAvailable: true } : {};
    if (options.signal !== undefined) {
      request.signal = options.signal;
    }
    navigator.locks
      .request(name, request, (lock) => {
        if (lock === null) {
          resolve(undefined);
          return undefined;
        }
        return new Promise<void>((release) => {
          resolve(() => release());
        });
      })
      .catch(reject);
  });
}

/** Calls `onGone` once lock `name` becomes free: its holder released it or went away. */
export function whenReleased(name: string, signal: AbortSignal, onGone: () => void): void {
  navigator.locks
    .request(name, { signal }, () => {
      onGone();
    })
    .catch(() => {
      // Aborted: the watcher stopped caring.
    });
}
