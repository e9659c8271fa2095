/**
 * Requests on topic logs. Topics are named by name in every request, like queues; a server
 * opens a topic it has not opened yet with its stored options.
 *
 * @module
 */
import { keyCodec } from "../../encoding/codec.js";
import { openTopic } from "../../engine/topic.js";
import { readOrWait } from "./waiting-read.js";
import { row } from "./row.js";
import { bool, bytes, count, from, str, topicSettings } from "./wire-checks.js";

const binary = keyCodec("binary");

export const topicOps = {
  /** Opens topic `name`: with `settings` storing them, without only creating it if missing. */
  topicOpen: row({
    args: [str, topicSettings],
    createsFiles: true,
    run: (x, _client, name, settings) => x.setTopic(name, openTopic(x.db.db, name, settings, binary, binary)),
  }),
  /** Appends packed records (`../../encoding/topic-records.ts`); resolves with their offsets. */
  topicAppend: row({
    args: [str, bytes, bool],
    createsFiles: true,
    run: (x, _client, name, records, sync) => x.topic(name).appendEncoded(records, sync),
  }),
  /**
   * Records from `from` (packed with offsets and times), waiting up to `waitMs` for the first
   * when there is none yet (woken by appends); `waitId` names the wait for `queueCancelWait`.
   */
  topicRead: row({
    args: [str, from, count, count, count, count],
    run: (x, client, name, start, limit, maxBytes, waitMs, waitId) => {
      const topic = x.topic(name);
      return readOrWait(x, client, {
        attempt: () => topic.readPacked(start, limit, maxBytes),
        waitMs,
        waitId,
        signals: x.db.db.topicSignals,
        name,
        nextWake: () => undefined,
      });
    },
  }),
  topicLatest: row({ args: [str, count], run: (x, _client, name, n) => x.topic(name).latestPacked(n) }),
  /** The offset `from` names now. */
  topicResolve: row({ args: [str, from], run: (x, _client, name, start) => x.topic(name).resolve(start) }),
  topicCommit: row({
    args: [str, str, count],
    createsFiles: true,
    run: (x, _client, name, group, offset) => x.topic(name).commitChecked(group, offset),
  }),
  /** The committed offset of `group` (-1: none). */
  topicCommitted: row({
    args: [str, str],
    run: (x, _client, name, group) => x.topic(name).committed(group) ?? -1,
  }),
  topicRemoveGroup: row({
    args: [str, str],
    createsFiles: true,
    run: (x, _client, name, group) => x.topic(name).removeGroup(group),
  }),
  topicApplyRetention: row({
    args: [str],
    createsFiles: true,
    run: (x, _client, name) => x.topic(name).applyRetention(),
  }),
  topicStats: row({ args: [str], run: (x, _client, name) => x.topic(name).stats() }),
  topics: row({ args: [], run: (x) => x.db.topics() }),
  deleteTopic: row({
    args: [str],
    createsFiles: true,
    run: (x, _client, name) => {
      x.setTopic(name, undefined);
      return x.db.deleteTopic(name);
    },
  }),
};
