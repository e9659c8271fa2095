// A model test: random operations against the database and against a plain JS model of it (a
// Map per keyspace plus a sorted key array in BYTE order), compared after every read. Flushes
// and compactions really happen (64 KiB memtables, explicit flush/compact/maintain), and the
// database is closed and reopened through both APIs (openSync, and await open) at random.
//
// Two keyspaces: the default one with binary keys and values from tiny alphabets (so keys
// collide and prefix each other), and "u" with utf8 keys containing non-ASCII characters,
// some above U+FFFF, whose byte order differs from JavaScript's string order.
//
// The seed is printed in the failure message; rerun one with MODEL_SEED=<seed>.
import { describe, expect, it } from "vitest";

import {
  open,
  openSync,
  type Database,
  type IteratorOptions,
  type Keyspace,
  type Snapshot,
  type SyncDatabase,
  type SyncKeyspace,
} from "shaledb";

import { Rng, compareBytes, hex, tempDir, utf8 } from "./helpers.js";

/**
 * A key of the model: its bytes as a "binary string" (one char per byte, code 0-255). Such
 * strings compare with `<` exactly as their bytes compare (code unit by code unit, a prefix
 * first), so sorting them IS byte order; `byteOrder` below checks it against compareBytes.
 */
type Mk = string;
/** A value of the model: hex of the bytes (default keyspace) or the string itself ("u"). */
type Mv = string;

function mkOfBytes(b: Uint8Array): Mk {
  let s = "";
  for (const x of b) {
    s += String.fromCharCode(x);
  }
  return s;
}

function bytesOfMk(k: Mk): Uint8Array {
  const out = new Uint8Array(k.length);
  for (let i = 0; i < k.length; i++) {
    out[i] = k.charCodeAt(i);
  }
  return out;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function bytesOfHex(h: string): Uint8Array {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) {
    out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  }
  return out;
}

/** One keyspace of the model: key → value, and the keys sorted in byte order. */
class ModelSpace {
  readonly map = new Map<Mk, Mv>();
  sorted: Mk[] = [];

  #index(k: Mk): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.sorted[mid] as Mk) < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  put(k: Mk, v: Mv): void {
    if (!this.map.has(k)) {
      this.sorted.splice(this.#index(k), 0, k);
    }
    this.map.set(k, v);
  }

  delete(k: Mk): void {
    if (this.map.delete(k)) {
      this.sorted.splice(this.#index(k), 1);
    }
  }

  deleteRange(gte: Mk, lt: Mk): void {
    const from = this.#index(gte);
    const to = this.#index(lt);
    for (const k of this.sorted.slice(from, to)) {
      this.map.delete(k);
    }
    this.sorted.splice(from, Math.max(0, to - from));
  }

  clone(): ModelSpace {
    const c = new ModelSpace();
    for (const [k, v] of this.map) {
      c.map.set(k, v);
    }
    c.sorted = [...this.sorted];
    return c;
  }

  /** The entries an iterator with `r` must yield, in order. */
  range(r: MkRange): [Mk, Mv][] {
    let keys = this.sorted.filter(
      (k) =>
        // gte wins over gt, lte over lt (the Level rule).
        (r.gte !== undefined ? k >= r.gte : r.gt === undefined || k > r.gt) &&
        (r.lte !== undefined ? k <= r.lte : r.lt === undefined || k < r.lt) &&
        (r.prefix === undefined || k.startsWith(r.prefix)),
    );
    if (r.reverse) {
      keys = keys.reverse();
    }
    if (r.limit !== undefined && r.limit >= 0) {
      keys = keys.slice(0, r.limit);
    }
    return keys.map((k) => [k, this.map.get(k) as Mv]);
  }
}

interface MkRange {
  gt?: Mk;
  gte?: Mk;
  lt?: Mk;
  lte?: Mk;
  prefix?: Mk;
  reverse: boolean;
  limit?: number;
}

type Model = [ModelSpace, ModelSpace];

/** How keys and values of one keyspace map between the model and the API. */
interface SpaceCodec<K, V> {
  key(k: Mk): K;
  mk(k: K): Mk;
  value(v: Mv): V;
  mv(v: V): Mv;
}

const binarySpace: SpaceCodec<Uint8Array, Uint8Array> = {
  key: bytesOfMk,
  mk: mkOfBytes,
  value: bytesOfHex,
  mv: hex,
};

const utf8Space: SpaceCodec<string, string> = {
  key: (k) => decoder.decode(bytesOfMk(k)),
  mk: (k) => mkOfBytes(utf8(k)),
  value: (v) => v,
  mv: (v) => v,
};

type Api =
  | { kind: "sync"; db: SyncDatabase<Uint8Array, Uint8Array>; u: SyncKeyspace<string, string> }
  | { kind: "async"; db: Database<Uint8Array, Uint8Array>; u: Keyspace<string, string> };

const OPTIONS = {
  keyEncoding: "binary",
  valueEncoding: "binary",
  memtableSize: 64 * 1024,
} as const;

async function openApi(dir: string, kind: "sync" | "async"): Promise<Api> {
  if (kind === "sync") {
    const db = openSync(dir, OPTIONS);
    return { kind, db, u: db.keyspace("u") };
  }
  const db = await open(dir, OPTIONS);
  return { kind, db, u: await db.keyspace("u") };
}

/** Random keys: tiny alphabets, so collisions and shared prefixes are common. */
const BINARY_ALPHABET = [0x00, 0x01, 0x61, 0x7f, 0x80, 0xff];
const UTF8_ALPHABET = ["a", "b", "é", "\u00ff", "\uE000", "\uFFFD", "\u{1F600}", "\u{10348}"];

function randomBinaryKey(rng: Rng): Mk {
  const n = rng.chance(0.03) ? 0 : rng.int(1, 4);
  let s = "";
  for (let i = 0; i < n; i++) {
    s += String.fromCharCode(rng.pick(BINARY_ALPHABET));
  }
  return s;
}

function randomUtf8Key(rng: Rng): Mk {
  const n = rng.int(1, 3);
  let s = "";
  for (let i = 0; i < n; i++) {
    s += rng.pick(UTF8_ALPHABET);
  }
  return utf8Space.mk(s);
}

function randomKey(rng: Rng, space: 0 | 1, model: Model): Mk {
  const existing = model[space].sorted;
  if (existing.length > 0 && rng.chance(0.4)) {
    return rng.pick(existing);
  }
  return space === 0 ? randomBinaryKey(rng) : randomUtf8Key(rng);
}

function randomValue(rng: Rng, space: 0 | 1): Mv {
  const n = rng.chance(0.12) ? rng.int(400, 3000) : rng.int(0, 24);
  if (space === 0) {
    return hex(rng.bytes(n));
  }
  let s = "";
  for (let i = 0; i < n; i++) {
    s += rng.chance(0.9) ? String.fromCharCode(rng.int(0x20, 0x7e)) : rng.pick(UTF8_ALPHABET);
  }
  return s;
}

function randomRange(rng: Rng, space: 0 | 1, model: Model): MkRange {
  const r: MkRange = { reverse: rng.chance(0.5) };
  if (rng.chance(0.3)) r.gt = randomKey(rng, space, model);
  if (rng.chance(0.3)) r.gte = randomKey(rng, space, model);
  if (rng.chance(0.3)) r.lt = randomKey(rng, space, model);
  if (rng.chance(0.3)) r.lte = randomKey(rng, space, model);
  if (rng.chance(0.25)) {
    const k = randomKey(rng, space, model);
    // A prefix of whole characters for utf8 keys (a string prefix), of bytes for binary ones.
    if (space === 0) {
      r.prefix = k.slice(0, rng.int(0, Math.min(2, k.length)));
    } else {
      const chars = [...utf8Space.key(k)];
      r.prefix = utf8Space.mk(chars.slice(0, rng.int(0, Math.min(2, chars.length))).join(""));
    }
  }
  if (rng.chance(0.35)) r.limit = rng.chance(0.05) ? -1 : rng.int(0, 12);
  return r;
}

function apiRange<K>(r: MkRange, codec: SpaceCodec<K, unknown>): IteratorOptions<K> {
  const o: IteratorOptions<K> = {};
  if (r.gt !== undefined) o.gt = codec.key(r.gt);
  if (r.gte !== undefined) o.gte = codec.key(r.gte);
  if (r.lt !== undefined) o.lt = codec.key(r.lt);
  if (r.lte !== undefined) o.lte = codec.key(r.lte);
  if (r.prefix !== undefined) o.prefix = codec.key(r.prefix);
  if (r.reverse) o.reverse = true;
  if (r.limit !== undefined) o.limit = r.limit;
  return o;
}

function show(k: Mk): string {
  return hex(bytesOfMk(k));
}

/** A readable form of expected/actual entries for toEqual. */
function showEntries(entries: [Mk, Mv][]): string[] {
  return entries.map(([k, v]) => `${show(k)}=${v.length > 40 ? `${v.slice(0, 40)}…(${v.length})` : v}`);
}

type Mode = "entries" | "keys" | "values";

/**
 * Reads an iterator of keyspace `space` to its end, or `stopAfter` items then `break`s out of
 * the loop; returns what it saw as model entries (missing parts as "").
 */
async function readIterator(
  api: Api,
  space: 0 | 1,
  options: IteratorOptions<Uint8Array> | IteratorOptions<string>,
  mode: Mode,
  stopAfter: number,
): Promise<[Mk, Mv][]> {
  const out: [Mk, Mv][] = [];
  const add = (k: Mk, v: Mv): boolean => {
    out.push([k, v]);
    return out.length >= stopAfter;
  };
  if (space === 0) {
    const o = options as IteratorOptions<Uint8Array>;
    const c = binarySpace;
    if (api.kind === "sync") {
      if (mode === "entries") {
        for (const [k, v] of api.db.iterator(o)) if (add(c.mk(k), c.mv(v))) break;
      } else if (mode === "keys") {
        for (const k of api.db.keys(o)) if (add(c.mk(k), "")) break;
      } else {
        for (const v of api.db.values(o)) if (add("", c.mv(v))) break;
      }
    } else if (mode === "entries") {
      for await (const [k, v] of api.db.iterator(o)) if (add(c.mk(k), c.mv(v))) break;
    } else if (mode === "keys") {
      for await (const k of api.db.keys(o)) if (add(c.mk(k), "")) break;
    } else {
      for await (const v of api.db.values(o)) if (add("", c.mv(v))) break;
    }
  } else {
    const o = options as IteratorOptions<string>;
    const c = utf8Space;
    if (api.kind === "sync") {
      if (mode === "entries") {
        for (const [k, v] of api.u.iterator(o)) if (add(c.mk(k), c.mv(v))) break;
      } else if (mode === "keys") {
        for (const k of api.u.keys(o)) if (add(c.mk(k), "")) break;
      } else {
        for (const v of api.u.values(o)) if (add("", c.mv(v))) break;
      }
    } else if (mode === "entries") {
      for await (const [k, v] of api.u.iterator(o)) if (add(c.mk(k), c.mv(v))) break;
    } else if (mode === "keys") {
      for await (const k of api.u.keys(o)) if (add(c.mk(k), "")) break;
    } else {
      for await (const v of api.u.values(o)) if (add("", c.mv(v))) break;
    }
  }
  return out;
}

function project(entries: [Mk, Mv][], mode: Mode): [Mk, Mv][] {
  return entries.map(([k, v]) => (mode === "entries" ? [k, v] : mode === "keys" ? [k, ""] : ["", v]));
}

async function getValue(
  api: Api,
  space: 0 | 1,
  k: Mk,
  snapshot: Snapshot | undefined,
): Promise<Mv | undefined> {
  const options = snapshot === undefined ? undefined : { snapshot };
  if (space === 0) {
    const v = await api.db.get(binarySpace.key(k), options);
    return v === undefined ? undefined : binarySpace.mv(v);
  }
  return await api.u.get(utf8Space.key(k), options);
}

async function hasKey(api: Api, space: 0 | 1, k: Mk): Promise<boolean> {
  return space === 0 ? await api.db.has(binarySpace.key(k)) : await api.u.has(utf8Space.key(k));
}

async function countRange(
  api: Api,
  space: 0 | 1,
  r: MkRange,
  snapshot: Snapshot | undefined,
): Promise<number> {
  if (space === 0) {
    const o = apiRange(r, binarySpace);
    if (snapshot !== undefined) o.snapshot = snapshot;
    return await api.db.count(o);
  }
  const o = apiRange(r, utf8Space);
  if (snapshot !== undefined) o.snapshot = snapshot;
  return await api.u.count(o);
}

/** Compares every entry of both keyspaces with the model (a forward full scan). */
async function checkAll(api: Api, model: Model, where: string): Promise<void> {
  for (const space of [0, 1] as const) {
    const actual = await readIterator(api, space, {}, "entries", Infinity);
    expect(showEntries(actual), `${where}: full scan of keyspace ${space}`).toEqual(
      showEntries(model[space].range({ reverse: false })),
    );
  }
}

/** One queued batch operation, in model terms. */
type BatchOp =
  | { type: "put"; space: 0 | 1; k: Mk; v: Mv }
  | { type: "delete"; space: 0 | 1; k: Mk }
  | { type: "deleteRange"; space: 0 | 1; gte: Mk; lt: Mk };

function applyToModel(model: Model, op: BatchOp): void {
  const m = model[op.space];
  if (op.type === "put") m.put(op.k, op.v);
  else if (op.type === "delete") m.delete(op.k);
  else m.deleteRange(op.gte, op.lt);
}

/** Two distinct keys of `space`, ordered (gte < lt in byte order). */
function randomRangeBounds(rng: Rng, space: 0 | 1, model: Model): [Mk, Mk] | undefined {
  const a = randomKey(rng, space, model);
  const b = randomKey(rng, space, model);
  if (a === b) return undefined;
  return a < b ? [a, b] : [b, a];
}

async function writeBatch(api: Api, ops: BatchOp[], sync: boolean, asArray: boolean): Promise<void> {
  const options = sync ? { sync: true } : undefined;
  if (asArray) {
    // Array batches write the default keyspace only.
    const arr = ops.map((op) =>
      op.type === "put"
        ? { type: "put" as const, key: binarySpace.key(op.k), value: binarySpace.value(op.v) }
        : { type: "delete" as const, key: binarySpace.key(op.type === "delete" ? op.k : "") },
    );
    if (api.kind === "sync") api.db.batch(arr, options);
    else await api.db.batch(arr, options);
    return;
  }
  if (api.kind === "sync") {
    const b = api.db.batch();
    for (const op of ops) {
      if (op.space === 0) {
        if (op.type === "put") b.put(binarySpace.key(op.k), binarySpace.value(op.v));
        else if (op.type === "delete") b.delete(binarySpace.key(op.k));
        else b.deleteRange({ gte: binarySpace.key(op.gte), lt: binarySpace.key(op.lt) });
      } else if (op.type === "put") b.put(utf8Space.key(op.k), op.v, api.u);
      else if (op.type === "delete") b.delete(utf8Space.key(op.k), api.u);
      else b.deleteRange({ gte: utf8Space.key(op.gte), lt: utf8Space.key(op.lt) }, api.u);
    }
    expect(b.length).toBe(ops.length);
    b.write(options);
    expect(b.length).toBe(0);
  } else {
    const b = api.db.batch();
    for (const op of ops) {
      if (op.space === 0) {
        if (op.type === "put") b.put(binarySpace.key(op.k), binarySpace.value(op.v));
        else if (op.type === "delete") b.delete(binarySpace.key(op.k));
        else b.deleteRange({ gte: binarySpace.key(op.gte), lt: binarySpace.key(op.lt) });
      } else if (op.type === "put") b.put(utf8Space.key(op.k), op.v, api.u);
      else if (op.type === "delete") b.delete(utf8Space.key(op.k), api.u);
      else b.deleteRange({ gte: utf8Space.key(op.gte), lt: utf8Space.key(op.lt) }, api.u);
    }
    await b.write(options);
  }
}

async function writeOne(api: Api, op: BatchOp, sync: boolean): Promise<void> {
  const options = sync ? { sync: true } : undefined;
  if (op.space === 0) {
    if (op.type === "put") await api.db.put(binarySpace.key(op.k), binarySpace.value(op.v), options);
    else if (op.type === "delete") await api.db.delete(binarySpace.key(op.k), options);
    else await api.db.deleteRange({ gte: binarySpace.key(op.gte), lt: binarySpace.key(op.lt) }, options);
  } else if (op.type === "put") await api.u.put(utf8Space.key(op.k), op.v, options);
  else if (op.type === "delete") await api.u.delete(utf8Space.key(op.k), options);
  else await api.u.deleteRange({ gte: utf8Space.key(op.gte), lt: utf8Space.key(op.lt) }, options);
}

interface OpenSnapshot {
  snapshot: Snapshot;
  frozen: Model;
  takenAt: number;
}

/** An iterator opened earlier and read later: it must show the state of its creation. */
interface PendingIterator {
  read: () => [Mk, Mv][];
  expected: [Mk, Mv][];
  close: () => void;
  openedAt: number;
}

function openPending(api: Api, space: 0 | 1, r: MkRange, model: Model, step: number): PendingIterator {
  const expected = model[space].range(r);
  if (api.kind === "sync") {
    if (space === 0) {
      const it = api.db.iterator(apiRange(r, binarySpace));
      return {
        read: () => [...it].map(([k, v]) => [binarySpace.mk(k), binarySpace.mv(v)]),
        expected,
        close: () => it.close(),
        openedAt: step,
      };
    }
    const it = api.u.iterator(apiRange(r, utf8Space));
    return {
      read: () => [...it].map(([k, v]) => [utf8Space.mk(k), v]),
      expected,
      close: () => it.close(),
      openedAt: step,
    };
  }
  // The Promise API's iterators read the same native iterator; the sync API covers this.
  return { read: () => expected, expected, close: () => undefined, openedAt: step };
}

/**
 * When each key was last written (a put, a delete, or a range delete covering it, whether or not
 * the key existed), in a counter of write operations: what a transaction's commit must check.
 */
class WriteTracker {
  seq = 0;
  readonly last: [Map<Mk, number>, Map<Mk, number>] = [new Map(), new Map()];
  readonly ranges: { space: 0 | 1; gte: Mk; lt: Mk; seq: number }[] = [];

  record(op: BatchOp): void {
    this.seq += 1;
    if (op.type === "deleteRange") {
      this.ranges.push({ space: op.space, gte: op.gte, lt: op.lt, seq: this.seq });
    } else {
      this.last[op.space].set(op.k, this.seq);
    }
  }

  /** Whether `k` of `space` was written (or covered by a range delete) after `since`. */
  writtenSince(space: 0 | 1, k: Mk, since: number): boolean {
    if ((this.last[space].get(k) ?? 0) > since) return true;
    return this.ranges.some((r) => r.space === space && r.seq > since && r.gte <= k && k < r.lt);
  }
}

/** An open transaction of either API and what the model expects of it. */
interface OpenTransaction {
  get: (space: 0 | 1, k: Mk) => Promise<Mv | undefined>;
  put: (space: 0 | 1, k: Mk, v: Mv) => void;
  delete: (space: 0 | 1, k: Mk) => void;
  commit: () => Promise<void>;
  rollback: () => Promise<void>;
  /** The tracker's counter when it began, and the model then. */
  startSeq: number;
  frozen: Model;
  /** Keys read from the database (not from the transaction's own writes). */
  reads: [0 | 1, Mk][];
  /** Its own writes, in order. */
  writes: BatchOp[];
  begunAt: number;
}

async function beginTransaction(api: Api, model: Model, tracker: WriteTracker, step: number): Promise<OpenTransaction> {
  const base = {
    startSeq: tracker.seq,
    frozen: [model[0].clone(), model[1].clone()] as Model,
    reads: [] as [0 | 1, Mk][],
    writes: [] as BatchOp[],
    begunAt: step,
  };
  if (api.kind === "sync") {
    const tx = api.db.transaction();
    const u = api.u;
    return {
      ...base,
      get: (space, k) => {
        if (space === 0) {
          const v = tx.get(binarySpace.key(k));
          return Promise.resolve(v === undefined ? undefined : binarySpace.mv(v));
        }
        return Promise.resolve(tx.get(utf8Space.key(k), u));
      },
      put: (space, k, v) => (space === 0 ? tx.put(binarySpace.key(k), binarySpace.value(v)) : tx.put(utf8Space.key(k), v, u)),
      delete: (space, k) => (space === 0 ? tx.delete(binarySpace.key(k)) : tx.delete(utf8Space.key(k), u)),
      commit: () => {
        tx.commit();
        return Promise.resolve();
      },
      rollback: () => {
        tx.rollback();
        return Promise.resolve();
      },
    };
  }
  const tx = await api.db.transaction();
  const u = api.u;
  return {
    ...base,
    get: async (space, k) => {
      if (space === 0) {
        const v = await tx.get(binarySpace.key(k));
        return v === undefined ? undefined : binarySpace.mv(v);
      }
      return await tx.get(utf8Space.key(k), u);
    },
    put: (space, k, v) => (space === 0 ? tx.put(binarySpace.key(k), binarySpace.value(v)) : tx.put(utf8Space.key(k), v, u)),
    delete: (space, k) => (space === 0 ? tx.delete(binarySpace.key(k)) : tx.delete(utf8Space.key(k), u)),
    commit: async () => {
      await tx.commit();
    },
    rollback: () => tx.rollback(),
  };
}

/** What a transaction reads for `k`: its own last write, else its snapshot (the frozen model). */
function transactionView(t: OpenTransaction, space: 0 | 1, k: Mk): { own: boolean; value: Mv | undefined } {
  for (let i = t.writes.length - 1; i >= 0; i--) {
    const w = t.writes[i] as BatchOp;
    if (w.space === space && w.type !== "deleteRange" && w.k === k) {
      return { own: true, value: w.type === "put" ? w.v : undefined };
    }
  }
  return { own: false, value: t.frozen[space].map.get(k) };
}

interface RunResult {
  ops: Record<string, number>;
  levelsBeyondL0: boolean;
  reopens: number;
}

async function run(seed: number, steps: number): Promise<RunResult> {
  const rng = new Rng(seed);
  const dir = tempDir("model");
  const model: Model = [new ModelSpace(), new ModelSpace()];
  const counts: Record<string, number> = {};
  const log: string[] = [];
  let api = await openApi(dir, rng.chance(0.5) ? "sync" : "async");
  let snapshots: OpenSnapshot[] = [];
  let pending: PendingIterator[] = [];
  const tracker = new WriteTracker();
  let tx: OpenTransaction | undefined;
  const applyOp = (op: BatchOp): void => {
    applyToModel(model, op);
    tracker.record(op);
  };
  let levelsBeyondL0 = false;
  let reopens = 0;
  let step = 0;

  const note = (s: string): void => {
    counts[s.split(" ")[0] as string] = (counts[s.split(" ")[0] as string] ?? 0) + 1;
    log.push(`#${step} [${api.kind}] ${s}`);
    if (log.length > 25) log.shift();
  };

  try {
    for (step = 0; step < steps; step++) {
      const space: 0 | 1 = rng.chance(0.6) ? 0 : 1;
      const where = `step ${step}`;
      const dice = rng.next();
      if (dice < 0.3) {
        const op: BatchOp = { type: "put", space, k: randomKey(rng, space, model), v: randomValue(rng, space) };
        note(`put ks${space} ${show(op.k)}`);
        await writeOne(api, op, rng.chance(0.02));
        applyOp(op);
      } else if (dice < 0.38) {
        const op: BatchOp = { type: "delete", space, k: randomKey(rng, space, model) };
        note(`delete ks${space} ${show(op.k)}`);
        await writeOne(api, op, false);
        applyOp(op);
      } else if (dice < 0.41) {
        const b = randomRangeBounds(rng, space, model);
        if (b !== undefined) {
          const op: BatchOp = { type: "deleteRange", space, gte: b[0], lt: b[1] };
          note(`deleteRange ks${space} [${show(b[0])}, ${show(b[1])})`);
          await writeOne(api, op, false);
          applyOp(op);
        }
      } else if (dice < 0.47) {
        const asArray = rng.chance(0.25);
        const ops: BatchOp[] = [];
        for (let i = rng.int(1, 8); i > 0; i--) {
          const s: 0 | 1 = asArray ? 0 : rng.chance(0.5) ? 0 : 1;
          const kind = rng.next();
          if (kind < 0.6) ops.push({ type: "put", space: s, k: randomKey(rng, s, model), v: randomValue(rng, s) });
          else if (kind < 0.9 || asArray) ops.push({ type: "delete", space: s, k: randomKey(rng, s, model) });
          else {
            const b = randomRangeBounds(rng, s, model);
            if (b !== undefined) ops.push({ type: "deleteRange", space: s, gte: b[0], lt: b[1] });
          }
        }
        note(`batch${asArray ? "(array)" : ""} ${ops.map((o) => `${o.type}@${o.space}`).join(",")}`);
        await writeBatch(api, ops, rng.chance(0.05), asArray);
        for (const op of ops) applyOp(op);
      } else if (dice < 0.53) {
        // Transactions: begin, read, write, commit (CONFLICT exactly when a key it read was
        // changed meanwhile) or roll back.
        if (tx === undefined) {
          tx = await beginTransaction(api, model, tracker, step);
          note("transaction begin");
        } else {
          const t = tx;
          const what = rng.next();
          if (what < 0.35) {
            const k = randomKey(rng, space, t.frozen);
            const view = transactionView(t, space, k);
            note(`transaction get ks${space} ${show(k)}`);
            expect(await t.get(space, k), `${where}: transaction (begun at #${t.begunAt}) get ${show(k)}`).toBe(view.value);
            if (!view.own) t.reads.push([space, k]);
          } else if (what < 0.75) {
            const k = randomKey(rng, space, model);
            const op: BatchOp = rng.chance(0.75)
              ? { type: "put", space, k, v: randomValue(rng, space) }
              : { type: "delete", space, k };
            note(`transaction ${op.type} ks${space} ${show(k)}`);
            if (op.type === "put") t.put(space, k, op.v);
            else t.delete(space, k);
            t.writes.push(op);
          } else if (what < 0.93) {
            tx = undefined;
            // A read key whose value changed must conflict; one not written since must not; one
            // written without a visible change may go either way.
            const changed = t.reads.some(([sp, k]) => model[sp].map.get(k) !== t.frozen[sp].map.get(k));
            const touched = t.reads.some(([sp, k]) => tracker.writtenSince(sp, k, t.startSeq));
            note(`transaction commit (begun at #${t.begunAt}, ${t.reads.length} reads, ${t.writes.length} writes, changed=${changed}, touched=${touched})`);
            let conflict = false;
            try {
              await t.commit();
            } catch (error) {
              if ((error as { code?: unknown }).code !== "CONFLICT") throw error;
              conflict = true;
            }
            if (changed) {
              expect(conflict, `${where}: commit of a transaction whose read was changed`).toBe(true);
            } else if (!touched) {
              expect(conflict, `${where}: commit of a transaction whose reads nobody wrote`).toBe(false);
            }
            if (!conflict) for (const op of t.writes) applyOp(op);
          } else {
            tx = undefined;
            note(`transaction rollback (begun at #${t.begunAt})`);
            await t.rollback();
          }
        }
      } else if (dice < 0.57) {
        const k = randomKey(rng, space, model);
        note(`get ks${space} ${show(k)}`);
        expect(await getValue(api, space, k, undefined), `${where}: get ${show(k)} in ks${space}`).toBe(
          model[space].map.get(k),
        );
      } else if (dice < 0.6) {
        const k = randomKey(rng, space, model);
        note(`has ks${space} ${show(k)}`);
        expect(await hasKey(api, space, k), `${where}: has ${show(k)}`).toBe(model[space].map.has(k));
      } else if (dice < 0.62) {
        const keys = Array.from({ length: rng.int(0, 5) }, () => randomKey(rng, 0, model));
        note(`getMany ks0 ${keys.length}`);
        const got = await api.db.getMany(keys.map(binarySpace.key));
        expect(got.map((v) => (v === undefined ? undefined : hex(v))), `${where}: getMany`).toEqual(
          keys.map((k) => model[0].map.get(k)),
        );
      } else if (dice < 0.74) {
        const r = randomRange(rng, space, model);
        const mode = rng.pick<Mode>(["entries", "entries", "keys", "values"]);
        const stopAfter = rng.chance(0.2) ? rng.int(1, 5) : Infinity;
        note(`iterator ks${space} ${mode} ${JSON.stringify({ ...r, gt: r.gt && show(r.gt), gte: r.gte && show(r.gte), lt: r.lt && show(r.lt), lte: r.lte && show(r.lte), prefix: r.prefix && show(r.prefix) })} stop=${stopAfter}`);
        const options = space === 0 ? apiRange(r, binarySpace) : apiRange(r, utf8Space);
        const actual = await readIterator(api, space, options, mode, stopAfter);
        const expected = project(model[space].range(r), mode).slice(0, stopAfter);
        expect(showEntries(actual), `${where}: iterator`).toEqual(showEntries(expected));
        if (mode !== "values") {
          // Keys come in byte order (or its reverse), checked with a byte comparison.
          for (let i = 1; i < actual.length; i++) {
            const c = compareBytes(bytesOfMk((actual[i - 1] as [Mk, Mv])[0]), bytesOfMk((actual[i] as [Mk, Mv])[0]));
            expect(r.reverse ? c > 0 : c < 0, `${where}: byte order`).toBe(true);
          }
        }
      } else if (dice < 0.77) {
        const r = randomRange(rng, space, model);
        note(`count ks${space}`);
        expect(await countRange(api, space, r, undefined), `${where}: count`).toBe(model[space].range(r).length);
      } else if (dice < 0.8) {
        if (snapshots.length < 3) {
          const snapshot = await api.db.snapshot();
          snapshots.push({ snapshot, frozen: [model[0].clone(), model[1].clone()], takenAt: step });
          note("snapshot take");
        }
      } else if (dice < 0.86) {
        if (snapshots.length > 0) {
          const s = rng.pick(snapshots);
          note(`snapshot check (taken at #${s.takenAt})`);
          for (let i = 0; i < 4; i++) {
            const sp: 0 | 1 = rng.chance(0.5) ? 0 : 1;
            const k = randomKey(rng, sp, s.frozen);
            expect(await getValue(api, sp, k, s.snapshot), `${where}: get ${show(k)} at snapshot #${s.takenAt}`).toBe(
              s.frozen[sp].map.get(k),
            );
          }
          const r = randomRange(rng, space, s.frozen);
          const options = space === 0 ? apiRange(r, binarySpace) : apiRange(r, utf8Space);
          options.snapshot = s.snapshot;
          const actual = await readIterator(api, space, options, "entries", Infinity);
          expect(showEntries(actual), `${where}: iterator at snapshot #${s.takenAt}`).toEqual(
            showEntries(s.frozen[space].range(r)),
          );
          expect(await countRange(api, space, r, s.snapshot), `${where}: count at snapshot`).toBe(
            s.frozen[space].range(r).length,
          );
          if (rng.chance(0.3)) {
            s.snapshot.close();
            expect(s.snapshot.closed).toBe(true);
            snapshots = snapshots.filter((x) => x !== s);
          }
        }
      } else if (dice < 0.88) {
        if (pending.length < 2 && api.kind === "sync") {
          const r = randomRange(rng, space, model);
          pending.push(openPending(api, space, r, model, step));
          note(`iterator open ks${space} (read later)`);
        } else if (pending.length > 0) {
          const p = pending.shift() as PendingIterator;
          note(`iterator read (opened at #${p.openedAt})`);
          expect(showEntries(p.read()), `${where}: iterator opened at #${p.openedAt}`).toEqual(
            showEntries(p.expected),
          );
        }
      } else if (dice < 0.9) {
        note("flush");
        await api.db.flush();
      } else if (dice < 0.91) {
        note("compact");
        if (rng.chance(0.5)) {
          await api.db.compact();
        } else {
          const a = binarySpace.key(randomBinaryKey(rng));
          const b = binarySpace.key(randomBinaryKey(rng));
          await api.db.compact(compareBytes(a, b) <= 0 ? { start: a, end: b } : { start: b, end: a });
        }
      } else if (dice < 0.95) {
        note("maintain");
        for (let i = 0; i < 4 && (await api.db.maintain(rng.pick([1, 64 << 10, 1 << 20]))); i++);
      } else if (dice < 0.965) {
        note("reopen");
        const stats = await api.db.stats();
        levelsBeyondL0 ||= stats.levels.slice(1).some((l) => l.files > 0);
        for (const p of pending) p.close();
        pending = [];
        if (tx !== undefined) {
          await tx.rollback();
          tx = undefined;
        }
        const closing = snapshots;
        snapshots = [];
        await api.db.close();
        for (const s of closing) expect(s.snapshot.closed, "a snapshot of a closed database").toBe(true);
        api = await openApi(dir, rng.chance(0.5) ? "sync" : "async");
        reopens++;
        await checkAll(api, model, `${where}: after reopen`);
      } else if (dice < 0.98) {
        // Let the idle-time maintenance run (settled promises alone never yield to it), while
        // snapshots and iterators may be open.
        note("idle");
        for (let i = rng.int(1, 4); i > 0; i--) await new Promise((r) => setImmediate(r));
      } else {
        note("stats");
        const stats = await api.db.stats();
        levelsBeyondL0 ||= stats.levels.slice(1).some((l) => l.files > 0);
        expect(stats.levels.length).toBeGreaterThan(1);
      }
    }
    for (const p of pending) {
      expect(showEntries(p.read()), `end: iterator opened at #${p.openedAt}`).toEqual(showEntries(p.expected));
    }
    if (tx !== undefined) await tx.rollback();
    await checkAll(api, model, "end");
    const stats = await api.db.stats();
    levelsBeyondL0 ||= stats.levels.slice(1).some((l) => l.files > 0);
    await api.db.close();
    // And once more from disk.
    api = await openApi(dir, "sync");
    await checkAll(api, model, "end, reopened");
    await api.db.close();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `model run failed with seed ${seed} (rerun: MODEL_SEED=${seed}) at step ${step}: ${message}\n` +
        `last operations:\n  ${log.join("\n  ")}`,
      { cause: error },
    );
  } finally {
    if (!api.db.closed) {
      try {
        await api.db.close();
      } catch {
        // The failure above is what matters.
      }
    }
  }
  return { ops: counts, levelsBeyondL0, reopens };
}

const fromEnv = process.env["MODEL_SEED"];
const steps = Number(process.env["MODEL_STEPS"] ?? "") || 4000;
const seeds =
  fromEnv !== undefined && fromEnv !== ""
    ? [Number(fromEnv)]
    : [0x5eed, 20261122, (Date.now() ^ (process.pid << 8)) >>> 0];

describe("model: random operations agree with a JS model in byte order", () => {
  for (const seed of seeds) {
    it(`seed ${seed}`, { timeout: 30_000 }, async () => {
      const result = await run(seed, steps);
      // The run must have exercised what it claims to.
      expect(result.reopens, `seed ${seed}: reopens`).toBeGreaterThan(0);
      for (const op of ["put", "delete", "deleteRange", "batch", "iterator", "snapshot", "flush", "transaction"]) {
        expect(result.ops[op] ?? 0, `seed ${seed}: ${op} ops`).toBeGreaterThan(0);
      }
      expect(result.levelsBeyondL0, `seed ${seed}: tables reached levels beyond L0`).toBe(true);
    });
  }

  it("the model orders utf8 keys by their bytes, not by JavaScript's string order", () => {
    const a = "\uFFFD";
    const b = "\u{1F600}";
    expect(b < a).toBe(true); // UTF-16: 0xD83D < 0xFFFD
    expect(utf8Space.mk(a) < utf8Space.mk(b)).toBe(true); // UTF-8: EF BF BD < F0 9F 98 80
    expect(compareBytes(utf8(a), utf8(b))).toBeLessThan(0);
  });
});
