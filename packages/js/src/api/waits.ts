/**
 * The waiting reads of one database's Promise API (queue reads with `waitMs`, subscriptions,
 * following change feeds), each named by an id its server knows, so that `close()` can end them.
 *
 * @module
 */

/** The waiting reads of one database's Promise API, so that `close()` can end them. */
export class Waits {
  #next = 1;
  readonly open = new Set<number>();

  /** A new wait id, open until `done`. */
  start(): number {
    const id = this.#next++;
    this.open.add(id);
    return id;
  }
}
