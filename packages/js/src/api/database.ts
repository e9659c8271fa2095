/**
 * The Promise API (`open`): the same `Database` in Node and in browsers, written once over a
 * {@link Transport} to wherever the engine runs.
 *
 * @module
 */
import { compactRange, maintainBudget, pathArgument } from "../arguments/checks.js";
import { keyspaceCodecs } from "../arguments/keyspace-options.js";
import type { Codec } from "../encoding/codec.js";
import { ownBytes } from "../encoding/own-bytes.js";
import { packOperations } from "../encoding/packed-ops.js";
import { closedError, invalidArgument } from "../errors.js";
import { queueArguments, queueName } from "../arguments/queue-options.js";
import { valueCodec } from "../encoding/codec.js";
import type { PackingQueue } from "../encoding/packed-ops.js";
import { PromiseQueue } from "./queue.js";
import { Waits } from "./waits.js";
import { PromiseTopic } from "./topic.js";
import { topicArguments, topicName } from "../arguments/topic-options.js";
import { keyCodec } from "../encoding/codec.js";
import type { PackingTopic } from "../encoding/packed-ops.js";
import type { Transport } from "../transport/transport.js";
import type {
  ApplyChangeOptions,
  ApplyChangeResult,
  BatchOptions,
  Change,
  ChangesFollowOptions,
  CheckpointResult,
  Batch,
  BatchOperation,
  Database,
  EncodingOptions,
  KeyEncoding,
  JsonEncoded,
  KeyOf,
  Keyspace,
  Queue,
  QueueOptions,
  Snapshot,
  Stats,
  Topic,
  TopicOptions,
  Transaction,
  ValueEncoding,
  ValueOf,
  WriteOptions,
} from "../types.js";
import { PromiseBatch } from "./batch.js";
import { changeFeed } from "./changes.js";
import { applyChangeArguments, batchOptions, cursorName, seqArgument } from "../arguments/change-options.js";
import { settle } from "./settle.js";
import { PromiseSnapshot } from "./snapshot.js";
import { PromiseStore, storeOf } from "./store.js";
import { runTransaction } from "./transact.js";
import { PromiseTransaction } from "./transaction.js";

export class PromiseDatabase extends PromiseStore implements Database<unknown, unknown> {
  /** `keys` and `values`: the codecs of the default keyspace. */
  constructor(transport: Transport, keys: Codec<unknown>, values: Codec<unknown>) {
    super(transport, 0, "default", keys, values, new Waits());
  }

  get location(): string {
    return this.transport.location;
  }

  /**
   * Checks (and records, if none are) the default keyspace's encodings, right after the open;
   * on `ENCODING_MISMATCH` (or any failure) closes `db` and throws. (Static: not a method of
   * the public object.)
   */
  static async checkEncodings(db: PromiseDatabase): Promise<void> {
    try {
      await db.transport.request("encodings", ["default", db.keyCodec.name, db.valueCodec.name]);
    } catch (error) {
      await db.transport.close().catch(() => undefined);
      throw error;
    }
  }

  get closed(): boolean {
    return this.transport.closed;
  }

  keyspace<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
    name: string,
    options?: EncodingOptions<KE, VE>,
  ): Promise<Keyspace<KeyOf<KE>, ValueOf<VE>>>;
  keyspace<V, KE extends KeyEncoding = "utf8">(
    name: string,
    options: JsonEncoded<EncodingOptions<KE, "json">>,
  ): Promise<Keyspace<KeyOf<KE>, V>>;
  keyspace(name: string, options?: EncodingOptions<KeyEncoding, ValueEncoding>): Promise<Keyspace<unknown, unknown>> {
    return settle(async () => {
      const { keys, values } = keyspaceCodecs(name, options);
      // Both go in one message (requests of one turn go together).
      const [, id] = await Promise.all([
        this.transport.request("encodings", [name, keys.name, values.name]),
        this.transport.openKeyspace(name),
      ]);
      return new PromiseStore(this.transport, id, name, keys, values, this.waits) as unknown as Keyspace<unknown, unknown>;
    });
  }

  batch(): Batch<unknown, unknown>;
  batch(operations: readonly BatchOperation<unknown, unknown>[], options?: BatchOptions): Promise<number[]>;
  batch(
    operations?: readonly BatchOperation<unknown, unknown>[],
    options?: BatchOptions,
  ): Batch<unknown, unknown> | Promise<number[]> {
    if (operations === undefined) {
      if (this.transport.closed) {
        throw closedError("the database");
      }
      return new PromiseBatch(this);
    }
    return settle(() => {
      // Queues of this batch, numbered in order of first use: the server maps them by name.
      const queues: PromiseQueue[] = [];
      const numbers = new Map<PromiseQueue, PackingQueue>();
      const queueOf = (queue: unknown): PackingQueue => {
        if (!(queue instanceof PromiseQueue) || queue.transport !== this.transport) {
          throw invalidArgument("a batch operation's queue must be a queue opened on this database");
        }
        let packing = numbers.get(queue);
        if (packing === undefined) {
          packing = { queueNumber: queues.length, encodeValue: (v) => queue.encodeValue(v) };
          numbers.set(queue, packing);
          queues.push(queue);
        }
        return packing;
      };
      // Topics likewise.
      const topics: PromiseTopic[] = [];
      const topicNumbers = new Map<PromiseTopic, PackingTopic>();
      const topicOf = (topic: unknown): PackingTopic => {
        if (!(topic instanceof PromiseTopic) || topic.transport !== this.transport) {
          throw invalidArgument("a batch operation's topic must be a topic opened on this database");
        }
        let packing = topicNumbers.get(topic);
        if (packing === undefined) {
          packing = {
            topicNumber: topics.length,
            packRecord: (v, k, h, what) => topic.packRecord(v, k, h, what),
          };
          topicNumbers.set(topic, packing);
          topics.push(topic);
        }
        return packing;
      };
      const { sync, meta } = batchOptions(options);
      const packed = packOperations((keyspace) => storeOf(this, keyspace), operations, queueOf, topicOf, meta);
      if (packed.count === 0) {
        return this.transport.closed ? Promise.reject(closedError("the database")) : Promise.resolve([]);
      }
      if (packed.queueOps === 0) {
        return this.transport.request("write", [packed.bytes().slice(), sync]).then(() => []);
      }
      const names = queues.map((q): [string, string] => [q.name, q.groupName]);
      const topicNames = topics.map((t) => t.name);
      return this.transport.request("queueWrite", [packed.bytes().slice(), names, sync, topicNames]);
    });
  }

  queue<VE extends ValueEncoding = "utf8">(name: string, options?: QueueOptions<VE>): Promise<Queue<ValueOf<VE>>> {
    return settle(async () => {
      const checked = queueArguments(name, options);
      await this.transport.request("queueOpen", [checked.name, checked.settings]);
      const codec = valueCodec(checked.valueEncoding);
      return new PromiseQueue(this.transport, this.waits, checked.name, "", codec) as unknown as Queue<ValueOf<VE>>;
    });
  }

  queues(): Promise<string[]> {
    return this.transport.request("queues", []);
  }

  deleteQueue(name: string): Promise<boolean> {
    return settle(() => this.transport.request("deleteQueue", [queueName(name)]));
  }

  topic<VE extends ValueEncoding = "utf8", KE extends KeyEncoding = "utf8">(
    name: string,
    options?: TopicOptions<VE, KE>,
  ): Promise<Topic<ValueOf<VE>, KeyOf<KE>>> {
    return settle(async () => {
      const c = topicArguments(name, options);
      await this.transport.request("topicOpen", [c.name, c.settings]);
      const topic = new PromiseTopic(this.transport, this.waits, c.name, keyCodec(c.keyEncoding), valueCodec(c.valueEncoding));
      return topic as unknown as Topic<ValueOf<VE>, KeyOf<KE>>;
    });
  }

  topics(): Promise<string[]> {
    return this.transport.request("topics", []);
  }

  deleteTopic(name: string): Promise<boolean> {
    return settle(() => this.transport.request("deleteTopic", [topicName(name)]));
  }

  snapshot(): Promise<Snapshot> {
    return settle(async () => {
      const [id, server] = await this.transport.requestServed("snapshotOpen", []);
      return new PromiseSnapshot(this.transport, id, server);
    });
  }

  transaction(): Promise<Transaction<unknown, unknown>> {
    return settle(async () => {
      const [id, server] = await this.transport.requestServed("txOpen", []);
      return new PromiseTransaction(this, id, server);
    });
  }

  transact<T>(
    body: (tx: Transaction<unknown, unknown>) => Promise<T>,
    options?: WriteOptions & { retries?: number },
  ): Promise<T> {
    return runTransaction(() => this.transaction(), body, options);
  }

  flush(): Promise<void> {
    return this.transport.request("flush", []);
  }

  compact(range?: { start?: unknown; end?: unknown }): Promise<void> {
    return settle(() => {
      const bounds = compactRange(range);
      const start = bounds.start === undefined ? undefined : ownBytes(this.keyCodec.encode(bounds.start, "start"), bounds.start);
      const end = bounds.end === undefined ? undefined : ownBytes(this.keyCodec.encode(bounds.end, "end"), bounds.end);
      return this.transport.request("compact", [start, end]);
    });
  }

  maintain(budgetBytes = 1 << 20): Promise<boolean> {
    return settle(() => this.transport.request("maintain", [maintainBudget(budgetBytes)]));
  }

  checkpoint(destination: string): Promise<CheckpointResult> {
    return settle(async () => {
      pathArgument(destination, "the checkpoint's destination");
      return { seq: await this.transport.request("checkpoint", [destination]) };
    });
  }

  changes(options?: ChangesFollowOptions): AsyncIterableIterator<Change> {
    return changeFeed(this.transport, this.waits, options);
  }

  export(): Promise<Blob> {
    return this.transport.request("export", []);
  }

  catchUp(): Promise<void> {
    return this.transport.request("catchUp", []);
  }

  sequence(): Promise<number> {
    return this.transport.request("sequence", []);
  }

  ackChanges(cursor: string, seq: number): Promise<void> {
    return settle(() =>
      this.transport.request("ackChanges", [cursorName(cursor), seqArgument(seq, "the sequence number")]),
    );
  }

  changeCursor(cursor: string): Promise<number | undefined> {
    return settle(async () => {
      const seq = await this.transport.request("changeCursor", [cursorName(cursor)]);
      return seq < 0 ? undefined : seq;
    });
  }

  removeChangeCursor(cursor: string): Promise<boolean> {
    return settle(() => this.transport.request("removeChangeCursor", [cursorName(cursor)]));
  }

  applyChanges(change: Change | Uint8Array, options?: ApplyChangeOptions): Promise<ApplyChangeResult> {
    return settle(() => {
      const { bytes, expected } = applyChangeArguments(change, options);
      return this.transport.request("applyChange", [bytes.slice(), expected]);
    });
  }

  stats(): Promise<Stats> {
    return this.transport.request("stats", []);
  }

  close(): Promise<void> {
    if (this.waits.open.size > 0 && !this.transport.closed) {
      // Waiting queue reads end now (with nothing), not when their waitMs runs out.
      this.transport.request("queueCancelWait", [undefined]).catch(() => undefined);
    }
    return this.transport.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
