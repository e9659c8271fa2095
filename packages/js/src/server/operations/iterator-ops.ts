/**
 * Requests on iterators and snapshots, which live on the server that made them and are named
 * by its ids (`../client-resources.ts`).
 *
 * @module
 */
import { closedError } from "../../errors.js";
import type { IterationMode } from "../../encoding/entry-batch.js";
import { keyCodec } from "../../encoding/codec.js";
import { NativeIterator } from "../../engine/native-iterator.js";
import type { SnapshotImpl } from "../../engine/snapshot.js";
import type { ClientResources } from "../client-resources.js";
import { row } from "./row.js";
import { bytes, count, iterationMode, range } from "./wire-checks.js";

const binary = keyCodec("binary");

function iterator(client: ClientResources, id: number): NativeIterator {
  const it = client.iterators.get(id);
  if (it === undefined) {
    throw closedError("the iterator");
  }
  return it;
}

export const iteratorOps = {
  /**
   * Opens an iterator and returns its id and first batch (`../../encoding/entry-batch.ts`) of
   * up to `first` entries.
   */
  iterOpen: row({
    args: [count, range, iterationMode, count],
    run: (x, client, ks, r, mode: IterationMode, first): [iterator: number, batch: Uint8Array] => {
      const engine = x.store(client, ks).keyspaceId;
      const it = new NativeIterator(x.db.db, engine, x.range(client, r), binary);
      const batch = it.fetch(first, mode);
      // Kept when exhausted too (a seek may move it back): the client closes it.
      const id = x.nextHandle();
      client.iterators.set(id, it);
      return [id, batch];
    },
  }),
  iterNext: row({
    args: [count, count, iterationMode],
    run: (_x, client, id, want, mode) => iterator(client, id).fetch(want, mode),
  }),
  /** Seeks the iterator to `target` (a key's bytes) and returns the batch of up to `want` entries from there. */
  iterSeek: row({
    args: [count, bytes, count, iterationMode],
    run: (_x, client, id, target, want, mode) => {
      const it = iterator(client, id);
      it.seek(target);
      return it.fetch(want, mode);
    },
  }),
  iterClose: row({
    args: [count],
    run: (_x, client, id) => {
      client.iterators.get(id)?.close();
      client.iterators.delete(id);
    },
  }),
  snapshotOpen: row({
    args: [],
    run: (x, client) => {
      const id = x.nextHandle();
      client.snapshots.set(id, x.db.snapshot() as SnapshotImpl);
      return id;
    },
  }),
  snapshotClose: row({
    args: [count],
    run: (_x, client, id) => {
      client.snapshots.get(id)?.close();
      client.snapshots.delete(id);
    },
  }),
};
