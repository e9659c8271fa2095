// The synchronous API (Node.js only): every call returns its result directly, as in
// better-sqlite3 or lmdb. Counts the visits of this script in demo-data/node-sync.
//
//   node examples/node/sync.mjs [directory]

import { fileURLToPath } from "node:url";

import { openSync } from "shaledb";

const dir = process.argv[2] ?? fileURLToPath(new URL("../../demo-data/node-sync", import.meta.url));
const db = openSync(dir, { valueEncoding: "json" });
try {
  const visits = db.transact((tx) => {
    const next = /** @type {number} */ (tx.get("visits") ?? 0) + 1;
    tx.put("visits", next);
    return next;
  });
  db.put(`visit/${new Date().toISOString()}`, { pid: process.pid }, { sync: true });
  const recent = [...db.keys({ prefix: "visit/", reverse: true, limit: 3 })]; // runs to its end
  console.log(`visit ${visits} of ${db.location}; latest: ${recent.map((k) => k.slice(6)).join(", ")}`);
} finally {
  db.close();
}
