/**
 * Requests of optimistic transactions, which live on the server that opened them. A write into
 * a transaction that fails is remembered: the commit then fails with it (`OpenTransaction`).
 *
 * @module
 */
import { MAINTENANCE_EVERY } from "../../engine/maintenance.js";
import type { SyncTransactionImpl } from "../../engine/transaction.js";
import type { OpenTransaction } from "../client-resources.js";
import { row } from "./row.js";
import { bool, bytes, count, int, str } from "./wire-checks.js";

/** Runs a write into a transaction, recording its failure (then rethrown). */
function into(open: OpenTransaction, write: () => void): void {
  try {
    write();
  } catch (error) {
    open.failure ??= error;
    throw error;
  }
}

export const transactionOps = {
  txOpen: row({
    args: [],
    run: (x, client) => {
      const id = x.nextHandle();
      client.transactions.set(id, { tx: x.db.transaction() as SyncTransactionImpl, failure: undefined });
      return id;
    },
  }),
  txGet: row({
    args: [count, count, bytes],
    run: (x, client, tx, ks, key) =>
      x.transaction(client, tx).tx.get(key, x.txKeyspace(client, ks)) as Uint8Array | undefined,
  }),
  txPut: row({
    args: [count, count, bytes, bytes],
    run: (x, client, tx, ks, key, value) => {
      const open = x.transaction(client, tx);
      into(open, () => open.tx.put(key, value, x.txKeyspace(client, ks)));
    },
  }),
  txDelete: row({
    args: [count, count, bytes],
    run: (x, client, tx, ks, key) => {
      const open = x.transaction(client, tx);
      into(open, () => open.tx.delete(key, x.txKeyspace(client, ks)));
    },
  }),
  /** Adds a push to queue `name` (delay and ttl: -1 for none). */
  txPush: row({
    args: [count, str, bytes, int, int],
    run: (x, client, tx, name, value, delayMs, ttlMs) => {
      const open = x.transaction(client, tx);
      const queue = x.queue(name, "");
      into(open, () => open.tx.pushEncoded(queue, value, { sync: false, delayMs, ttlMs }));
    },
  }),
  /** Adds an ack of a lease of queue `name`, group `group`. */
  txAck: row({
    args: [count, str, str, count, count],
    run: (x, client, tx, name, group, id, delivery) => {
      const open = x.transaction(client, tx);
      const queue = x.queue(name, group);
      into(open, () => open.tx.ackLease(queue, { id, delivery }));
    },
  }),
  /** Adds an append to topic `name` (one packed record). */
  txAppend: row({
    args: [count, str, bytes],
    run: (x, client, tx, name, record) => {
      const open = x.transaction(client, tx);
      const topic = x.topic(name);
      into(open, () => open.tx.appendEncoded(topic, record));
    },
  }),
  /** Adds an offset commit of group `group` of topic `name`. */
  txCommitOffset: row({
    args: [count, str, str, count],
    run: (x, client, tx, name, group, offset) => {
      const open = x.transaction(client, tx);
      const topic = x.topic(name);
      into(open, () => open.tx.commitOffsetChecked(topic, group, offset));
    },
  }),
  /** Commits; resolves with the ids of its queue pushes and offsets of its topic appends. */
  txCommit: row({
    args: [count, bool],
    createsFiles: true,
    // A commit's bytes are unknown: counted as one maintenance unit.
    bytes: () => MAINTENANCE_EVERY,
    run: (x, client, tx, sync) => {
      const open = x.transaction(client, tx);
      client.transactions.delete(tx);
      if (open.failure !== undefined) {
        open.tx.rollback();
        throw open.failure;
      }
      return open.tx.commit({ sync });
    },
  }),
  txRollback: row({
    args: [count],
    run: (_x, client, tx) => {
      client.transactions.get(tx)?.tx.rollback();
      client.transactions.delete(tx);
    },
  }),
};
