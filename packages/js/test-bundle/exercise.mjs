// What every bundle of scripts/pack-smoke.sh does with the package it carries: writes and reads
// back through the synchronous API and the Promise API (its default, the engine in this thread),
// reopening to check that the writes lasted — enough of them that flush and compaction must run,
// which a bundle without the maintenance worker's file does in this thread instead — and checks
// that `engineThread: "own"` (a worker file the bundle lacks) fails with a typed error saying
// what to do.
import { join } from "node:path";

/** Throws unless `actual` is `expected` (JSON-equal). */
function expect(what, actual, expected) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

/** Runs the checks with the package's `{ open, openSync, version }` in directory `dir`. */
export async function exercise({ open, openSync, version }, dir) {
  const location = join(dir, "sync-db");
  const db = openSync(location, { valueEncoding: "json" });
  db.put("user:1", { name: "Ada" });
  db.close();
  const again = openSync(location, { valueEncoding: "json" });
  expect("openSync get after reopen", again.get("user:1"), { name: "Ada" });
  again.close();

  const promisedAt = join(dir, "promise-db");
  const promised = await open(promisedAt, { memtableSize: 64 * 1024 });
  await promised.put("k", "v");
  expect("open get", await promised.get("k"), "v");
  const value = "x".repeat(500);
  for (let i = 0; i < 2000; i++) {
    await promised.put(`n${(i * 7919) % 1000}`, value);
  }
  await promised.close();
  const reopened = await open(promisedAt);
  expect("open count after reopen", await reopened.count(), 1001);
  expect("open get after reopen", await reopened.get("k"), "v");
  await reopened.close();

  const failure = await open(join(dir, "worker-db"), { engineThread: "own" }).then(
    () => undefined,
    (error) => error,
  );
  if (failure === undefined || failure.code !== "IO" || !failure.message.includes("engineThread")) {
    throw new Error(`open({ engineThread: "own" }) in a bundle: expected IO naming engineThread, got ${failure}`);
  }
  return `ok ${version()}`;
}
