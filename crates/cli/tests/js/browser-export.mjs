// The CLI on a database a browser exported, and a browser on one the CLI exported: headless
// Chromium (playwright-core, as packages/js's browser tests drive it) loads the built package
// from packages/js, writes a database in OPFS and export()s it; the CLI imports, verifies and
// dumps the archive. Then the CLI exports a database it loaded, and the page importDatabase()s
// it and reads it back.
//
// Usage: node crates/cli/tests/js/browser-export.mjs <shaledb binary> [packages/js]
// Needs the built package (dist/, wasm/) and Chromium (SHALEDB_CHROMIUM, default
// /usr/bin/chromium). Prints `cli-browser: N passed, N failed`; exits non-zero on a failure.
import { execFileSync } from "node:child_process";
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { extname, join, normalize, resolve } from "node:path";

import { checks, cli, equal, lines } from "./checks.mjs";

const [bin, pkgArg = "packages/js"] = process.argv.slice(2);
if (!bin) {
  console.error("usage: browser-export.mjs <shaledb binary> [packages/js]");
  process.exit(2);
}
const root = resolve(pkgArg);
const { chromium } = createRequire(join(root, "package.json"))("playwright-core");

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };
const server = createServer((request, response) => {
  const file = normalize(join(root, decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname)));
  let ok = file.startsWith(root);
  try {
    ok &&= statSync(file).isFile();
  } catch {
    ok = false;
  }
  if (!ok) return void response.writeHead(404).end();
  response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
  createReadStream(file).pipe(response);
});
await new Promise((done) => server.listen(0, "127.0.0.1", done));
const origin = `http://127.0.0.1:${server.address().port}`;

const { check, finish } = checks("cli-browser");
const shaledb = cli(bin);

const tmp = mkdtempSync(join(tmpdir(), "shaledb-cli-browser-"));
const context = await chromium.launchPersistentContext(join(tmp, "profile"), {
  executablePath: process.env.SHALEDB_CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
try {
  const page = await context.newPage();
  page.on("pageerror", (error) => console.error(`[page error] ${error.message}`));
  await page.goto(`${origin}/test-browser/pages/index.html`);
  await page.waitForFunction(() => globalThis.shaledbReady === true);

  const expected = [
    { keyspace: "default", key: "note:1", value: { title: "milk" } },
    { keyspace: "default", key: "note:2", value: { title: "eggs" } },
    { keyspace: "tags", key: "groceries", value: "note:1,note:2" },
  ];
  await check("the CLI imports, verifies and dumps a browser's export()", async () => {
    const archive = await page.evaluate(async () => {
      const db = await shaledb.open("cli-notes", { valueEncoding: "json" });
      await db.put("note:1", { title: "milk" });
      await db.put("note:2", { title: "eggs" });
      const tags = await db.keyspace("tags");
      await tags.put("groceries", "note:1,note:2");
      const blob = await db.export();
      await db.close();
      return toBase64(new Uint8Array(await blob.arrayBuffer()));
    });
    const file = join(tmp, "browser.tar");
    writeFileSync(file, Buffer.from(archive, "base64"));
    const dir = join(tmp, "from-browser");
    shaledb("import", file, dir);
    shaledb("verify", dir);
    equal(lines(shaledb("dump", dir, "--value-encoding", "json")), expected, "dump");
  });

  await check("a browser importDatabase()s what the CLI exported", async () => {
    const dir = join(tmp, "cli-db");
    execFileSync(bin, ["load", dir], {
      input: '{"key":"a","value":"1"}\n{"keyspace":"more","key":"b","value":"2"}\n',
    });
    const file = join(tmp, "cli.tar");
    shaledb("export", dir, file);
    const bytes = readFileSync(file).toString("base64");
    const read = await page.evaluate(async (b64) => {
      await shaledb.importDatabase("from-cli", new Blob([fromBase64(b64)]));
      const db = await shaledb.open("from-cli", { createIfMissing: false });
      const more = await db.keyspace("more");
      const out = [await db.get("a"), await more.get("b")];
      await db.close();
      return out;
    }, bytes);
    equal(read, ["1", "2"], "values read in the browser");
  });
} finally {
  await context.close().catch(() => undefined);
  server.close();
  rmSync(tmp, { recursive: true, force: true });
}
finish();
