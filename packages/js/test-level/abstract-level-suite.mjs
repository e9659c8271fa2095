// abstract-level's own test suite (tape) on ShaleLevel, wired as memory-level's test/index.js
// wires it: `node test-level/abstract-level-suite.mjs` (after the build). Every database is a
// fresh directory under the system's temporary directory, removed at the end. The engine runs in
// this thread (`engineThread: "caller"`): the suite opens thousands of databases, and a worker
// thread each would make it several times slower; `SHALEDB_LEVEL_ENGINE=own` runs it in workers.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import test from "tape";
import suite from "abstract-level/test/index.js";
import { ShaleLevel } from "shaledb/level";

const root = mkdtempSync(join(tmpdir(), "shaledb-level-"));
const engineThread = process.env.SHALEDB_LEVEL_ENGINE === "own" ? "own" : "caller";
let n = 0;

test.onFinish(() => rmSync(root, { recursive: true, force: true }));

suite({
  test,
  factory(options) {
    n += 1;
    return new ShaleLevel(join(root, `db${n}`), { ...options, shaledb: { engineThread } });
  },
});
