/**
 * What one client (a page, or Node's Promise API) has open on a server: its keyspace numbers,
 * iterators, snapshots and transactions, released when it leaves.
 *
 * @module
 */
import type { NativeIterator } from "../engine/native-iterator.js";
import type { SnapshotImpl } from "../engine/snapshot.js";
import type { SyncTransactionImpl } from "../engine/transaction.js";
import { ClientKeyspaces } from "./client-keyspaces.js";

/** A transaction, and the first failure of a write into it (its commit then fails with that). */
export interface OpenTransaction {
  tx: SyncTransactionImpl;
  failure: unknown;
}

/** What one client has open on the server. */
export class ClientResources {
  /** Its keyspace numbers, bound to the engine's. */
  readonly keyspaces = new ClientKeyspaces();
  /** Tests only (`debugLoseReplies`): drop the replies to the client's next message. */
  loseNextReplies = false;
  readonly iterators = new Map<number, NativeIterator>();
  readonly snapshots = new Map<number, SnapshotImpl>();
  readonly transactions = new Map<number, OpenTransaction>();
  /** Its waiting queue reads, by the client's wait id: each one's cancel (it then resolves empty). */
  readonly waits = new Map<number, () => void>();

  constructor(
    /** The client's id (a page's `Connection.client`). */
    readonly id: string,
    /**
     * Whether its writes are recorded as applied (`applied-writes.ts`): a page served from
     * another tab, which may lose replies and send requests again to the next owner.
     */
    readonly tracked: boolean,
  ) {}

  /** Releases everything the client still has open. */
  closeAll(): void {
    for (const cancel of [...this.waits.values()]) cancel();
    this.waits.clear();
    for (const it of this.iterators.values()) it.close();
    for (const { tx } of this.transactions.values()) tx.rollback();
    for (const snapshot of this.snapshots.values()) snapshot.close();
    this.iterators.clear();
    this.transactions.clear();
    this.snapshots.clear();
  }
}
