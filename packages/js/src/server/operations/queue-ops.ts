/**
 * Requests on durable queues. Queues are named by name (and consumer group: `""` the default
 * one) in every request, so that any server (a browser tab that took the database over) serves
 * them; a server opens a queue it has not opened yet with its stored options.
 *
 * @module
 */
import { invalidArgument } from "../../errors.js";
import { keyCodec } from "../../encoding/codec.js";
import { READ_PEEK } from "../../encoding/wire.js";
import { openQueue } from "../../engine/queue.js";
import { writePackedIds } from "../../engine/write-packed.js";
import { readOrWait } from "./waiting-read.js";
import { row } from "./row.js";
import {
  bool,
  bytes,
  bytesList,
  count,
  floats,
  int,
  optionalCount,
  optionalStrList,
  queueSettings,
  queueTargets,
  readMode,
  str,
} from "./wire-checks.js";

const binary = keyCodec("binary");

export const queueOps = {
  /** Opens queue `name`: with `settings` storing them, without only creating it if missing. */
  queueOpen: row({
    args: [str, queueSettings],
    createsFiles: true,
    run: (x, _client, name, settings) => x.setQueue(name, "", openQueue(x.db.db, name, settings, binary)),
  }),
  /** Pushes values (delay and ttl: -1 for none); resolves with their ids. */
  queuePush: row({
    args: [str, bytesList, bool, int, int],
    createsFiles: true,
    run: (x, _client, name, values, sync, delayMs, ttlMs) =>
      x.queue(name, "").pushEncoded(values, { sync, delayMs, ttlMs }),
  }),
  /**
   * A take, reservation or peek of up to `max` items (`../../encoding/queue-items.ts`), waiting
   * up to `waitMs` for the first (`./waiting-read.ts`); `waitId` names the wait for
   * `queueCancelWait`.
   */
  queueRead: row({
    args: [str, str, readMode, count, count, count, count],
    createsFiles: true,
    run: (x, client, name, group, mode, max, leaseMs, waitMs, waitId) => {
      const queue = x.queue(name, group);
      return readOrWait(x, client, {
        attempt: () => queue.readPacked(mode, max, leaseMs),
        waitMs: mode === READ_PEEK ? 0 : waitMs,
        waitId,
        signals: x.db.db.queueSignals,
        name,
        nextWake: () => queue.nextWake(),
      });
    },
  }),
  /** Ends wait `waitId` of this client (it resolves with nothing); none: every wait of this client. */
  queueCancelWait: row({
    args: [optionalCount],
    run: (_x, client, waitId) => {
      if (waitId === undefined) {
        for (const cancel of [...client.waits.values()]) cancel();
      } else {
        client.waits.get(waitId)?.();
      }
    },
  }),
  /** Acks leases (id, delivery pairs). */
  queueAck: row({
    args: [str, str, floats],
    createsFiles: true,
    run: (x, _client, name, group, leases) => {
      if (leases.length > 0) x.queue(name, group).ackPairs(leases);
    },
  }),
  queueRelease: row({
    args: [str, str, count, count, int],
    createsFiles: true,
    run: (x, _client, name, group, id, delivery, delayMs) =>
      x.queue(name, group).release({ id, delivery }, delayMs < 0 ? undefined : { delayMs }),
  }),
  queueExtend: row({
    args: [str, str, count, count, count],
    createsFiles: true,
    run: (x, _client, name, group, id, delivery, leaseMs) => x.queue(name, group).extend({ id, delivery }, leaseMs),
  }),
  queueGroup: row({
    args: [str, str, bool],
    createsFiles: true,
    run: (x, _client, name, group, head) => x.setQueue(name, group, x.queue(name, "").groupHandle(group, head)),
  }),
  queueGroups: row({ args: [str], run: (x, _client, name) => x.queue(name, "").groups() }),
  queueRemoveGroup: row({
    args: [str, str],
    createsFiles: true,
    run: (x, _client, name, group) => {
      x.setQueue(name, group, undefined);
      return x.queue(name, "").removeGroup(group);
    },
  }),
  queueStats: row({ args: [str], run: (x, _client, name) => x.queue(name, "").stats() }),
  queueClear: row({ args: [str], createsFiles: true, run: (x, _client, name) => x.queue(name, "").clear() }),
  queues: row({ args: [], run: (x) => x.db.queues() }),
  deleteQueue: row({
    args: [str],
    createsFiles: true,
    run: (x, _client, name) => {
      x.setQueue(name, undefined, undefined);
      return x.db.deleteQueue(name);
    },
  }),
  /**
   * Packed batch operations with queue pushes and acks (and topic appends and offset commits),
   * applied atomically; their queue numbers index `queues` (name, group), their topic numbers
   * `topics`. Resolves with the pushes' ids and the appends' offsets, in order.
   */
  queueWrite: row({
    args: [bytes, queueTargets, bool, optionalStrList],
    createsFiles: true,
    run: (x, client, ops, queues, sync, topics) => {
      const targets = queues.map(([name, group]) => x.queue(name, group));
      const topicTargets = (topics ?? []).map((name) => x.topic(name));
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
      return writePackedIds(x.db.db, remapped, sync);
    },
  }),
};
