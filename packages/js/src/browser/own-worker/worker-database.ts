/**
 * The synchronous API in a browser worker of the application's own (`openInWorker`): the Node
 * synchronous API's methods on a database this worker owns, with what only a browser has
 * (export) and what a worker must await (closing, and the OPFS file pool's growth: `ready()`).
 *
 * @module
 */
import { invalidArgument } from "../../errors.js";
import type { Codec } from "../../encoding/codec.js";
import { SyncDatabaseImpl, type Environment } from "../../engine/sync-database.js";
import type { SyncDatabase } from "../../types.js";
import type { Owner } from "../worker/owner.js";

/**
 * A database opened by `openInWorker`: every method of Node's synchronous API, except
 * `checkpoint` (use `export()`), with an asynchronous `close()`.
 */
export interface WorkerDatabase<K, V>
  extends Omit<SyncDatabase<K, V>, "close" | "checkpoint" | typeof Symbol.dispose>,
    AsyncDisposable {
  /**
   * Resolves once the OPFS file pool has files ready for what writes may create (logs, tables).
   * The pool grows only while this worker awaits something: a write that finds none ready fails
   * with `BUSY` (nothing written) — await this, then retry. Also worth awaiting before a long
   * burst of writes that never yields. Rejects with `QUOTA` if the pool cannot grow.
   */
  ready(): Promise<void>;
  /** A plain tar archive of the database directory (what `importDatabase` reads). */
  export(): Blob;
  /**
   * Closes the database, stops serving other tabs and lets go of it (another tab's `open` or
   * another worker's `openInWorker` may then own it). Idempotent.
   */
  close(): Promise<void>;
}

/** Not a storage: a worker's database has no directory path to checkpoint into. */
const noDirectories: Environment = {
  resolve: (location) => location,
  storage: () => {
    throw invalidArgument("openInWorker databases have no checkpoint(): use export()");
  },
};

export class WorkerDatabaseImpl extends SyncDatabaseImpl {
  readonly #owner: Owner;
  #closing: Promise<void> | undefined;

  /** A view, with encodings `keys` and `values`, of the database `owner` serves directly. */
  constructor(owner: Owner, keys: Codec<unknown>, values: Codec<unknown>) {
    super(owner.serveDirectly().db, noDirectories, keys, values);
    this.#owner = owner;
  }

  ready(): Promise<void> {
    this.db.check();
    return this.#owner.ready();
  }

  export(): Blob {
    this.db.check();
    return this.#owner.exportNow();
  }

  override checkpoint(): never {
    throw invalidArgument("openInWorker databases have no checkpoint(): use export()");
  }

  /**
   * Asynchronous here: the owner lets go of the database's files and lock only once its queued
   * work (maintenance, other tabs' requests) is done. Writes fail with `CLOSED` from the call on.
   */
  override close(): Promise<void> {
    this.#closing ??= this.#owner.close();
    return this.#closing;
  }

  override [Symbol.dispose](): void {
    void this.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
