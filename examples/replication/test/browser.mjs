// The browser follower's test fixtures: the follower bundled for the page (rolldown: the NATS
// clients are CommonJS), a static server for the page, the bundle and the built `shaledb`
// package (packages/js: dist/ and wasm/), and headless Chromium (Debian's, installed by
// scripts/setup.sh --chromium; SHALEDB_CHROMIUM names another) driven by playwright-core.
import { createReadStream, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { build } from "rolldown";

const example = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const packageRoot = resolve(example, "..", "..", "packages", "js");
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".wasm": "application/wasm", ".map": "application/json" };

/**
 * Writes the page and the bundled follower into `dir`: the page imports the package's browser
 * entry as `globalThis.shaledb` and the follower (src/browser-follower.mjs) as
 * `globalThis.follower`, then sets `globalThis.ready`.
 */
export async function buildPage(dir) {
  mkdirSync(dir, { recursive: true });
  await build({
    cwd: example,
    input: "src/browser-follower.mjs",
    platform: "browser",
    logLevel: "warn",
    output: { file: join(dir, "follower.js"), format: "esm" },
  });
  writeFileSync(
    join(dir, "index.html"),
    `<!doctype html><meta charset="utf-8"><title>follower</title><link rel="icon" href="data:,">
<script type="module">
  import * as shaledb from "/dist/browser.js";
  import * as follower from "/app/follower.js";
  Object.assign(globalThis, { shaledb, follower, ready: true });
</script>\n`,
  );
}

/** Serves `/app/...` from `appDir` and everything else from packages/js on 127.0.0.1. */
export async function serve(appDir) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const [root, rel] = path.startsWith("/app/") ? [appDir, path.slice(5)] : [packageRoot, path];
    const file = normalize(join(root, rel));
    let ok = file.startsWith(root);
    try {
      ok &&= statSync(file).isFile();
    } catch {
      ok = false;
    }
    if (!ok) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
  };
}

/** The Chromium binary: $SHALEDB_CHROMIUM, else Debian's. */
export const CHROMIUM = process.env.SHALEDB_CHROMIUM ?? "/usr/bin/chromium";

/** Why the browser test cannot run here, if it cannot (no Chromium). */
export const noChromium = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (scripts/setup.sh --chromium installs it)`;

/** Headless Chromium on a fresh profile under `dir` (XDG folders there too). */
export async function launchChromium(dir) {
  process.env.XDG_CONFIG_HOME = join(dir, "xdg-config");
  process.env.XDG_CACHE_HOME = join(dir, "xdg-cache");
  return chromium.launchPersistentContext(join(dir, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
