// An event store on ShaleDB, the way a small Node.js service would keep one: append events,
// query a time range, count, look up the latest events of one type through an index, and see
// that everything is still there after closing and reopening the database.
//
//   node examples/node/event-store.mjs [directory]      (or: npm run demo, from the repo root)
//
// The database lives in demo-data/node-events under the repository root unless a directory is
// given. Each run appends more events to it; delete the directory to start over.
//
// It uses the Promise API (`await open(...)`), the one browsers get too.

import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { open, ShaleError, version } from "shaledb";

/**
 * One event. Stored as JSON in keyspace "events" under `<timestamp, 13 digits>-<id, 9 digits>`,
 * so that byte order (the order ShaleDB keeps keys in) is time order.
 *
 * @typedef {{ id: number, ts: number, type: EventType, user: string, cents?: number }} Event
 * @typedef {"page_view" | "signup" | "purchase" | "logout"} EventType
 */

/** @typedef {import("shaledb").Database<string, import("shaledb").JsonValue>} Db */
/** @typedef {import("shaledb").Keyspace<string, import("shaledb").JsonValue>} EventsKeyspace */
/** @typedef {import("shaledb").Keyspace<string, string>} IndexKeyspace */

const EVENTS_PER_RUN = 5000;
/** The simulated events of one run are spread over the hour before it. */
const SPREAD_MS = 60 * 60 * 1000;

const defaultDir = fileURLToPath(new URL("../../demo-data/node-events", import.meta.url));
const dir = process.argv[2] ?? defaultDir;

/** @param {number} ts @param {number} id */
const eventKey = (ts, id) => `${String(ts).padStart(13, "0")}-${String(id).padStart(9, "0")}`;
/** The smallest key at or after time `ts` (ids come after the "-"). @param {number} ts */
const timeKey = (ts) => String(ts).padStart(13, "0");
/** An index entry: `<type>/<event key>` → "" (the key is all the index needs). */
const indexKey = (/** @type {EventType} */ type, /** @type {string} */ key) => `${type}/${key}`;

const n = (/** @type {number} */ x) => x.toLocaleString("en-US");
const time = (/** @type {number} */ ts) => new Date(ts).toTimeString().slice(0, 8);
const money = (/** @type {number} */ cents) =>
  `$${(cents / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const size = (/** @type {number} */ bytes) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1 << 20
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / (1 << 20)).toFixed(1)} MiB`;
const plural = (/** @type {number} */ count, /** @type {string} */ noun) =>
  `${n(count)} ${noun}${count === 1 ? "" : "s"}`;
/** Prints one line of the report: a label, then what happened. */
const say = (/** @type {string} */ label, /** @type {string} */ text) =>
  console.log(`${label.padEnd(9)} ${text}`);

/** A small deterministic random generator (mulberry32), so runs look alike. @param {number} seed */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Reserves `count` event ids in one optimistic transaction: read the counter, write it back
 * increased. `transact` commits, and retries the body if another writer changed the counter
 * in between (error code CONFLICT).
 *
 * @param {Db} db
 * @param {number} count
 * @returns {Promise<number>} the first id reserved
 */
function reserveIds(db, count) {
  return db.transact(async (tx) => {
    const next = /** @type {number | undefined} */ (await tx.get("counter/nextEventId")) ?? 1;
    tx.put("counter/nextEventId", next + count);
    return next;
  });
}

/**
 * Appends one event: the event and its index entry in one atomic batch, so the index never
 * points at a missing event (nor misses one), whatever happens to the process.
 *
 * @param {Db} db @param {EventsKeyspace} events @param {IndexKeyspace} byType @param {Event} event
 * @returns {Promise<string>} the event's key
 */
async function append(db, events, byType, event) {
  const key = eventKey(event.ts, event.id);
  await db.batch().put(key, event, events).put(indexKey(event.type, key), "", byType).write();
  return key;
}

/** @param {() => number} rand @param {number} id @param {number} ts @returns {Event} */
function makeEvent(rand, id, ts) {
  const r = rand();
  /** @type {EventType} */
  const type = r < 0.7 ? "page_view" : r < 0.8 ? "signup" : r < 0.95 ? "purchase" : "logout";
  const user = `user-${String(Math.floor(rand() * 50)).padStart(2, "0")}`;
  return type === "purchase"
    ? { id, ts, type, user, cents: 100 + Math.floor(rand() * 9900) }
    : { id, ts, type, user };
}

async function main() {
  // The default keyspace holds counters and offsets as JSON; "events" holds the events as JSON;
  // "by-type" is a secondary index whose keys say everything (values are empty strings).
  /** @type {Db} */
  const db = await open(dir, { valueEncoding: "json" });
  const events = await db.keyspace("events", { valueEncoding: "json" });
  const byType = await db.keyspace("by-type");
  console.log(`ShaleDB event store: shaledb ${version()} (WebAssembly) on Node.js ${process.versions.node}`);

  try {
    await work(db, events, byType);
  } finally {
    // 9. Close: the LOCK file goes away; every write acknowledged so far is on disk.
    await db.close();
  }

  // 10. Reopen: everything is there.
  const reopened = await open(dir, { valueEncoding: "json" });
  try {
    const count = await (await reopened.keyspace("events", { valueEncoding: "json" })).count();
    const offset = await reopened.get("offset/billing");
    const runs = await reopened.get("counter/runs");
    say("reopen", `${plural(count, "event")}, run counter ${runs}, offset ${offset}: all there`);
  } finally {
    await reopened.close();
  }
  console.log(`\nRun it again and the events accumulate; delete ${dir} to start over.`);
}

/**
 * Steps 1 to 8: what the service does with its open database.
 *
 * @param {Db} db @param {EventsKeyspace} events @param {IndexKeyspace} byType
 */
async function work(db, events, byType) {
  const run = await db.transact(async (tx) => {
    const runs = /** @type {number | undefined} */ (await tx.get("counter/runs")) ?? 0;
    tx.put("counter/runs", runs + 1);
    return runs + 1;
  });
  say("database", `${db.location} (run ${run}; pass another directory as an argument)`);
  console.log();

  // 1. Append: ids from a transaction, then one atomic batch per event.
  const rand = random(run);
  const now = Date.now();
  const firstId = await reserveIds(db, EVENTS_PER_RUN);
  const started = performance.now();
  for (let i = 0; i < EVENTS_PER_RUN; i++) {
    const ts = now - SPREAD_MS + Math.floor((i * SPREAD_MS) / EVENTS_PER_RUN);
    await append(db, events, byType, makeEvent(rand, firstId + i, ts));
  }
  const ms = performance.now() - started;
  say("append", `${n(EVENTS_PER_RUN)} events in ${ms.toFixed(0)} ms, each one atomic batch: event + index entry`);
  say("ids", `${n(firstId)} to ${n(firstId + EVENTS_PER_RUN - 1)}, reserved by a transaction on a counter`);

  // 2. A time range: the five minutes from 15 to 10 minutes ago. gte/lt bounds on the keys.
  const from = now - 15 * 60_000;
  const to = now - 10 * 60_000;
  /** @type {Record<string, number>} */
  const perType = {};
  let revenue = 0;
  for await (const [, value] of events.iterator({ gte: timeKey(from), lt: timeKey(to) })) {
    const event = /** @type {Event} */ (value);
    perType[event.type] = (perType[event.type] ?? 0) + 1;
    revenue += event.cents ?? 0;
  }
  const inRange = Object.values(perType).reduce((a, b) => a + b, 0);
  const breakdown = Object.entries(perType)
    .sort((a, b) => b[1] - a[1])
    .map(([type, count]) => `${n(count)} ${type}`);
  const summary = `${plural(inRange, "event")} (${breakdown.join(", ")}), ${money(revenue)} sold`;
  say("range", `${time(from)} up to ${time(to)}: ${summary}`);

  // 3. Counts: all events, and one type through a prefix of the index.
  const total = await events.count();
  const purchases = await byType.count({ prefix: "purchase/" });
  say("count", `${n(total)} events stored, ${n(purchases)} of them purchases (prefix "purchase/" of the index)`);

  // 4. The latest three purchases: a reverse prefix scan of the index (keys only), then the events.
  const latestKeys = await byType.keys({ prefix: "purchase/", reverse: true, limit: 3 }).all();
  const latestEvents = await events.getMany(latestKeys.map((k) => k.slice("purchase/".length)));
  const latest = /** @type {Event[]} */ (latestEvents);
  say("latest", latest.map((e) => `${time(e.ts)} ${e.user} ${money(e.cents ?? 0)}`).join(", "));

  // 5. A snapshot: a consistent view while writes go on.
  const snapshot = await db.snapshot();
  const moreId = await reserveIds(db, 10);
  for (let i = 0; i < 10; i++) {
    await append(db, events, byType, makeEvent(rand, moreId + i, Date.now()));
  }
  const seen = await events.count({ snapshot });
  snapshot.close();
  say("snapshot", `still sees ${n(seen)} events after 10 more were appended (now ${n(await events.count())})`);

  // 6. An important write: a consumer's offset, flushed to disk (fdatasync) before it returns.
  const [lastKey] = await events.keys({ reverse: true, limit: 1 }).all();
  await db.put("offset/billing", lastKey ?? "", { sync: true });
  say("sync", `offset of consumer "billing" = ${lastKey}, written with { sync: true }`);

  // 7. One process at a time: a second open of the same directory fails with code LOCKED.
  try {
    const again = await open(dir);
    await again.close();
    say("locked", "unexpected: a second open succeeded");
  } catch (error) {
    if (!(error instanceof ShaleError) || error.code !== "LOCKED") throw error;
    say("locked", `a second open of the directory fails: ShaleError ${error.code}`);
  }

  // 8. Stats and files. Flush writes the memtable to a table now (automatic maintenance would
  //    do it by itself once the memtable is full), so the listing shows one.
  await db.flush();
  const stats = await db.stats();
  const levels = stats.levels
    .map((level, i) => (level.files ? `L${i}: ${plural(level.files, "table")}, ${size(level.bytes)}` : ""))
    .filter(Boolean);
  const amplification = stats.writeAmplification.toFixed(2);
  say("stats", `${n(stats.entries)} entries; ${levels.join(", ") || "no tables"}; write amplification ${amplification}`);
  const files = readdirSync(db.location)
    .sort()
    .map((name) => ({ name, bytes: statSync(join(db.location, name)).size }));
  const tables = files.filter(({ name }) => name.endsWith(".sst"));
  const tableBytes = tables.reduce((sum, { bytes }) => sum + bytes, 0);
  const others = files
    .filter(({ name }) => !name.endsWith(".sst"))
    .map(({ name, bytes }) => `${name} ${size(bytes)}`);
  say("files", [`${plural(tables.length, "table")} (*.sst) ${size(tableBytes)}`, ...others].join(", "));
}

main().catch((error) => {
  if (error instanceof ShaleError) {
    console.error(`event store failed: ShaleError ${error.code}: ${error.message}`);
    if (error.code === "LOCKED") console.error("(is another demo still running on this directory?)");
  } else {
    console.error("event store failed:", error);
  }
  process.exitCode = 1;
});
