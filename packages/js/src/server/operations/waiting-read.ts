/**
 * A read that may wait (`queueRead`, `topicRead`, `changesRead` with `waitMs`): one attempt now;
 * if it finds nothing, the reply comes later, once a signal says something may have come and an
 * attempt finds it, or the wait ends (`../queue-waits.ts`), while the server goes on.
 *
 * @module
 */
import type { QueueSignals } from "../../engine/queue-signals.js";
import type { ClientResources } from "../client-resources.js";
import { waitForItems, type Later } from "../queue-waits.js";
import type { Context } from "./row.js";

/** What a waiting read needs. */
export interface WaitingRead {
  /** One attempt (never waits): packed results, empty for none. */
  attempt(): Uint8Array;
  /** How long to wait for a result (0: not at all). */
  waitMs: number;
  /** The client's id of the wait (to cancel it). */
  waitId: number;
  /** Which signals wake it, and under what name. */
  signals: QueueSignals;
  name: string;
  /** When something comes back by itself (a lease or delay falling due), if known. */
  nextWake(): number | undefined;
}

/** The attempt's result now, or later (module notes). */
export function readOrWait(x: Context, client: ClientResources, read: WaitingRead): Uint8Array | Later<Uint8Array> {
  const first = read.attempt();
  if (first.length > 0 || read.waitMs <= 0) {
    return first;
  }
  const target = {
    name: read.name,
    attempt: () => read.attempt(),
    empty: (result: Uint8Array) => result.length === 0,
    nextWake: () => read.nextWake(),
  };
  return waitForItems(target, new Uint8Array(0), read.waitMs, client, read.waitId, read.signals, (job) =>
    x.services.run(job),
  );
}
