/**
 * The client's side of keyspace numbers (`../server/client-keyspaces.ts` has the server's): a
 * client (a browser page, Node's Promise API) numbers the keyspaces it opens, 1, 2, ... in the
 * order it first asks for each name (0 is the default keyspace), for the whole life of its
 * transport. Every server (browsers: owner) it talks to learns these numbers by name: the
 * `keyspace` request binds one, and the first message to a new owner declares those opened
 * before (so after a takeover the same handles name the same keyspaces).
 *
 * @module
 */
import type { KeyspaceDeclaration } from "./requests.js";

export class KeyspaceNumbers {
  readonly #numbers = new Map<string, number>();
  /** Keyspaces some owner has opened for this page: declared to every later owner. */
  readonly #opened: KeyspaceDeclaration[] = [];
  /** The owner the declarations went to last, and how many of `#opened` it knows. */
  #declaredTo: string | undefined;
  #declared = 0;

  /** This page's number for keyspace `name` (a new one the first time). */
  numberOf(name: string): number {
    let number = this.#numbers.get(name);
    if (number === undefined) {
      number = this.#numbers.size + 1;
      this.#numbers.set(name, number);
    }
    return number;
  }

  /** Records that owner `owner` opened keyspace `name` (numbered by {@link numberOf}). */
  opened(name: string, owner: string): void {
    const number = this.numberOf(name);
    if (this.#opened.some(([n]) => n === number)) {
      return;
    }
    this.#opened.push([number, name]);
    if (owner === this.#declaredTo && this.#declared === this.#opened.length - 1) {
      this.#declared += 1; // that owner bound it itself
    }
  }

  /**
   * The keyspaces to declare in a message to `owner` (those it has not been told of), or
   * `undefined` if none; they count as declared from now on.
   */
  declarationsFor(owner: string): KeyspaceDeclaration[] | undefined {
    if (owner !== this.#declaredTo) {
      this.#declaredTo = owner;
      this.#declared = 0;
    }
    if (this.#declared === this.#opened.length) {
      return undefined;
    }
    const declarations = this.#opened.slice(this.#declared);
    this.#declared = this.#opened.length;
    return declarations;
  }
}
