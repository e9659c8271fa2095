// The package's main paths under each JavaScript runtime it supports besides the Node.js its
// tests run on (scripts/test-runtimes.sh runs this file under Bun, Deno, Node 22 and Node 24):
// the synchronous API, the Promise API with the engine in the calling thread (maintenance in
// worker threads) and in a worker thread, queues, topics, the change feed, a second process
// refused with LOCKED, and acknowledged synced writes surviving a SIGKILL. Plain node:assert, no
// test framework: every runtime runs the same file. Prints `ok <check>` per check; exits non-zero
// on the first failure.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { ShaleError, open, openSync } from "../dist/node.js";

const runtime =
  typeof Deno !== "undefined" ? `deno ${Deno.version.deno}` : typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.versions.node}`;
const here = dirname(fileURLToPath(import.meta.url));
const root = mkdtempSync(join(tmpdir(), "shaledb-runtime-"));
const VALUE = "v".repeat(300);

/** Runs check `name`, printing how it went. */
async function check(name, fn) {
  const started = performance.now();
  await fn(join(root, name.replace(/[^a-z0-9]+/gi, "-").slice(0, 40)));
  console.log(`ok ${runtime}: ${name} (${Math.round(performance.now() - started)} ms)`);
}

/** A child process of this runtime running child.mjs in `mode` on `dir`. */
function child(mode, dir) {
  const args = typeof Deno !== "undefined" ? ["run", "-A"] : [];
  return spawn(process.execPath, [...args, join(here, "child.mjs"), mode, dir], { stdio: ["pipe", "pipe", "inherit"] });
}

/** Resolves with the child's output lines once `until` holds for one (or it exits). */
function readLines(proc, until) {
  return new Promise((resolve, reject) => {
    const lines = [];
    let rest = "";
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (chunk) => {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        if (until(line, lines)) resolve(lines);
      }
    });
    proc.on("exit", (code) => (code === 0 ? resolve(lines) : reject(new Error(`child exited with ${code}: ${lines.join("|")}`))));
  });
}

try {
  await check("synchronous API: put, get, batch, iterate, delete, count, reopen", (dir) => {
    const db = openSync(dir, { memtableSize: 64 << 10 });
    for (let i = 0; i < 3000; i++) db.put(`k${String(i).padStart(5, "0")}`, `${VALUE}${i}`);
    db.batch([
      { type: "put", key: "a", value: "1" },
      { type: "delete", key: "k00000" },
    ]);
    assert.equal(db.get("a"), "1");
    assert.equal(db.get("k00000"), undefined);
    const keys = [...db.keys({ gte: "k00010", lt: "k00013" })];
    assert.deepEqual(keys, ["k00010", "k00011", "k00012"]);
    db.delete("a");
    assert.equal(db.count(), 2999);
    db.close();
    const again = openSync(dir);
    assert.equal(again.get("k02999"), `${VALUE}2999`);
    assert.equal(again.count(), 2999);
    again.close();
  });

  for (const engineThread of ["caller", "own"]) {
    await check(`Promise API, engineThread "${engineThread}": writes that flush and compact, compact(), count()`, async (dir) => {
      const db = await open(dir, { engineThread, memtableSize: 64 << 10 });
      for (let i = 0; i < 4000; i++) await db.put(`k${i % 2000}`, `${VALUE}${i}`);
      await db.compact();
      assert.equal(await db.count(), 2000);
      assert.equal(await db.get("k1999"), `${VALUE}3999`);
      const stats = await db.stats();
      assert.ok(stats.levels.slice(1).some((l) => l.files > 0), JSON.stringify(stats.levels));
      const first = await db.iterator({ limit: 2 }).all();
      assert.deepEqual(first.map(([k]) => k), ["k0", "k1"]);
      await db.close();
    });
  }

  await check("queues: push, reserve, ack, a waiting take woken by a push", async (dir) => {
    const db = await open(dir);
    const q = await db.queue("jobs");
    await q.push("one");
    const item = await q.reserve();
    assert.equal(item?.value, "one");
    await q.ack(item);
    const waiting = q.take({ waitMs: 10_000 });
    await q.push("two");
    assert.equal((await waiting)?.value, "two");
    assert.equal(await q.take(), undefined);
    await db.close();
  });

  await check("topics: append, read from an offset, a group's committed offset", async (dir) => {
    const db = await open(dir);
    const t = await db.topic("events");
    for (let i = 0; i < 10; i++) await t.append(`e${i}`);
    const records = await t.read({ from: 5 });
    assert.deepEqual(records.map((r) => r.value), ["e5", "e6", "e7", "e8", "e9"]);
    await t.commit("readers", 7);
    assert.equal(await t.committed("readers"), 7);
    await db.close();
  });

  await check("change feed: every committed write in order, from a sequence number", async (dir) => {
    const db = await open(dir);
    await db.put("a", "1");
    await db.put("b", "2");
    await db.delete("a");
    const changes = [];
    for await (const change of db.changes({ since: 1 })) changes.push(change);
    assert.deepEqual(
      changes.map((c) => c.ops.map((op) => op.type)),
      [["put"], ["put"], ["delete"]],
    );
    assert.equal(changes[1].seq, changes[0].lastSeq + 1);
    await db.close();
  });

  await check("live queries: a watch hears writes in its range only; a live query re-runs", async (dir) => {
    const db = await open(dir);
    const watcher = db.watch({ prefix: "w:" }, { values: true });
    const heard = watcher.next();
    await db.put("elsewhere", "1");
    await db.put("w:1", "one");
    assert.deepEqual((await heard).value.changes, [{ type: "put", key: "w:1", value: "one" }]);
    watcher.close();
    const runs = [];
    let rerun;
    const rerunSeen = new Promise((resolve) => (rerun = resolve));
    const subscription = db
      .liveQuery({ prefix: "w:" }, () => db.keys({ prefix: "w:" }).all(), { coalesce: "tick" })
      .subscribe((keys) => {
        runs.push(keys);
        if (runs.length === 2) rerun();
      });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await db.put("w:2", "two");
    await rerunSeen;
    assert.deepEqual(runs, [["w:1"], ["w:1", "w:2"]]);
    subscription.unsubscribe();
    await db.close();
  });

  await check("a second process is refused with LOCKED while the first holds the database", async (dir) => {
    const holder = child("hold", dir);
    await readLines(holder, (line) => line === "held");
    let refused;
    try {
      openSync(dir).close();
    } catch (error) {
      refused = error;
    }
    assert.ok(refused instanceof ShaleError, String(refused));
    assert.equal(refused.code, "LOCKED");
    const ended = readLines(holder, () => false);
    holder.stdin.end();
    await ended;
    openSync(dir).close();
  });

  await check("SIGKILL while writing synced: every acknowledged write survives", async (dir) => {
    const writer = child("write", dir);
    let acked = -1;
    await readLines(writer, (line) => {
      acked = Number(line);
      if (acked >= 600) writer.kill("SIGKILL");
      return false;
    }).catch(() => undefined);
    assert.ok(acked >= 600, `acknowledged ${acked}`);
    const db = openSync(dir);
    for (let i = 0; i <= acked; i++) assert.equal(db.get(`k${i}`), `v${i}-${"x".repeat(200)}`, `k${i}`);
    db.close();
  });
} finally {
  rmSync(root, { recursive: true, force: true });
}
