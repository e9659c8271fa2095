/**
 * The long-lived iterators of the Promise API (`changes()`, `topic.subscribe()`,
 * `queue.consume()`) check their arguments on the first pull: like every other Promise-API
 * method, a bad argument rejects (the first `next()`), never throws at the call.
 *
 * @module
 */

/** An iterator made by `make` on the first `next()`; a throw of `make` rejects that pull, and the iterator is then done. */
export function onFirstPull<T>(make: () => AsyncIterableIterator<T>): AsyncIterableIterator<T> {
  let inner: AsyncIterableIterator<T> | undefined;
  let finished = false;
  const done = (): Promise<IteratorResult<T>> => Promise.resolve({ done: true, value: undefined });
  const iterator: AsyncIterableIterator<T> = {
    next: () => {
      if (inner === undefined) {
        if (finished) return done();
        try {
          inner = make();
        } catch (error) {
          finished = true;
          return Promise.reject(error);
        }
      }
      return inner.next();
    },
    return: () => {
      finished = true;
      return inner?.return?.() ?? done();
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
