/**
 * The server's side of the requests: each one checked against its row of the table
 * (`./operations/table.ts`) and carried out by it on the open database (the synchronous API),
 * with bytes for keys and values. This file holds what the rows work with (`Context`): the
 * engine's handles of keyspaces, queues and topics, resolved from what requests name.
 * Iterators, snapshots, transactions and keyspace numbers belong to the client that opened
 * them (`client-resources.ts`).
 *
 * @module
 */
import { checkReverse } from "../encoding/bounds.js";
import { keyCodec } from "../encoding/codec.js";
import { PackedOps } from "../encoding/packed-ops.js";
import { OP_DELETE, OP_PUT } from "../encoding/wire.js";
import { ShaleError, closedError, invalidArgument } from "../errors.js";
import { openQueue, type SyncQueueImpl } from "../engine/queue.js";
import type { StoreImpl } from "../engine/store.js";
import type { SyncDatabaseImpl } from "../engine/sync-database.js";
import { openTopic, type SyncTopicImpl } from "../engine/topic.js";
import { writePackedBytes } from "../engine/write-packed.js";
import type { IteratorOptions, ReadOptions } from "../types.js";
import type { ClientResources, OpenTransaction } from "./client-resources.js";
import type { Context, Outcome, ServerServices } from "./operations/row.js";
import { rowOf, type Args, type Op, type Result } from "./operations/table.js";
import type { Check, WireRange } from "./operations/wire-checks.js";
import type { KeyspaceDeclaration, RequestMessage } from "../transport/requests.js";

export type { ServerServices } from "./operations/row.js";

const binary = keyCodec("binary");

/**
 * `INVALID_ARGUMENT` unless `request` names a request of the table with arguments its row
 * accepts (checked once, as a message arrives).
 */
export function checkRequest(request: RequestMessage): void {
  const [, op] = request;
  const args: unknown = request[2];
  const row = rowOf(op);
  if (row === undefined) {
    throw invalidArgument(`unknown request ${String(op)}`);
  }
  if (!Array.isArray(args) || args.length > row.args.length) {
    throw invalidArgument(`request ${op} needs ${row.args.length} arguments`);
  }
  const checks = row.args;
  try {
    for (let i = 0; i < checks.length; i++) (checks[i] as Check<unknown>)(args[i], ARGUMENT_NAMES[i] ?? String(i));
  } catch (error) {
    throw error instanceof ShaleError ? invalidArgument(`request ${op}: ${error.message.replace(/^shaledb: /, "")}`) : error;
  }
}

/** Names of the arguments by position, made once (a check names the one it refuses). */
const ARGUMENT_NAMES = Array.from({ length: 8 }, (_, i) => `argument ${i}`);

export class Executor implements Context {
  readonly db: SyncDatabaseImpl;
  readonly services: ServerServices;
  /** Engine keyspaces by engine number (0: the default one) and by name. */
  readonly #stores = new Map<number, StoreImpl>();
  readonly #byName = new Map<string, number>();
  /** Engine topic handles by name, opened on first use (with their stored options). */
  readonly #topics = new Map<string, SyncTopicImpl>();
  /** Engine queue handles by `name NUL group`, opened on first use (with their stored options). */
  readonly #queues = new Map<string, SyncQueueImpl>();
  #nextHandle = 1;

  constructor(db: SyncDatabaseImpl, services: ServerServices) {
    this.db = db;
    this.services = services;
    this.#stores.set(0, db);
  }

  /** Carries out request `op` (its arguments checked: {@link checkRequest}) for `client`; throws (or rejects) with its error. */
  execute<O extends Op>(client: ClientResources, op: O, args: Args<O>): Outcome<Result<O>> {
    const row = rowOf(op);
    if (row === undefined) {
      throw invalidArgument(`unknown request ${String(op)}`);
    }
    return row.run(this, client, ...args) as Outcome<Result<O>>;
  }

  /**
   * Applies writes `requests` (those whose rows merge: `put`, `delete`, `write`) of `client` as
   * one atomic batch — one log record, one file write — with `extra` packed operations (engine
   * keyspace numbers) appended to it. Each request's own effect stays atomic.
   *
   * Throws the batch's error. `INVALID_ARGUMENT` is found before anything is committed (a bad
   * keyspace number, an oversize key): nothing was written. After any other error (`IO`,
   * `QUOTA`, `POISONED`, `PANIC`) whether the batch was written is unknown.
   */
  commitWrites(client: ClientResources, requests: readonly RequestMessage[], extra?: Uint8Array): void {
    writePackedBytes(this.db.db, ...Executor.#merge(client, requests, extra));
  }

  /**
   * Binds the keyspace numbers a client declares (it opened them with earlier owners: they
   * exist). One that cannot be opened fails the requests that use it, with that error.
   */
  declare(client: ClientResources, declarations: readonly KeyspaceDeclaration[]): void {
    for (const [number, name] of declarations) {
      try {
        client.keyspaces.bind(number, this.openKeyspace(name));
      } catch (error) {
        client.keyspaces.fail(
          number,
          error instanceof ShaleError ? error : new ShaleError("IO", `shaledb: ${String(error)}`),
        );
      }
    }
  }

  /** The packed operations (engine keyspace numbers) of a run of writes, and whether any asked for `sync`. */
  static #merge(
    client: ClientResources,
    requests: readonly RequestMessage[],
    extra: Uint8Array | undefined,
  ): [Uint8Array, boolean] {
    const ops = new PackedOps();
    const parts: Uint8Array[] = [];
    let sync = false;
    for (const [, op, args] of requests) {
      if (op === "put") {
        const [ks, key, value, s] = args as Args<"put">;
        ops.add(OP_PUT, client.keyspaces.engine(ks), key, value);
        sync ||= s;
      } else if (op === "delete") {
        const [ks, key, s] = args as Args<"delete">;
        ops.add(OP_DELETE, client.keyspaces.engine(ks), key);
        sync ||= s;
      } else if (op === "write") {
        const [packed, s] = args as Args<"write">;
        parts.push(client.keyspaces.remap(packed));
        sync ||= s;
      } else {
        throw invalidArgument(`${op} is not a write`);
      }
    }
    parts.push(ops.bytes());
    if (extra !== undefined) {
      parts.push(extra);
    }
    if (parts.length === 1) {
      return [parts[0] as Uint8Array, sync];
    }
    const merged = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      merged.set(part, at);
      at += part.length;
    }
    return [merged, sync];
  }

  // Context: what the rows work with.

  openKeyspace(name: string): number {
    let ks = this.#byName.get(name);
    if (ks === undefined) {
      const store = this.db.keyspace(name, { keyEncoding: "binary", valueEncoding: "binary" });
      ks = (store as unknown as StoreImpl).keyspaceId;
      this.#stores.set(ks, store as unknown as StoreImpl);
      this.#byName.set(name, ks);
    }
    return ks;
  }

  store(client: ClientResources, ks: number): StoreImpl {
    const store = this.#stores.get(client.keyspaces.engine(ks));
    if (store === undefined) {
      throw invalidArgument(`no keyspace number ${ks} is open`);
    }
    return store;
  }

  txKeyspace(client: ClientResources, ks: number): StoreImpl | undefined {
    return ks === 0 ? undefined : this.store(client, ks);
  }

  read(client: ClientResources, id: number | undefined): ReadOptions {
    if (id === undefined || id === 0) {
      return {};
    }
    const snapshot = client.snapshots.get(id);
    if (snapshot === undefined) {
      throw closedError("the snapshot");
    }
    return { snapshot };
  }

  range(client: ClientResources, range: WireRange): IteratorOptions<unknown> {
    const { snapshot, ...bounds } = range;
    return { ...bounds, reverse: checkReverse(range.reverse), ...this.read(client, snapshot) };
  }

  transaction(client: ClientResources, id: number): OpenTransaction {
    const open = client.transactions.get(id);
    if (open === undefined) {
      throw closedError("the transaction (committed or rolled back)");
    }
    return open;
  }

  queue(name: string, group: string): SyncQueueImpl {
    const key = `${name}\u0000${group}`;
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = group === "" ? openQueue(this.db.db, name, undefined, binary) : this.queue(name, "").groupHandle(group, false);
      this.#queues.set(key, queue);
    }
    return queue;
  }

  setQueue(name: string, group: string | undefined, handle: SyncQueueImpl | undefined): void {
    for (const key of [...this.#queues.keys()]) {
      const [n, g] = key.split("\u0000");
      if (n === name && (group === undefined || g === group)) this.#queues.delete(key);
    }
    if (handle !== undefined) {
      this.#queues.set(`${name}\u0000${group ?? ""}`, handle);
    }
  }

  topic(name: string): SyncTopicImpl {
    let topic = this.#topics.get(name);
    if (topic === undefined) {
      topic = openTopic(this.db.db, name, undefined, binary, binary);
      this.#topics.set(name, topic);
    }
    return topic;
  }

  setTopic(name: string, handle: SyncTopicImpl | undefined): void {
    if (handle === undefined) {
      this.#topics.delete(name);
    } else {
      this.#topics.set(name, handle);
    }
  }

  nextHandle(): number {
    return this.#nextHandle++;
  }
}
