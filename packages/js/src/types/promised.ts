/**
 * How the Promise API's interfaces derive from the synchronous API's.
 *
 * @module
 */

/**
 * The Promise API's form of a synchronous interface: each method resolving with what the
 * synchronous one returns, its documentation carried over. Methods whose Promise form differs
 * (iterators, handles that open asynchronously, overloads, loops that wait) are declared beside
 * it, left out of `T` with `Omit`.
 */
export type Promised<T> = {
  [P in keyof T]: T[P] extends (...args: infer A) => infer R ? PromisedMethod<A, R> : T[P];
};

/**
 * A method resolving with `R`. Written as a method, not a function property, so that its
 * parameters compare as a method's do (bivariantly): a `Database<string, string>` is then a
 * `Database<unknown, unknown>` as an interface with methods would be.
 */
type PromisedMethod<A extends unknown[], R> = { method(...args: A): Promise<R> }["method"];
