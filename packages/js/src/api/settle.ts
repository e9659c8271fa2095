/**
 * Promise-API calls that must never throw: what the work throws becomes a rejection.
 *
 * @module
 */

/**
 * Runs `fn` and returns its result (a value or a promise of one) as a promise; what `fn`
 * throws, a wrong argument say, is a rejected promise rather than an exception.
 */
export function settle<T>(fn: () => T | PromiseLike<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}
