/**
 * The server's side of the requests (`../transport/requests.ts`): each one carried out on the
 * open database (the synchronous API), with bytes for keys and values. Iterators, snapshots,
 * transactions and keyspace numbers belong to the client that opened them
 * (`client-resources.ts`).
 *
 * @module
 */
import { checkReverse } from "../encoding/bounds.js";
import { keyCodec, valueCodec } from "../encoding/codec.js";
import { ShaleError, closedError, invalidArgument } from "../errors.js";
import { NativeIterator } from "../engine/native-iterator.js";
import { OP_DELETE, OP_PUT, PackedOps } from "../encoding/packed-ops.js";
import type { SnapshotImpl } from "../engine/snapshot.js";
import type { StoreImpl } from "../engine/store.js";
import { SyncDatabaseImpl } from "../engine/sync-database.js";
import type { SyncTransactionImpl } from "../engine/transaction.js";
import { writePackedBytes, writePackedIds } from "../engine/write-packed.js";
import { openQueue, READ_PEEK, type SyncQueueImpl } from "../engine/queue.js";
import { Later, waitForItems } from "./queue-waits.js";
import { readChanges } from "../engine/changes.js";
import { changesReadArguments } from "../arguments/change-options.js";
import { openTopic, type SyncTopicImpl } from "../engine/topic.js";
import type { IteratorOptions, KeyEncoding, ReadOptions, Stats, ValueEncoding } from "../types.js";
import type { ClientResources, OpenTransaction } from "./client-resources.js";
import type {
  Args,
  KeyspaceDeclaration,
  Op,
  RequestMessage,
  Result,
  WireRange,
} from "../transport/requests.js";

const bytes = keyCodec("binary");

/** The writes: {@link Executor.commitWrites} applies any run of them as one atomic batch. */
export const WRITES: ReadonlySet<Op> = new Set<Op>(["put", "delete", "write"]);

/** What the server's host provides beyond the database itself (browsers: their OPFS pool). */
export interface ServerServices {
  /** Runs `job` on the server's queue, alone, after what is queued (waiting queue reads). */
  run(job: () => void): void;
  /** Returns the sequence number the copy is consistent at. */
  checkpoint(destination: string): number | Promise<number>;
  exportArchive(): Blob;
  stats(): Stats | Promise<Stats>;
  debugPanic(message: string): void;
  debugLoseReplies(client: ClientResources): void;
  debugFailMergedWrite(code: ShaleError["code"]): void;
}

/** A request's outcome: its result, at once or later (`Later`: the server replies when it settles). */
export type Outcome<O extends Op> = Result<O> | Promise<Result<O>> | Later<Result<O>>;

type Handler<O extends Op> = (client: ClientResources, ...args: Args<O>) => Outcome<O>;

export class Executor {
  readonly #db: SyncDatabaseImpl;
  readonly #services: ServerServices;
  /** Engine keyspaces by engine number (0: the default one) and by name. */
  readonly #stores = new Map<number, StoreImpl>();
  readonly #byName = new Map<string, number>();
  /** Engine topic handles by name, opened on first use (with their stored options). */
  readonly #topics = new Map<string, SyncTopicImpl>();
  /** Engine queue handles by `name NUL group`, opened on first use (with their stored options). */
  readonly #queues = new Map<string, SyncQueueImpl>();
  #nextHandle = 1;

  constructor(db: SyncDatabaseImpl, services: ServerServices) {
    this.#db = db;
    this.#services = services;
    this.#stores.set(0, db);
  }

  /**
   * Applies writes `requests` (`put`, `delete`, `write`: {@link WRITES}) of `client` as one
   * atomic batch — one log record, one file write — with `extra` packed operations (engine
   * keyspace numbers) appended to it. Each request's own effect stays atomic.
   *
   * Throws the batch's error. `INVALID_ARGUMENT` is found before anything is committed (a bad
   * keyspace number, an oversize key): nothing was written. After any other error (`IO`,
   * `QUOTA`, `POISONED`, `PANIC`) whether the batch was written is unknown.
   */
  commitWrites(client: ClientResources, requests: readonly RequestMessage[], extra?: Uint8Array): void {
    writePackedBytes(this.#db.db, ...Executor.#merge(client, requests, extra));
  }

  /**
   * Binds the keyspace numbers a client declares (it opened them with earlier owners: they
   * exist). One that cannot be opened fails the requests that use it, with that error.
   */
  declare(client: ClientResources, declarations: readonly KeyspaceDeclaration[]): void {
    for (const [number, name] of declarations) {
      try {
        client.keyspaces.bind(number, this.#openKeyspace(name));
      } catch (error) {
        client.keyspaces.fail(
          number,
          error instanceof ShaleError ? error : new ShaleError("IO", `shaledb: ${String(error)}`),
        );
      }
    }
  }

  /** The engine number of keyspace `name`, opened (and created if missing) on first use. */
  #openKeyspace(name: string): number {
    let ks = this.#byName.get(name);
    if (ks === undefined) {
      const store = this.#db.keyspace(name, { keyEncoding: "binary", valueEncoding: "binary" });
      ks = (store as unknown as StoreImpl).keyspaceId;
      this.#stores.set(ks, store as unknown as StoreImpl);
      this.#byName.set(name, ks);
    }
    return ks;
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

  /** The engine handle of queue `name`, consumer group `group` (opened if this server has not yet). */
  #queue(name: string, group: string): SyncQueueImpl {
    const key = `${name}\u0000${group}`;
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      if (typeof name !== "string" || typeof group !== "string") {
        throw invalidArgument("a queue request needs a queue name and a group name");
      }
      queue =
        group === ""
          ? openQueue(this.#db.db, name, undefined, bytes)
          : this.#queue(name, "").groupHandle(group, false);
      this.#queues.set(key, queue);
    }
    return queue;
  }

  /** The engine handle of topic `name` (opened if this server has not yet). */
  #topic(name: string): SyncTopicImpl {
    let topic = this.#topics.get(name);
    if (topic === undefined) {
      if (typeof name !== "string") {
        throw invalidArgument("a topic request needs a topic name");
      }
      topic = openTopic(this.#db.db, name, undefined, bytes, bytes);
      this.#topics.set(name, topic);
    }
    return topic;
  }

  /** Forgets the handles of queue `name` (of group `group`, or all). */
  #forgetQueue(name: string, group?: string): void {
    for (const key of [...this.#queues.keys()]) {
      const [n, g] = key.split("\u0000");
      if (n === name && (group === undefined || g === group)) this.#queues.delete(key);
    }
  }

  /** Carries out request `op` for `client`; throws (or rejects) with the request's error. */
  execute<O extends Op>(client: ClientResources, op: O, args: Args<O>): Outcome<O> {
    const handler = this.#handlers[op] as Handler<O> | undefined;
    if (handler === undefined) {
      throw invalidArgument(`unknown request ${String(op)}`);
    }
    return handler(client, ...args);
  }

  /** The engine keyspace that `client`'s keyspace number `ks` names. */
  #store(client: ClientResources, ks: number): StoreImpl {
    const store = this.#stores.get(client.keyspaces.engine(ks));
    if (store === undefined) {
      throw invalidArgument(`no keyspace number ${ks} is open`);
    }
    return store;
  }

  /** The keyspace argument of a transaction call: `undefined` for the default one. */
  #txKeyspace(client: ClientResources, ks: number): StoreImpl | undefined {
    return ks === 0 ? undefined : this.#store(client, ks);
  }

  /** Read options naming the client's snapshot `id` (none for 0 or absent). */
  #read(client: ClientResources, id: number | undefined): ReadOptions {
    if (id === undefined || id === 0) {
      return {};
    }
    const snapshot = client.snapshots.get(id);
    if (snapshot === undefined) {
      throw closedError("the snapshot");
    }
    return { snapshot };
  }

  #transaction(client: ClientResources, id: number): OpenTransaction {
    const open = client.transactions.get(id);
    if (open === undefined) {
      throw closedError("the transaction (committed or rolled back)");
    }
    return open;
  }

  #range(client: ClientResources, range: WireRange): IteratorOptions<unknown> {
    const { snapshot, ...bounds } = range;
    return { ...bounds, reverse: checkReverse(range.reverse), ...this.#read(client, snapshot) };
  }

  /** Records a failed write into a transaction, then rethrows it. */
  static #intoTransaction(open: OpenTransaction, write: () => void): void {
    try {
      write();
    } catch (error) {
      open.failure ??= error;
      throw error;
    }
  }

  readonly #handlers: { [O in Op]: Handler<O> } = {
    keyspace: (client, name, number) => {
      if (typeof name !== "string" || name === "") {
        throw invalidArgument("a keyspace name must be a non-empty string");
      }
      client.keyspaces.bind(number, this.#openKeyspace(name));
    },
    encodings: (_client, name, keys, values) => {
      if (typeof name !== "string" || name === "") {
        throw invalidArgument("a keyspace name must be a non-empty string");
      }
      // Known encodings only (INVALID_ARGUMENT otherwise): the names are recorded.
      const [k, v] = [keyCodec(keys as KeyEncoding).name, valueCodec(values as ValueEncoding).name];
      SyncDatabaseImpl.checkEncodings(this.#db, name, k, v);
    },
    get: (client, ks, key, snapshot) =>
      this.#store(client, ks).get(key, this.#read(client, snapshot)) as Uint8Array | undefined,
    getMany: (client, ks, keys, snapshot) =>
      this.#store(client, ks).getMany(keys, this.#read(client, snapshot)) as (
        | Uint8Array
        | undefined
      )[],
    has: (client, ks, key, snapshot) =>
      this.#store(client, ks).has(key, this.#read(client, snapshot)),
    put: (client, ks, key, value, sync) => this.#store(client, ks).put(key, value, { sync }),
    delete: (client, ks, key, sync) => this.#store(client, ks).delete(key, { sync }),
    write: (client, ops, sync) => writePackedBytes(this.#db.db, client.keyspaces.remap(ops), sync),
    iterOpen: (client, ks, range, mode, first) => {
      const engine = this.#store(client, ks).keyspaceId;
      const it = new NativeIterator(this.#db.db, engine, this.#range(client, range), bytes);
      const batch = it.fetch(first, mode);
      // Kept when exhausted too (a seek may move it back): the client closes it.
      const id = this.#nextHandle++;
      client.iterators.set(id, it);
      return [id, batch];
    },
    iterNext: (client, id, want, mode) => {
      const it = client.iterators.get(id);
      if (it === undefined) {
        throw closedError("the iterator");
      }
      return it.fetch(want, mode);
    },
    iterSeek: (client, id, target, want, mode) => {
      const it = client.iterators.get(id);
      if (it === undefined) {
        throw closedError("the iterator");
      }
      it.seek(target);
      return it.fetch(want, mode);
    },
    iterClose: (client, id) => {
      client.iterators.get(id)?.close();
      client.iterators.delete(id);
    },
    count: (client, ks, range) => this.#store(client, ks).count(this.#range(client, range)),
    snapshotOpen: (client) => {
      const id = this.#nextHandle++;
      client.snapshots.set(id, this.#db.snapshot() as SnapshotImpl);
      return id;
    },
    snapshotClose: (client, id) => {
      client.snapshots.get(id)?.close();
      client.snapshots.delete(id);
    },
    txOpen: (client) => {
      const id = this.#nextHandle++;
      client.transactions.set(id, {
        tx: this.#db.transaction() as SyncTransactionImpl,
        failure: undefined,
      });
      return id;
    },
    txGet: (client, tx, ks, key) =>
      this.#transaction(client, tx).tx.get(key, this.#txKeyspace(client, ks)) as Uint8Array | undefined,
    txPut: (client, tx, ks, key, value) => {
      const open = this.#transaction(client, tx);
      Executor.#intoTransaction(open, () => open.tx.put(key, value, this.#txKeyspace(client, ks)));
    },
    txDelete: (client, tx, ks, key) => {
      const open = this.#transaction(client, tx);
      Executor.#intoTransaction(open, () => open.tx.delete(key, this.#txKeyspace(client, ks)));
    },
    txPush: (client, tx, name, value, delayMs, ttlMs) => {
      const open = this.#transaction(client, tx);
      const queue = this.#queue(name, "");
      Executor.#intoTransaction(open, () => open.tx.pushEncoded(queue, value, { sync: false, delayMs, ttlMs }));
    },
    txAck: (client, tx, name, group, id, delivery) => {
      const open = this.#transaction(client, tx);
      const queue = this.#queue(name, group);
      Executor.#intoTransaction(open, () => open.tx.ackLease(queue, { id, delivery }));
    },
    txAppend: (client, tx, name, record) => {
      const open = this.#transaction(client, tx);
      const topic = this.#topic(name);
      Executor.#intoTransaction(open, () => open.tx.appendEncoded(topic, record));
    },
    txCommitOffset: (client, tx, name, group, offset) => {
      const open = this.#transaction(client, tx);
      const topic = this.#topic(name);
      Executor.#intoTransaction(open, () => open.tx.commitOffsetChecked(topic, group, offset));
    },
    txCommit: (client, tx, sync) => {
      const open = this.#transaction(client, tx);
      client.transactions.delete(tx);
      if (open.failure !== undefined) {
        open.tx.rollback();
        throw open.failure;
      }
      return open.tx.commit({ sync });
    },
    txRollback: (client, tx) => {
      client.transactions.get(tx)?.tx.rollback();
      client.transactions.delete(tx);
    },
    queueOpen: (_client, name, settings) => {
      this.#forgetQueue(name);
      this.#queues.set(`${name}\u0000`, openQueue(this.#db.db, name, settings, bytes));
    },
    queuePush: (_client, name, values, sync, delayMs, ttlMs) =>
      this.#queue(name, "").pushEncoded(values, { sync, delayMs, ttlMs }),
    queueRead: (client, name, group, mode, max, leaseMs, waitMs, waitId) => {
      const queue = this.#queue(name, group);
      const first = queue.readPacked(mode, max, leaseMs);
      if (first.length > 0 || waitMs <= 0 || mode === READ_PEEK) {
        return first;
      }
      const target = {
        name,
        attempt: () => queue.readPacked(mode, max, leaseMs),
        empty: (items: Uint8Array) => items.length === 0,
        nextWake: () => queue.nextWake(),
      };
      return waitForItems(target, new Uint8Array(0), waitMs, client, waitId, this.#db.db.queueSignals, (job) =>
        this.#services.run(job),
      );
    },
    queueCancelWait: (client, waitId) => {
      if (waitId === undefined) {
        for (const cancel of [...client.waits.values()]) cancel();
      } else {
        client.waits.get(waitId)?.();
      }
    },
    queueAck: (_client, name, group, leases) => {
      if (leases.length > 0) this.#queue(name, group).ackPairs(leases);
    },
    queueRelease: (_client, name, group, id, delivery, delayMs) =>
      this.#queue(name, group).release({ id, delivery }, delayMs < 0 ? undefined : { delayMs }),
    queueExtend: (_client, name, group, id, delivery, leaseMs) =>
      this.#queue(name, group).extend({ id, delivery }, leaseMs),
    queueGroup: (_client, name, group, head) => {
      this.#queues.set(`${name}\u0000${group}`, this.#queue(name, "").groupHandle(group, head));
    },
    queueGroups: (_client, name) => this.#queue(name, "").groups(),
    queueRemoveGroup: (_client, name, group) => {
      this.#forgetQueue(name, group);
      return this.#queue(name, "").removeGroup(group);
    },
    queueStats: (_client, name) => this.#queue(name, "").stats(),
    queueClear: (_client, name) => this.#queue(name, "").clear(),
    queues: () => this.#db.queues(),
    deleteQueue: (_client, name) => {
      this.#forgetQueue(name);
      return this.#db.deleteQueue(name);
    },
    queueWrite: (client, ops, queues, sync, topics) => {
      const targets = queues.map(([name, group]) => this.#queue(name, group));
      const topicTargets = (topics ?? []).map((name) => this.#topic(name));
      const remapped = client.keyspaces.remap(
        ops,
        (index) => {
          const target = targets[index];
          if (target === undefined) {
            throw invalidArgument(`no queue number ${index} in this batch`);
          }
          return target.queueNumber;
        },
        (index) => {
          const target = topicTargets[index];
          if (target === undefined) {
            throw invalidArgument(`no topic number ${index} in this batch`);
          }
          return target.topicNumber;
        },
      );
      return writePackedIds(this.#db.db, remapped, sync, [...targets, ...topicTargets]);
    },
    topicOpen: (_client, name, settings) => {
      this.#topics.set(name, openTopic(this.#db.db, name, settings, bytes, bytes));
    },
    topicAppend: (_client, name, records, sync) => this.#topic(name).appendEncoded(records, sync),
    topicRead: (client, name, from, limit, maxBytes, waitMs, waitId) => {
      const topic = this.#topic(name);
      const first = topic.readPacked(from, limit, maxBytes);
      if (first.length > 0 || waitMs <= 0) {
        return first;
      }
      const target = {
        name,
        attempt: () => topic.readPacked(from, limit, maxBytes),
        empty: (result: Uint8Array) => result.length === 0,
        nextWake: () => undefined,
      };
      return waitForItems(target, new Uint8Array(0), waitMs, client, waitId, this.#db.db.topicSignals, (job) =>
        this.#services.run(job),
      );
    },
    topicLatest: (_client, name, n) => this.#topic(name).latestPacked(n),
    topicResolve: (_client, name, from) => this.#topic(name).resolve(from),
    topicCommit: (_client, name, group, offset) => this.#topic(name).commitChecked(group, offset),
    topicCommitted: (_client, name, group) => this.#topic(name).committed(group) ?? -1,
    topicRemoveGroup: (_client, name, group) => this.#topic(name).removeGroup(group),
    topicApplyRetention: (_client, name) => this.#topic(name).applyRetention(),
    topicStats: (_client, name) => this.#topic(name).stats(),
    topics: () => this.#db.topics(),
    deleteTopic: (_client, name) => {
      this.#topics.delete(name);
      return this.#db.deleteTopic(name);
    },
    flush: () => this.#db.flush(),
    compact: (_client, start, end) =>
      this.#db.compact({
        ...(start === undefined ? {} : { start }),
        ...(end === undefined ? {} : { end }),
      }),
    maintain: (_client, budget) => this.#db.maintain(budget),
    checkpoint: (_client, destination) => this.#services.checkpoint(destination),
    changesRead: (client, since, limit, maxBytes, waitMs, waitId) => {
      const db = this.#db.db;
      const checked = changesReadArguments(since, limit, maxBytes);
      const read = (): Uint8Array => readChanges(db, checked.since, checked.limit, checked.maxBytes);
      const first = read();
      if (first.length > 0 || waitMs <= 0) {
        return first;
      }
      const target = { name: "", attempt: read, empty: (r: Uint8Array) => r.length === 0, nextWake: () => undefined };
      return waitForItems(target, new Uint8Array(0), waitMs, client, waitId, db.commitSignals, (job) =>
        this.#services.run(job),
      );
    },
    sequence: () => this.#db.sequence(),
    catchUp: () => this.#db.catchUp(),
    ackChanges: (_client, cursor, seq) => this.#db.ackChanges(cursor, seq),
    changeCursor: (_client, cursor) => this.#db.changeCursor(cursor) ?? -1,
    removeChangeCursor: (_client, cursor) => this.#db.removeChangeCursor(cursor),
    applyChange: (_client, change, expected) =>
      this.#db.applyChanges(change, expected < 0 ? undefined : { expectedSeq: expected }),
    stats: () => this.#services.stats(),
    export: () => this.#services.exportArchive(),
    debugPanic: (_client, message) => this.#services.debugPanic(message),
    debugLoseReplies: (client) => this.#services.debugLoseReplies(client),
    debugFailMergedWrite: (_client, code) => this.#services.debugFailMergedWrite(code),
  };
}
