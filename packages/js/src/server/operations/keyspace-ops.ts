/**
 * Requests on keyspaces: opening them, point reads and writes, counting a range. Keyspaces are
 * named by the client's numbers (`../client-keyspaces.ts`), keys and values are bytes.
 *
 * @module
 */
import { keyCodec, valueCodec } from "../../encoding/codec.js";
import { invalidArgument } from "../../errors.js";
import { SyncDatabaseImpl } from "../../engine/sync-database.js";
import { writePackedBytes } from "../../engine/write-packed.js";
import { nextTurn } from "../../engine/maintenance.js";
import { countInSlices } from "../../engine/store.js";
import type { KeyEncoding, ValueEncoding } from "../../types.js";
import { row } from "./row.js";
import { bool, bytes, bytesList, bytesOrText, count, range, str } from "./wire-checks.js";

function keyspaceName(name: string): string {
  if (name === "") {
    throw invalidArgument("a keyspace name must be a non-empty string");
  }
  return name;
}

export const keyspaceOps = {
  /** Opens (creating it if missing) keyspace `name` as this client's keyspace `number`. */
  keyspace: row({
    args: [str, count],
    createsFiles: true,
    run: (x, client, name, number) => client.keyspaces.bind(number, x.openKeyspace(keyspaceName(name))),
  }),
  /**
   * Checks (and records if none are) the encodings a client opens keyspace `name` with
   * (`"default"`: the database's own); `ENCODING_MISMATCH` if others are recorded
   * (`../../engine/keyspace-encodings.ts`).
   */
  encodings: row({
    args: [str, str, str],
    run: (x, _client, name, keys, values) => {
      // Known encodings only (INVALID_ARGUMENT otherwise): the names are recorded.
      const [k, v] = [keyCodec(keys as KeyEncoding).name, valueCodec(values as ValueEncoding).name];
      SyncDatabaseImpl.checkEncodings(x.db, keyspaceName(name), k, v);
    },
  }),
  /** The value of a key at a snapshot (0: the latest state). */
  get: row({
    args: [count, bytesOrText, count],
    run: (x, client, ks, key, snapshot) =>
      x.store(client, ks).getPacked(key, x.read(client, snapshot)) as Uint8Array | undefined,
  }),
  getMany: row({
    args: [count, bytesList, count],
    run: (x, client, ks, keys, snapshot) =>
      x.store(client, ks).getMany(keys, x.read(client, snapshot)) as (Uint8Array | undefined)[],
  }),
  has: row({
    args: [count, bytesOrText, count],
    run: (x, client, ks, key, snapshot) => x.store(client, ks).hasPacked(key, x.read(client, snapshot)),
  }),
  // Keys and values of single reads and writes come as bytes or as checked text (`bytesOrText`).
  put: row({
    args: [count, bytesOrText, bytesOrText, bool],
    merges: true,
    createsFiles: true,
    // Text counts its code units: its bytes for ASCII, which most text is (pacing is rough).
    bytes: ([, key, value]) => key.length + value.length,
    run: (x, client, ks, key, value, sync) => x.store(client, ks).putPacked(key, value, { sync }),
  }),
  delete: row({
    args: [count, bytesOrText, bool],
    merges: true,
    createsFiles: true,
    bytes: ([, key]) => key.length,
    run: (x, client, ks, key, sync) => x.store(client, ks).deletePacked(key, { sync }),
  }),
  /** Packed batch operations (`../../encoding/wire.ts`; the client's keyspace numbers), applied atomically. */
  write: row({
    args: [bytes, bool],
    merges: true,
    createsFiles: true,
    bytes: ([ops]) => ops.length,
    run: (x, client, ops, sync) => writePackedBytes(x.db.db, client.keyspaces.remap(ops), sync),
  }),
  /** The keys in a range (it walks them, in slices between which the server's event loop turns). */
  count: row({
    args: [count, range],
    run: (x, client, ks, r) => countInSlices(x.store(client, ks), x.range(client, r), nextTurn),
  }),
};
