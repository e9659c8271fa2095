/**
 * `liveQuery()`: a read function's result kept current over a watch, in Dexie's shape (an
 * observable: `subscribe(observer)` → `{ unsubscribe }`). Each subscription starts its own
 * watch *before* its first read, so a write landing during a read re-runs it.
 *
 * @module
 */
import { describe } from "../arguments/checks.js";
import { invalidArgument } from "../errors.js";
import type { LiveQuery, LiveQueryObserver, Subscription } from "../types/watch.js";
import { report, type WatcherImpl } from "./watcher.js";

/** A live query of `read`, each subscription watching through `watch()` (a new watch each). */
export function liveQuery<T>(read: () => T | Promise<T>, watch: () => WatcherImpl): LiveQuery<T> {
  return {
    subscribe(observer, error) {
      const { next, fail } = observerOf(observer, error);
      return subscribe(read, watch(), next, fail);
    },
  };
}

function observerOf<T>(
  observer: LiveQueryObserver<T> | ((value: T) => void),
  error: ((error: unknown) => void) | undefined,
): { next: (value: T) => void; fail: (error: unknown) => void } {
  if (typeof observer === "function") {
    return { next: observer, fail: error ?? report };
  }
  if (typeof observer !== "object" || observer === null) {
    throw invalidArgument(`subscribe() takes a function or an observer, got ${describe(observer)}`);
  }
  return {
    next: (value) => observer.next?.(value),
    fail: (e) => (observer.error === undefined ? report(e) : observer.error(e)),
  };
}

function subscribe<T>(
  read: () => T | Promise<T>,
  watcher: WatcherImpl,
  next: (value: T) => void,
  fail: (error: unknown) => void,
): Subscription {
  let closed = false;
  const stop = (): void => {
    closed = true;
    watcher.close();
  };
  void (async () => {
    // The watch already took its position: writes from here on re-run the read.
    let event = watcher.next();
    for (;;) {
      const value = await read();
      if (closed) return;
      next(value);
      const changed = await event;
      if (changed.done === true || closed) {
        stop(); // the database closed, or unsubscribed
        return;
      }
      event = watcher.next();
    }
  })().catch((e: unknown) => {
    if (closed) return;
    stop();
    fail(e);
  });
  return {
    unsubscribe: stop,
    get closed() {
      return closed;
    },
  };
}
