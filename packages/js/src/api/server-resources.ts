/**
 * What a client holds on its server: iterators, snapshots and transactions, each made by one
 * server and named by that server's id for it. Each is released when closed or, if its user
 * forgets to, once the object that held it is garbage-collected.
 *
 * @module
 */
import type { Transport } from "../transport/transport.js";

/** A release request for something held on a server. */
export interface Held {
  transport: Transport;
  op: "iterClose" | "snapshotClose" | "txRollback";
  id: number;
  server: string;
}

/** Releases what a client forgot to close, once the object that held it is collected. */
const forgotten = new FinalizationRegistry<Held>((held) => {
  release(held);
});

function release({ transport, op, id, server }: Held): void {
  if (!transport.closed) {
    transport.request(op, [id], server).catch(() => undefined);
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
  release(held);
}
