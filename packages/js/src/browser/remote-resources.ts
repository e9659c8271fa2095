/**
 * What a page holds on the owner of its database: snapshots and transactions (iterators are in
 * `remote-iterator.ts`), each tied to the owner that made it, and released when closed or, if a
 * user forgets to, when garbage-collected.
 *
 * @module
 */
import { keyspaceArgument, syncOption } from "../arguments.js";
import { closedError, invalidArgument } from "../errors.js";
import { settle } from "../settle.js";
import type { KeyspaceRef, Snapshot, Transaction, WriteOptions } from "../types.js";
import type { Connection } from "./connection.js";
import type { RemoteStore } from "./remote-store.js";

/** A release request for something on an owner. */
interface Held {
  connection: Connection;
  op: "iterClose" | "snapshotClose" | "txRollback";
  id: number;
  owner: string;
}

/** Releases what a page forgot to close, once the page object that held it is collected. */
const forgotten = new FinalizationRegistry<Held>(({ connection, op, id, owner }) => {
  release(connection, op, id, owner);
});

function release(connection: Connection, op: Held["op"], id: number, owner: string): void {
  if (!connection.closed) {
    connection.request(op, [id], owner).catch(() => undefined);
  }
}

/** Tracks `holder` until {@link untrack}: collected before that, its resource is released. */
export function track(holder: object, held: Held): void {
  forgotten.register(holder, held, holder);
}

/** Stops tracking `holder` without releasing anything (its resource ended by itself). */
export function forgetTracking(holder: object): void {
  forgotten.unregister(holder);
}

/** Releases `held` now (and stops tracking `holder`). */
export function untrack(holder: object, held: Held): void {
  forgotten.unregister(holder);
  release(held.connection, held.op, held.id, held.owner);
}

export class RemoteSnapshot implements Snapshot {
  #closed = false;

  constructor(
    readonly connection: Connection,
    readonly id: number,
    readonly owner: string,
  ) {
    track(this, this.#held());
  }

  #held(): Held {
    return { connection: this.connection, op: "snapshotClose", id: this.id, owner: this.owner };
  }

  get closed(): boolean {
    return this.#closed || this.connection.closed;
  }

  close(): void {
    if (!this.#closed) {
      this.#closed = true;
      untrack(this, this.#held());
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** The snapshot id and owner a read with `snapshot` uses: `[0, undefined]` for the latest state. */
export function snapshotTarget(
  connection: Connection,
  snapshot: unknown,
): [id: number, owner: string | undefined] {
  if (snapshot === undefined) {
    return [0, undefined];
  }
  if (!(snapshot instanceof RemoteSnapshot) || snapshot.connection !== connection) {
    throw invalidArgument("options.snapshot must be a snapshot of this database");
  }
  if (snapshot.closed) {
    throw closedError("the snapshot");
  }
  return [snapshot.id, snapshot.owner];
}

/** The store a keyspace argument names (the default store when absent). */
export function storeOf(
  fallback: RemoteStore,
  keyspace: unknown,
): RemoteStore {
  if (keyspaceArgument(keyspace) === undefined) {
    return fallback;
  }
  const store = keyspace as RemoteStore;
  if (store.connection !== fallback.connection || typeof store.keyspaceId !== "number") {
    throw invalidArgument("the keyspace must be one opened on this database");
  }
  return store;
}

export class RemoteTransaction implements Transaction<unknown, unknown> {
  #ended = false;

  constructor(
    readonly store: RemoteStore,
    readonly id: number,
    readonly owner: string,
  ) {
    track(this, this.#held());
  }

  #held(): Held {
    return { connection: this.store.connection, op: "txRollback", id: this.id, owner: this.owner };
  }

  #target(keyspace: KeyspaceRef<unknown, unknown> | undefined): RemoteStore {
    if (this.#ended) {
      throw closedError("the transaction (committed or rolled back)");
    }
    return storeOf(this.store, keyspace);
  }

  get(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): Promise<unknown> {
    return settle(() => {
      const s = this.#target(keyspace);
      const k = s.encodeKey(key);
      return s.connection
        .request("txGet", [this.id, s.keyspaceId, k], this.owner)
        .then((v) => (v === undefined ? undefined : s.valueCodec.decode(v)));
    });
  }

  /** Queues the write on the owner; a failure there makes the commit fail with it. */
  put(key: unknown, value: unknown, keyspace?: KeyspaceRef<unknown, unknown>): void {
    const s = this.#target(keyspace);
    const args: [number, number, Uint8Array, Uint8Array] = [this.id, s.keyspaceId, s.encodeKey(key), s.encodeValue(value)];
    s.connection.request("txPut", args, this.owner).catch(() => undefined);
  }

  delete(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): void {
    const s = this.#target(keyspace);
    s.connection.request("txDelete", [this.id, s.keyspaceId, s.encodeKey(key)], this.owner).catch(() => undefined);
  }

  commit(options?: WriteOptions): Promise<void> {
    return settle(() => {
      this.#target(undefined);
      // Checked before anything ends: a bad option leaves the transaction usable.
      const sync = syncOption(options);
      this.#ended = true;
      forgotten.unregister(this);
      return this.store.connection.request("txCommit", [this.id, sync], this.owner);
    });
  }

  rollback(): Promise<void> {
    if (!this.#ended) {
      this.#ended = true;
      untrack(this, this.#held());
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.rollback();
  }
}
