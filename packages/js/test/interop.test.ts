// The files have exactly the native engine's format, both ways in one run: a database written by
// native ShaleDB (examples/rust/src/bin/interop.rs) opens in Node and holds everything, and one
// written by Node (sync API, Promise API, a checkpoint) passes the native program's check. The
// data set (test/fixtures/dataset.ts) leaves flushed tables *and* a WAL tail behind, in two
// keyspaces, with overwrites, deletes, range deletes, an atomic batch and values larger than a
// table block.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import {
  open,
  openSync,
  type Database,
  type JsonValue,
  type Keyspace,
  type SyncDatabase,
  type SyncKeyspace,
} from "shaledb";

import {
  EMOJI_KEY,
  REPLACEMENT_KEY,
  compareBytes,
  dataset,
  expected,
  kd,
  type Expected,
  type ExpectedKeyspace,
  type Op,
} from "./fixtures/dataset.js";
import { BUILD_TIMEOUT_MS, buildNative, run, tempDir } from "./fixtures/processes.js";

/** The size of the data set: ~1.5 MB, a table of ~0.7 MB and a WAL tail of ~0.4 MB. */
const N = 2000;
const ops = dataset(N);
const want: Expected = expected(ops);

let interop = "";
const temp = tempDir("interop");

beforeAll(() => {
  interop = buildNative("interop").interop ?? "";
}, BUILD_TIMEOUT_MS);

afterAll(() => {
  temp.cleanup();
});

/** Runs the native program; its output must be `ok`. */
function native(command: "write" | "verify", dir: string): void {
  const result = run(interop, [command, dir, String(N)]);
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  expect(result.stdout.trim()).toBe("ok");
}

type Bytes = Uint8Array;

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

/** Entries as comparable strings (hex key, base64 value). */
function printable(entries: readonly (readonly [Bytes, Bytes])[]): string[] {
  return entries.map(([k, v]) => `${hex(k)} = ${Buffer.from(v).toString("base64")}`);
}

/** The "events" keyspace, of either API. */
type EventsKeyspace = Keyspace<string, JsonValue> | SyncKeyspace<string, JsonValue>;

/** The data set's operations applied through the synchronous API. */
function writeWithSyncApi(
  db: SyncDatabase<Bytes, Bytes>,
  events: SyncKeyspace<string, JsonValue>,
): void {
  for (const op of ops) {
    switch (op.type) {
      case "put":
        if (op.keyspace === "default") db.put(op.key, op.value);
        else events.put(op.key, op.value);
        break;
      case "delete":
        if (op.keyspace === "default") db.delete(op.key);
        else events.delete(op.key);
        break;
      case "deleteRange":
        if (op.keyspace === "default") db.deleteRange({ gte: op.gte, lt: op.lt });
        else events.deleteRange({ gte: op.gte, lt: op.lt });
        break;
      case "flush":
        db.flush();
        break;
      case "batch": {
        const batch = db.batch();
        for (const inner of op.ops) {
          addToBatch(batch, events, inner);
        }
        batch.write();
        break;
      }
    }
  }
}

/** The batch methods both APIs share. */
interface BatchLike<K> {
  put(key: K, value: Bytes): unknown;
  put(key: string, value: JsonValue, keyspace: EventsKeyspace): unknown;
  delete(key: K): unknown;
  delete(key: string, keyspace: EventsKeyspace): unknown;
  deleteRange(range: { gte: K; lt: K }): unknown;
  deleteRange(range: { gte: string; lt: string }, keyspace: EventsKeyspace): unknown;
}

function addToBatch(batch: BatchLike<Bytes>, events: EventsKeyspace, op: Op): void {
  switch (op.type) {
    case "put":
      if (op.keyspace === "default") batch.put(op.key, op.value);
      else batch.put(op.key, op.value, events);
      break;
    case "delete":
      if (op.keyspace === "default") batch.delete(op.key);
      else batch.delete(op.key, events);
      break;
    case "deleteRange":
      if (op.keyspace === "default") batch.deleteRange({ gte: op.gte, lt: op.lt });
      else batch.deleteRange({ gte: op.gte, lt: op.lt }, events);
      break;
    case "batch":
    case "flush":
      throw new Error("the data set nests no batches or flushes");
  }
}

/** The data set's operations applied through the Promise API, each awaited. */
async function writeWithPromiseApi(
  db: Database<Bytes, Bytes>,
  events: Keyspace<string, JsonValue>,
): Promise<void> {
  for (const op of ops) {
    switch (op.type) {
      case "put":
        await (op.keyspace === "default"
          ? db.put(op.key, op.value)
          : events.put(op.key, op.value));
        break;
      case "delete":
        await (op.keyspace === "default" ? db.delete(op.key) : events.delete(op.key));
        break;
      case "deleteRange":
        await (op.keyspace === "default"
          ? db.deleteRange({ gte: op.gte, lt: op.lt })
          : events.deleteRange({ gte: op.gte, lt: op.lt }));
        break;
      case "flush":
        await db.flush();
        break;
      case "batch": {
        const batch = db.batch();
        for (const inner of op.ops) {
          addToBatch(batch, events, inner);
        }
        await batch.write();
        break;
      }
    }
  }
}

/** The files of a database directory: name → bytes. */
function files(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const name of readdirSync(dir).sort()) {
    out.set(name, readFileSync(join(dir, name)));
  }
  return out;
}

/** The directory holds at least one table and a non-empty WAL: the premise of these tests. */
function expectTablesAndWalTail(dir: string): void {
  const names = readdirSync(dir);
  const tables = names.filter((n) => n.endsWith(".sst"));
  const wals = names.filter((n) => /^wal-\d+\.log$/.test(n));
  expect(tables.length).toBeGreaterThan(0);
  expect(wals.length).toBeGreaterThan(0);
  expect(wals.some((w) => statSync(join(dir, w)).size > 100_000)).toBe(true);
}

/** Checks one keyspace read with binary encodings against the model. */
function checkBinaryKeyspace(
  store: SyncDatabase<Bytes, Bytes> | SyncKeyspace<Bytes, Bytes>,
  model: ExpectedKeyspace,
): void {
  const forward = [...store.iterator()];
  expect(printable(forward)).toEqual(printable(model.entries));
  const backward = [...store.iterator({ reverse: true })];
  expect(printable(backward)).toEqual(printable([...model.entries].reverse()));
  expect(store.count()).toBe(model.entries.length);
  for (const key of model.touched) {
    const entry = model.entries.find(([k]) => compareBytes(k, key) === 0);
    const got = store.get(key);
    expect(got === undefined ? undefined : hex(got), `get(${hex(key)})`).toBe(
      entry === undefined ? undefined : hex(entry[1]),
    );
  }
}

/** Everything a Node reader can observe of the data set, checked against the model. */
function checkInNode(dir: string): void {
  const db = openSync(dir, {
    keyEncoding: "binary",
    valueEncoding: "binary",
    createIfMissing: false,
  });
  try {
    checkBinaryKeyspace(db, want.default);

    // Bounded, reverse and limited iteration, prefixes, getMany: against the model's slices.
    const between = (gte: Bytes, lt: Bytes) =>
      want.default.entries.filter(([k]) => compareBytes(k, gte) >= 0 && compareBytes(k, lt) < 0);
    expect(printable([...db.iterator({ gte: kd(100), lt: kd(300) })])).toEqual(
      printable(between(kd(100), kd(300))),
    );
    const backwards = db.iterator({ gt: kd(100), lte: kd(300), reverse: true, limit: 7 });
    expect(printable([...backwards])).toEqual(
      printable(
        want.default.entries
          .filter(([k]) => compareBytes(k, kd(100)) > 0 && compareBytes(k, kd(300)) <= 0)
          .reverse()
          .slice(0, 7),
      ),
    );
    const prefix = Uint8Array.of(0x75, 0x01); // i in 256..511
    expect([...db.keys({ prefix })].map(hex)).toEqual(
      between(kd(256), kd(512)).map(([k]) => hex(k)),
    );
    expect(db.count({ prefix })).toBe(between(kd(256), kd(512)).length);
    const sample = [kd(0), kd(3), kd(5), kd(N / 2), kd(N + 5), kd(N - 15), kd(1)];
    expect(db.getMany(sample).map((v) => (v === undefined ? undefined : hex(v)))).toEqual(
      sample.map((key) => {
        const entry = want.default.entries.find(([k]) => compareBytes(k, key) === 0);
        return entry === undefined ? undefined : hex(entry[1]);
      }),
    );

    // The "events" keyspace, raw: exactly the bytes of the model.
    checkBinaryKeyspace(
      db.keyspace("events", { keyEncoding: "binary", valueEncoding: "binary" }),
      want.events,
    );

    // The "events" keyspace as UTF-8 keys and JSON values.
    const events = db.keyspace("events", { keyEncoding: "utf8", valueEncoding: "json" });
    const decoder = new TextDecoder();
    const entries = [...events.iterator()];
    expect(entries).toEqual(
      want.events.entries.map(([k, v]) => [
        decoder.decode(k),
        JSON.parse(decoder.decode(v)) as JsonValue,
      ]),
    );
    // Byte order, not JavaScript's string order: U+1F600 sorts after U+FFFD.
    expect(EMOJI_KEY < REPLACEMENT_KEY).toBe(true);
    expect(entries.slice(-2).map(([k]) => k)).toEqual([REPLACEMENT_KEY, EMOJI_KEY]);
    expect([...events.keys({ prefix: "zz:", reverse: true })]).toEqual([
      EMOJI_KEY,
      REPLACEMENT_KEY,
    ]);
    expect(events.get("ev:000000/é😀")).toEqual({ i: 0, gen: 1, tag: "t0" });
    expect(events.get("ev:000001")).toBeUndefined();
  } finally {
    db.close();
  }
}

/** `make()`, called on first use only. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** A database directory as its writer left it: the path, and every file's bytes then. */
interface Written {
  dir: string;
  files: Map<string, Buffer>;
}

/** The data set written natively into a fresh directory (once; later calls return it). */
const nativeWritten = once((): Written => {
  const dir = join(temp.path, "native");
  native("write", dir);
  return { dir, files: files(dir) };
});

/** The data set written by Node's synchronous API into a fresh directory (once). */
const nodeWritten = once((): Written => {
  const dir = join(temp.path, "node-sync");
  const db = openSync(dir, { keyEncoding: "binary", valueEncoding: "binary", errorIfExists: true });
  const events = db.keyspace("events", { keyEncoding: "utf8", valueEncoding: "json" });
  writeWithSyncApi(db, events);
  db.close();
  return { dir, files: files(dir) };
});

describe("the files have exactly the native engine's format, both ways in one run", () => {
  it("a database written natively (tables and a WAL tail) reads in Node: every key, value, order and keyspace", () => {
    const { dir } = nativeWritten();
    expectTablesAndWalTail(dir);
    checkInNode(dir);
    // Node's reading (and closing) left nothing the native check would object to.
    native("verify", dir);
  });

  it("a database written by Node's synchronous API (tables and a WAL tail) passes the native check", () => {
    const { dir } = nodeWritten();
    expectTablesAndWalTail(dir);
    native("verify", dir);
    checkInNode(dir);
  });

  it("the same operations give byte-identical files natively and in WebAssembly", () => {
    // The strongest form of "the same format": not only does each side read the other's files,
    // the same operations make the same bytes (tables, WAL, manifest). Should the engine ever
    // record something host-specific, relax this to the file names and kinds.
    // Compared as each writer left them, before anyone reopened them.
    const fromNative = nativeWritten().files;
    const fromNode = nodeWritten().files;
    expect([...fromNode.keys()]).toEqual([...fromNative.keys()]);
    for (const [name, bytes] of fromNative) {
      const other = fromNode.get(name);
      expect(other !== undefined && bytes.equals(other), `${name} is byte-identical`).toBe(true);
    }
  });

  it("a database written by the Promise API, and a checkpoint Node made of it while open, pass the native check", async () => {
    const dir = join(temp.path, "node-promise");
    const checkpoint = join(temp.path, "node-checkpoint");
    const db = await open(dir, {
      keyEncoding: "binary",
      valueEncoding: "binary",
      errorIfExists: true,
    });
    const events = await db.keyspace("events", { keyEncoding: "utf8", valueEncoding: "json" });
    await writeWithPromiseApi(db, events);
    // Taken while open, with the WAL tail still in the memtable.
    await db.checkpoint(checkpoint);
    await db.close();
    native("verify", dir);
    native("verify", checkpoint);
    checkInNode(checkpoint);
  });

  it("a checkpoint Node made of a natively written database passes the native check", () => {
    const checkpoint = join(temp.path, "native-checkpoint");
    const db = openSync(nativeWritten().dir, { createIfMissing: false });
    db.checkpoint(checkpoint);
    db.close();
    native("verify", checkpoint);
  });
});
