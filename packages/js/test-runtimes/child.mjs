// Child process of probe.mjs, run by the same runtime. Usage: <runtime> child.mjs <mode> <dir>
//   hold  — opens the database, prints `held`, keeps it open until its standard input ends.
//   write — opens it with the Promise API (small memtables: flushes and compactions run in the
//           maintenance workers) and writes synced puts k0, k1, ... forever, printing `i` once
//           put i was acknowledged; the parent kills it with SIGKILL.
import { writeSync } from "node:fs";

import { open, openSync } from "../dist/node.js";

const [mode, dir] = (typeof Deno === "undefined" ? process.argv.slice(2) : Deno.args);
if (mode === "hold") {
  const db = openSync(dir);
  writeSync(1, "held\n");
  process.stdin.resume();
  process.stdin.on("end", () => {
    db.close();
    process.exit(0);
  });
} else if (mode === "write") {
  const db = await open(dir, { memtableSize: 64 << 10 });
  for (let i = 0; ; i++) {
    await db.put(`k${i}`, `v${i}-${"x".repeat(200)}`, { sync: true });
    writeSync(1, `${i}\n`);
  }
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
