// A database written in the browser opens natively and in Node, unchanged, and the other way
// round: export() gives a plain tar of the database directory (extracted here with the system's
// tar), importDatabase() takes one (made here with the system's tar from a directory written by
// native ShaleDB). The data set (test/fixtures/dataset.ts) leaves tables and a WAL tail in two
// keyspaces. An export is a checkpoint (everything in tables, an empty log): its tables are byte
// for byte what is in the OPFS slot files after their header.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import type { TestPage as Page } from "./fixtures/browser.js";
import { afterAll, beforeAll, expect, it } from "vitest";

import { openSync, type Batch, type Store } from "shaledb";

import { SLOT_HEADER_SIZE, decodeSlotHeader } from "../src/browser/opfs/slot-header.js";
import { TarWriter } from "../src/archive/tar/writer.js";
import { dataset, expected, type Op } from "../test/fixtures/dataset.js";
import { BUILD_TIMEOUT_MS, buildNative, run, tempDir } from "../test/fixtures/processes.js";
import { Session } from "./fixtures/session.js";

const N = 2000;
const ops = dataset(N);
const want = expected(ops);
const session = new Session();
const temp = tempDir("browser-interop");
let interop = "";
let page: Page;

beforeAll(async () => {
  interop = buildNative("interop").interop ?? "";
  await session.start();
  page = await session.page();
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await session.stop();
  temp.cleanup();
});

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64");

/** The data set with bytes as base64, for page.evaluate. */
type WireOp =
  | { type: "put"; keyspace: "default" | "events"; key: string; value: string }
  | { type: "delete"; keyspace: "default" | "events"; key: string }
  | { type: "deleteRange"; keyspace: "default" | "events"; gte: string; lt: string }
  | { type: "batch"; ops: WireOp[] }
  | { type: "flush" };

function toWire(op: Op): WireOp {
  switch (op.type) {
    case "put":
      return op.keyspace === "default"
        ? { type: "put", keyspace: "default", key: b64(op.key), value: b64(op.value) }
        : { type: "put", keyspace: "events", key: op.key, value: JSON.stringify(op.value) };
    case "delete":
      return { type: "delete", keyspace: op.keyspace, key: op.keyspace === "default" ? b64(op.key) : op.key };
    case "deleteRange":
      return op.keyspace === "default"
        ? { type: "deleteRange", keyspace: "default", gte: b64(op.gte), lt: b64(op.lt) }
        : { type: "deleteRange", keyspace: "events", gte: op.gte, lt: op.lt };
    case "batch":
      return { type: "batch", ops: op.ops.map(toWire) };
    case "flush":
      return { type: "flush" };
  }
}

/** Both keyspaces' entries as printable pairs: hex key = base64 value. */
function printable(entries: readonly (readonly [Uint8Array, Uint8Array])[]): string[] {
  return entries.map(([k, v]) => `${Buffer.from(k).toString("hex")} = ${b64(v)}`);
}

/** Reads database `name` in the page: every entry of both keyspaces, as printable pairs. */
function readInPage(name: string): Promise<{ default: string[]; events: string[] }> {
  return page.evaluate(async (n) => {
    const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    const db = await shaledb.open(n, { keyEncoding: "binary", valueEncoding: "binary", createIfMissing: false });
    const events = await db.keyspace("events", { keyEncoding: "binary", valueEncoding: "binary" });
    const dump = async (store: Store<Uint8Array, Uint8Array>): Promise<string[]> =>
      (await store.iterator().all()).map(([k, v]) => `${hex(k)} = ${toBase64(v)}`);
    const result = { default: await dump(db), events: await dump(events) };
    await db.close();
    return result;
  }, name);
}

it("a database written in the browser, exported, opens natively and in Node", async () => {
  const archive = await page.evaluate(async (wireOps: WireOp[]) => {
    const db = await shaledb.open("written-in-browser", { keyEncoding: "binary", valueEncoding: "binary" });
    const events = await db.keyspace("events", { valueEncoding: "json" });
    const bytes = (text: string): Uint8Array => fromBase64(text);
    const apply = async (op: WireOp, batch?: Batch<Uint8Array, Uint8Array>): Promise<void> => {
      const ks = op.type !== "batch" && op.type !== "flush" && op.keyspace === "events";
      switch (op.type) {
        case "put":
          if (batch) ks ? batch.put(op.key, JSON.parse(op.value), events) : batch.put(bytes(op.key), bytes(op.value));
          else await (ks ? events.put(op.key, JSON.parse(op.value)) : db.put(bytes(op.key), bytes(op.value)));
          break;
        case "delete":
          if (batch) ks ? batch.delete(op.key, events) : batch.delete(bytes(op.key));
          else await (ks ? events.delete(op.key) : db.delete(bytes(op.key)));
          break;
        case "deleteRange":
          if (batch) ks ? batch.deleteRange({ gte: op.gte, lt: op.lt }, events) : batch.deleteRange({ gte: bytes(op.gte), lt: bytes(op.lt) });
          else await (ks ? events.deleteRange({ gte: op.gte, lt: op.lt }) : db.deleteRange({ gte: bytes(op.gte), lt: bytes(op.lt) }));
          break;
        case "flush":
          await db.flush();
          break;
        case "batch": {
          const b = db.batch();
          for (const inner of op.ops) await apply(inner, b);
          await b.write();
          break;
        }
      }
    };
    for (const op of wireOps) await apply(op);
    const blob = await db.export(); // taken while open: the log's tail goes into a table
    await db.close();
    // Again, and closed right after, so that the slot files can be compared with it below.
    const again = await shaledb.open("written-in-browser");
    const second = await again.export();
    await again.close();
    const base64 = async (b: Blob): Promise<string> => toBase64(new Uint8Array(await b.arrayBuffer()));
    return { tar: await base64(blob), second: await base64(second) };
  }, ops.map(toWire));

  const tarFile = join(temp.path, "export.tar");
  writeFileSync(tarFile, Buffer.from(archive.tar, "base64"));
  const out = join(temp.path, "extracted");
  mkdirSync(out);
  execFileSync("tar", ["-xf", tarFile, "-C", out]);
  expect(readdirSync(out)).toEqual(["written-in-browser"]);
  const dir = join(out, "written-in-browser");
  const names = readdirSync(dir);
  expect(names.some((n) => n.endsWith(".sst"))).toBe(true);
  expect(names.some((n) => /^wal-\d+\.log$/.test(n))).toBe(true);
  expect(names).not.toContain("LOCK");

  // The tables of the second export are the slot files' contents after their header, byte for
  // byte (its manifest and empty log are the checkpoint's own).
  const secondTar = join(temp.path, "second.tar");
  writeFileSync(secondTar, Buffer.from(archive.second, "base64"));
  const secondOut = join(temp.path, "second");
  mkdirSync(secondOut);
  execFileSync("tar", ["-xf", secondTar, "-C", secondOut]);
  const secondDir = join(secondOut, "written-in-browser");
  const secondNames = readdirSync(secondDir);
  const slots = await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const dirHandle = await (await root.getDirectoryHandle("shaledb")).getDirectoryHandle("written-in-browser");
    const files: string[] = [];
    for await (const handle of dirHandle.values()) {
      if (handle.kind === "file") files.push(toBase64(new Uint8Array(await (await (handle as FileSystemFileHandle).getFile()).arrayBuffer())));
    }
    return files;
  });
  const inSlots = new Map<string, Buffer>();
  for (const slot of slots.map((s) => Buffer.from(s, "base64"))) {
    const header = decodeSlotHeader(slot.subarray(0, SLOT_HEADER_SIZE));
    const name = header.current === undefined ? undefined : header.copies[header.current]?.name;
    if (name !== undefined) inSlots.set(name, slot.subarray(SLOT_HEADER_SIZE));
  }
  const tables = secondNames.filter((n) => n.endsWith(".sst"));
  expect(tables.length).toBeGreaterThan(0);
  for (const name of tables) {
    expect(readFileSync(join(secondDir, name)).equals(inSlots.get(name) as Buffer), name).toBe(true);
  }

  // Native ShaleDB finds exactly the data set.
  const verified = run(interop, ["verify", dir, String(N)]);
  expect(verified.stderr).toBe("");
  expect(verified.stdout.trim()).toBe("ok");

  // And so does Node.
  const db = openSync(dir, { keyEncoding: "binary", valueEncoding: "binary" });
  const events = db.keyspace("events", { keyEncoding: "binary", valueEncoding: "binary" });
  expect(printable([...db.iterator()])).toEqual(printable(want.default.entries));
  expect(printable([...events.iterator()])).toEqual(printable(want.events.entries));
  db.close();
});

it("a database written natively imports into the browser and reads back whole", async () => {
  const dir = join(temp.path, "native");
  const written = run(interop, ["write", dir, String(N)]);
  expect(written.stdout.trim()).toBe("ok");
  const tarFile = join(temp.path, "native.tar");
  execFileSync("tar", ["-cf", tarFile, "-C", temp.path, "native"]);
  const tar = readFileSync(tarFile).toString("base64");

  const imported = await page.evaluate(async (t) => {
    await shaledb.importDatabase("imported", new Blob([fromBase64(t) as Uint8Array<ArrayBuffer>]));
    const again = await outcome(shaledb.importDatabase("imported", fromBase64(t)));
    return again?.code;
  }, tar);
  expect(imported).toBe("ALREADY_EXISTS");
  const read = await readInPage("imported");
  expect(read.default).toEqual(printable(want.default.entries));
  expect(read.events).toEqual(printable(want.events.entries));

  // Regression: a bad archive with { overwrite: true } deleted the database it was to replace
  // before finding out the archive was bad. Now the database stays as it was.
  const badArchive = new TarWriter("db", 0);
  badArchive.addFile("CURRENT", Buffer.from("MANIFEST-000099\n")); // names a manifest it lacks
  const bad = Buffer.from(await badArchive.finish().arrayBuffer()).toString("base64");
  const kept = await page.evaluate(async (b) => {
    const db = await shaledb.open("precious");
    await db.put("k", "v");
    await db.close();
    const failed = await outcome(shaledb.importDatabase("precious", fromBase64(b), { overwrite: true }));
    const reopened = await shaledb.open("precious", { createIfMissing: false });
    const value = await reopened.get("k");
    await reopened.close();
    return { failed: failed?.code, value, scratch: (await shaledb.listDatabases()).filter((n) => n.startsWith(".")) };
  }, bad);
  expect(kept).toEqual({ failed: "CORRUPTION", value: "v", scratch: [] });

  // { overwrite: true } replaces it.
  await page.evaluate(async (t) => {
    const db = await shaledb.open("imported");
    await db.put("extra", "x");
    await db.close();
    await shaledb.importDatabase("imported", fromBase64(t), { overwrite: true });
  }, tar);
  const replaced = await readInPage("imported");
  expect(replaced.default).toEqual(printable(want.default.entries));
});
