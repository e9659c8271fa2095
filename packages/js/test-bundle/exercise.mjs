// What every bundle of scripts/pack-smoke.sh does with the package it carries: writes and reads
// back through the synchronous API and the Promise API (in this thread: a bundle does not carry
// the engine worker's file), reopening to check that the writes lasted, and checks that the
// Promise API's default engine thread fails with a typed error saying what to do.
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

  const promised = await open(join(dir, "promise-db"), { engineThread: "caller" });
  await promised.put("k", "v");
  expect("open get", await promised.get("k"), "v");
  await promised.close();

  const failure = await open(join(dir, "worker-db")).then(
    () => undefined,
    (error) => error,
  );
  if (failure === undefined || failure.code !== "IO" || !failure.message.includes("engineThread")) {
    throw new Error(`open() with its engine worker in a bundle: expected IO naming engineThread, got ${failure}`);
  }
  return `ok ${version()}`;
}
