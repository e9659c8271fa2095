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

/**
 * How long a lock that was just released elsewhere may still look held. Firefox carries a
 * release to its lock manager asynchronously, on the releasing thread's own channel: a page that
 * learns "done" from a worker (an import) can ask for the lock before the release has arrived,
 * and `ifAvailable` then says "held". Chromium shows the release at once.
 */
export const LOCK_RELEASE_GRACE_MS = 300;

/**
 * Requests lock `name` as `acquireLock(name, { ifAvailable: true })` does, except that a lock
 * held by someone else is waited for up to `graceMs` (a release on its way) before resolving
 * `undefined`. For the callers whose answer to a held lock is LOCKED.
 */
export async function acquireLockSoon(name: string, graceMs = LOCK_RELEASE_GRACE_MS): Promise<Release | undefined> {
  const now = await acquireLock(name, { ifAvailable: true });
  if (now !== undefined) {
    return now;
  }
  try {
    return await acquireLock(name, { signal: AbortSignal.timeout(graceMs) });
  } catch (error) {
    if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")) {
      return undefined;
    }
    throw error;
  }
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
