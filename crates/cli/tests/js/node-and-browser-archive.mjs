// The CLI on databases written by the npm package (scripts/test.sh runs this after the JS
// build): a database Node writes (openSync), dumped, verified and inspected by the CLI; and an
// archive made by the browser's own export writer (TarWriter, packages/js/src/browser/worker/
// tar) from that database's files, imported by the CLI and dumped again (the same keys).
//
// Usage: node crates/cli/tests/js/node-and-browser-archive.mjs <shaledb binary> [packages/js]
// Prints `cli-js: N passed, N failed` and exits non-zero on a failure.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { checks, cli, equal, lines } from "./checks.mjs";

const [bin, pkgArg = "packages/js"] = process.argv.slice(2);
if (!bin) {
  console.error("usage: node-and-browser-archive.mjs <shaledb binary> [packages/js]");
  process.exit(2);
}
const pkg = resolve(pkgArg);
const { openSync } = await import(pathToFileURL(join(pkg, "dist/node.js")).href);
const { TarWriter } = await import(
  pathToFileURL(join(pkg, "dist/archive/tar/writer.js")).href
);

const { check, finish } = checks("cli-js");
const shaledb = cli(bin);

const tmp = mkdtempSync(join(tmpdir(), "shaledb-cli-js-"));
try {
  const dir = join(tmp, "node-db");
  const db = openSync(dir, { valueEncoding: "json" });
  db.put("user:1", { name: "Ada" });
  db.put("user:2", { name: "Grace" });
  const blobs = db.keyspace("blobs", { keyEncoding: "binary", valueEncoding: "binary" });
  blobs.put(new Uint8Array([1, 255]), new Uint8Array([0, 128]));
  const jobs = db.queue("jobs");
  jobs.push("resize photo:1");
  db.close();

  const expected = [
    { keyspace: "default", key: "user:1", value: { name: "Ada" } },
    { keyspace: "default", key: "user:2", value: { name: "Grace" } },
    { keyspace: "blobs", key: { base64: "Af8=" }, value: { base64: "AIA=" } },
  ];
  let dump;
  await check("the CLI dumps a database Node wrote", () => {
    dump = shaledb("dump", dir, "--value-encoding", "json");
    equal(lines(dump), expected, "dump");
  });
  await check("the CLI verifies a database Node wrote (exit 0)", () => {
    const run = spawnSync(bin, ["verify", dir], { encoding: "utf8" });
    equal(run.status, 0, `verify exit code (${run.stdout}${run.stderr})`);
  });
  await check("the CLI sees the queue Node pushed to", () => {
    const [q] = lines(shaledb("queue", dir, "jobs"));
    equal([q.queue, q.items, q.next.value], ["jobs", 1, "resize photo:1"], "queue");
  });
  // The browser's export writer (what export() in a browser runs over its files).
  const tar = new TarWriter("node-db", Math.floor(Date.now() / 1000));
  for (const name of readdirSync(dir).sort()) {
    if (name !== "LOCK") tar.addFile(name, new Uint8Array(readFileSync(join(dir, name))));
  }
  const archive = join(tmp, "browser-export.tar");
  writeFileSync(archive, new Uint8Array(await tar.finish().arrayBuffer()));
  await check("the CLI imports the browser's archive and it holds the same keys", () => {
    const out = join(tmp, "imported");
    shaledb("import", archive, out);
    equal(lines(shaledb("dump", out, "--value-encoding", "json")), expected, "imported dump");
  });
  await check("Node opens a database the CLI exported and imported", () => {
    const exported = join(tmp, "cli-export.tar");
    shaledb("export", dir, exported);
    const out = join(tmp, "reimported");
    shaledb("import", exported, out);
    const again = openSync(out, { valueEncoding: "json" });
    try {
      equal(again.get("user:2"), { name: "Grace" }, "get after import");
    } finally {
      again.close();
    }
  });
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
finish();
