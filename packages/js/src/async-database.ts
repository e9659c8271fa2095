/**
 * The Promise API over the synchronous one (Node: `open`). Every call runs synchronously and
 * settles its promise at once; the shape is what browsers get from their worker-backed
 * implementation, so code moves between the two unchanged.
 *
 * @module
 */
import type { SyncDatabaseImpl } from "./engine/sync-database.js";
import { settle } from "./api/settle.js";
import { runTransaction } from "./api/transact.js";
import type { StoreImpl } from "./engine/store.js";
import type {
  AsyncEntryIterator,
  Batch,
  BatchOperation,
  Database,
  EncodingOptions,
  IteratorOptions,
  KeyEncoding,
  KeyOf,
  Keyspace,
  KeyspaceRef,
  ReadOptions,
  Snapshot,
  Stats,
  SyncBatch,
  SyncEntryIterator,
  SyncTransaction,
  Transaction,
  ValueEncoding,
  ValueOf,
  WriteOptions,
} from "./types.js";


class AsyncIterator<T> implements AsyncEntryIterator<T> {
  constructor(readonly inner: SyncEntryIterator<T>) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    return settle(() => this.inner.next() as IteratorResult<T, undefined>);
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.inner.close();
    return Promise.resolve({ done: true, value: undefined });
  }

  close(): Promise<void> {
    return settle(() => this.inner.close());
  }

  all(): Promise<T[]> {
    return settle(() => {
      try {
        return [...this.inner];
      } finally {
        this.inner.close();
      }
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Reads and writes of one keyspace, as promises. */
class AsyncStore implements Keyspace<unknown, unknown> {
  constructor(readonly store: StoreImpl) {}

  get name(): string {
    return this.store.name;
  }

  get(key: unknown, options?: ReadOptions): Promise<unknown> {
    return settle(() => this.store.get(key, options));
  }

  getMany(keys: readonly unknown[], options?: ReadOptions): Promise<unknown[]> {
    return settle(() => this.store.getMany(keys, options));
  }

  has(key: unknown, options?: ReadOptions): Promise<boolean> {
    return settle(() => this.store.has(key, options));
  }

  put(key: unknown, value: unknown, options?: WriteOptions): Promise<void> {
    return settle(() => this.store.put(key, value, options));
  }

  delete(key: unknown, options?: WriteOptions): Promise<void> {
    return settle(() => this.store.delete(key, options));
  }

  deleteRange(range: { gte: unknown; lt: unknown }, options?: WriteOptions): Promise<void> {
    return settle(() => this.store.deleteRange(range, options));
  }

  iterator(options?: IteratorOptions<unknown>): AsyncEntryIterator<[unknown, unknown]> {
    return new AsyncIterator(this.store.iterator(options));
  }

  keys(options?: IteratorOptions<unknown>): AsyncEntryIterator<unknown> {
    return new AsyncIterator(this.store.keys(options));
  }

  values(options?: IteratorOptions<unknown>): AsyncEntryIterator<unknown> {
    return new AsyncIterator(this.store.values(options));
  }

  count(options?: IteratorOptions<unknown>): Promise<number> {
    return settle(() => this.store.count(options));
  }
}

class AsyncBatch implements Batch<unknown, unknown> {
  constructor(readonly inner: SyncBatch<unknown, unknown>) {}

  put(key: unknown, value: unknown, keyspace?: KeyspaceRef<unknown, unknown>): this {
    this.inner.put(key, value, keyspace as KeyspaceRef<unknown, unknown>);
    return this;
  }

  delete(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): this {
    this.inner.delete(key, keyspace as KeyspaceRef<unknown, unknown>);
    return this;
  }

  deleteRange(range: { gte: unknown; lt: unknown }, keyspace?: KeyspaceRef<unknown, unknown>): this {
    this.inner.deleteRange(range, keyspace as KeyspaceRef<unknown, unknown>);
    return this;
  }

  get length(): number {
    return this.inner.length;
  }

  write(options?: WriteOptions): Promise<void> {
    return settle(() => this.inner.write(options));
  }

  clear(): void {
    this.inner.clear();
  }
}

class AsyncTransaction implements Transaction<unknown, unknown> {
  constructor(readonly inner: SyncTransaction<unknown, unknown>) {}

  get(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): Promise<unknown> {
    return settle(() => this.inner.get(key, keyspace as KeyspaceRef<unknown, unknown>));
  }

  put(key: unknown, value: unknown, keyspace?: KeyspaceRef<unknown, unknown>): void {
    this.inner.put(key, value, keyspace as KeyspaceRef<unknown, unknown>);
  }

  delete(key: unknown, keyspace?: KeyspaceRef<unknown, unknown>): void {
    this.inner.delete(key, keyspace as KeyspaceRef<unknown, unknown>);
  }

  commit(options?: WriteOptions): Promise<void> {
    return settle(() => this.inner.commit(options));
  }

  rollback(): Promise<void> {
    return settle(() => this.inner.rollback());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.rollback();
  }
}

export class AsyncDatabase extends AsyncStore implements Database<unknown, unknown> {
  constructor(readonly sync: SyncDatabaseImpl) {
    super(sync);
  }

  get location(): string {
    return this.sync.location;
  }

  get closed(): boolean {
    return this.sync.closed;
  }

  keyspace<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">(
    name: string,
    options?: EncodingOptions<KE, VE>,
  ): Promise<Keyspace<KeyOf<KE>, ValueOf<VE>>> {
    return settle(
      () =>
        new AsyncStore(this.sync.keyspace(name, options) as unknown as StoreImpl) as unknown as Keyspace<
          KeyOf<KE>,
          ValueOf<VE>
        >,
    );
  }

  batch(): Batch<unknown, unknown>;
  batch(operations: readonly BatchOperation<unknown, unknown>[], options?: WriteOptions): Promise<void>;
  batch(
    operations?: readonly BatchOperation<unknown, unknown>[],
    options?: WriteOptions,
  ): Batch<unknown, unknown> | Promise<void> {
    if (operations === undefined) {
      return new AsyncBatch(this.sync.batch());
    }
    return settle(() => this.sync.batch(operations, options));
  }

  snapshot(): Promise<Snapshot> {
    return settle(() => this.sync.snapshot());
  }

  transaction(): Promise<Transaction<unknown, unknown>> {
    return settle(() => new AsyncTransaction(this.sync.transaction()));
  }

  transact<T>(
    body: (tx: Transaction<unknown, unknown>) => Promise<T>,
    options?: WriteOptions & { retries?: number },
  ): Promise<T> {
    return runTransaction(() => this.transaction(), body, options);
  }

  flush(): Promise<void> {
    return settle(() => this.sync.flush());
  }

  compact(range?: { start?: unknown; end?: unknown }): Promise<void> {
    return settle(() => this.sync.compact(range));
  }

  maintain(budgetBytes?: number): Promise<boolean> {
    return settle(() => this.sync.maintain(budgetBytes));
  }

  checkpoint(destination: string): Promise<void> {
    return settle(() => this.sync.checkpoint(destination));
  }

  stats(): Promise<Stats> {
    return settle(() => this.sync.stats());
  }

  close(): Promise<void> {
    return settle(() => this.sync.close());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
