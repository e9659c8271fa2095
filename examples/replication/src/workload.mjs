// What the example's leader writes, and how every process of the example opens its database:
// batches of puts and deletes over three keyspaces, and now and then a range deletion, all
// derived from the batch number so runs are reproducible. Each batch carries its commit time
// in `meta` (the benchmark's lag is measured from it).
import { open } from "shaledb";

const enc = new TextEncoder();

/**
 * Opens the database at `dir` with binary keys and values: the leader with `changes` retention
 * (its feed keeps batches past flush while the forwarder's cursor needs them), a follower with
 * `{ follower: true }` (read-only but for applyChanges). `engineThread`: the Promise API's
 * `"own"` (default: the engine in its worker thread) or `"caller"`.
 */
export function openDatabase(dir, { follower = false, engineThread } = {}) {
  const common = { keyEncoding: "binary", valueEncoding: "binary", ...(engineThread && { engineThread }) };
  return follower ? open(dir, { ...common, follower: true }) : open(dir, { ...common, changes: { retainMs: 60_000 } });
}

/** The keyspaces of `db` the workload writes: `[default (db itself), accounts, events]`. */
export async function workloadKeyspaces(db) {
  const binary = { keyEncoding: "binary", valueEncoding: "binary" };
  return [undefined, await db.keyspace("accounts", binary), await db.keyspace("events", binary)];
}

/** The operations of batch number `n` (from 0): `size` puts and deletes. */
export function batchOperations(n, size, keyspaces, valueBytes = 100) {
  const ops = [];
  for (let i = 0; i < size; i++) {
    const id = n * size + i;
    const keyspace = keyspaces[id % keyspaces.length];
    // Keys repeat (overwrites), and every 10th operation deletes a key written earlier.
    const key = enc.encode(`k${String((id * 7919) % 50_000).padStart(6, "0")}`);
    if (id % 10 === 9) {
      ops.push({ type: "delete", key, ...(keyspace && { keyspace }) });
    } else {
      const value = new Uint8Array(valueBytes);
      value.fill(id % 251);
      new DataView(value.buffer).setUint32(0, id);
      ops.push({ type: "put", key, value, ...(keyspace && { keyspace }) });
    }
  }
  return ops;
}

/**
 * Writes batches `from` (inclusive) to `to` (exclusive) of `size` operations each, the commit
 * time in each batch's meta; every 100th batch is followed by a range deletion in "events".
 * `ratePerSec` paces the batches (default: as fast as the database takes them); it stops early
 * when `signal` aborts or `forMs` milliseconds have passed. Unpaced, it yields to the event
 * loop every 50 batches (timers and sockets of the same process, such as the forwarder's, run).
 * Resolves with the number of commits (batches and range deletions).
 */
export async function writeBatches(db, { from = 0, to = Infinity, size = 100, valueBytes = 100, ratePerSec, forMs = Infinity, signal } = {}) {
  const keyspaces = await workloadKeyspaces(db);
  const started = performance.now();
  let commits = 0;
  for (let n = from; n < to && !signal?.aborted && performance.now() - started < forMs; n++) {
    if (ratePerSec) {
      const due = started + ((n - from) * 1000) / ratePerSec;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    } else if (n % 50 === 49) {
      await new Promise((r) => setImmediate(r));
    }
    const meta = enc.encode(JSON.stringify({ batch: n, at: performance.timeOrigin + performance.now() }));
    await db.batch(batchOperations(n, size, keyspaces, valueBytes), { meta });
    commits++;
    if (n % 100 === 99) {
      const [lo, hi] = [`k${String((n * 13) % 50_000).padStart(6, "0")}`, `k${String(((n * 13) % 50_000) + 50).padStart(6, "0")}`];
      await keyspaces[2].deleteRange({ gte: enc.encode(lo), lt: enc.encode(hi) });
      commits++;
    }
  }
  return commits;
}
