#!/usr/bin/env node
// The browser benchmark suite "browser": ShaleDB beside raw IndexedDB (default and relaxed
// durability), idb-keyval and SQLite Wasm (opfs-sahpool) in headless Chromium or Firefox, in one
// run. Serves the built bench page (dist/, `vite build`) on 127.0.0.1, drives Debian's Chromium
// through playwright-core, or (--browser=firefox, or SHALEDB_BROWSER=firefox) Debian's firefox-esr
// through puppeteer-core over WebDriver BiDi (the host field of each figure names the browser), loads a fresh page per engine and value size (and two per engine for
// open/), and appends the figures the page returns to bench/results/browser.jsonl. See README.md.
//
//   node main.mjs [--browser=chromium|firefox] [--engines=a,b] [--sizes=100B,1KiB] [FILTER...]
import { spawnSync } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { fsType, host } from "../common/machine.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../..");
const distDir = join(here, "dist");

// --- Settings -------------------------------------------------------------------------------

const ENGINES = ["shaledb", "shaledb-direct", "indexeddb", "indexeddb-relaxed", "idb-keyval", "sqlite-wasm", "sqlite-wasm-direct"];
const SIZES = { "100B": 100, "1KiB": 1024 };
/** Entries of the batch cases and the read database, per size. */
const DEFAULT_N = { "100B": 100_000, "1KiB": 50_000 };

const args = process.argv.slice(2);
const opt = (flag, env, fallback) => {
  const a = args.find((x) => x.startsWith(`--${flag}=`));
  const v = a ? a.slice(flag.length + 3) : process.env[env];
  return v ? v.split(",").map((s) => s.trim()).filter(Boolean) : fallback;
};
const engines = opt("engines", "BROWSER_BENCH_ENGINES", ENGINES);
const sizes = opt("sizes", "BROWSER_BENCH_SIZES", Object.keys(SIZES));
const [browserName] = opt("browser", "SHALEDB_BROWSER", ["chromium"]);
if (browserName !== "chromium" && browserName !== "firefox") throw new Error(`unknown browser ${browserName} (chromium or firefox)`);
const FIREFOX = browserName === "firefox";
const filters = args.filter((a) => !a.startsWith("--"));

function envInt(name, fallback) {
  const v = process.env[name];
  if (v === undefined || v === "") return fallback;
  const n = Number(v.replace(/_/g, ""));
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${v} is not a number`);
  return Math.floor(n);
}

/** The page's settings for one size (see README.md for the variables). */
function config(size) {
  const n = Math.max(1000, envInt(`BROWSER_BENCH_N_${size.toUpperCase()}`, envInt("BROWSER_BENCH_N", DEFAULT_N[size])));
  return {
    size,
    valueSize: SIZES[size],
    n,
    nSingle: Math.max(1, envInt("BROWSER_BENCH_N_SINGLE", 10_000)),
    gets: Math.max(1, envInt("BROWSER_BENCH_GETS", 10_000)),
    scans: Math.max(1, envInt("BROWSER_BENCH_SCANS", 200)),
    syncOps: Math.max(1, envInt("BROWSER_BENCH_SYNC_OPS", 500)),
    openN: Math.max(1000, envInt("BROWSER_BENCH_OPEN_N", 100_000)),
    opens: Math.max(1, envInt("BROWSER_BENCH_OPENS", 6)),
    cacheBytes: envInt("BROWSER_BENCH_CACHE_MB", 16) << 20,
    memtableBytes: envInt("BROWSER_BENCH_MEMTABLE_MB", 4) << 20,
    settleMs: envInt("BROWSER_BENCH_SETTLE_MS", 1000),
    sqliteJournal: process.env.BROWSER_BENCH_SQLITE_JOURNAL || undefined,
    sqliteLocking: process.env.BROWSER_BENCH_SQLITE_LOCKING || undefined,
    filters,
    prefix: "bench",
  };
}
const enabled = (name) => filters.length === 0 || filters.some((f) => name.includes(f));

// --- Output ---------------------------------------------------------------------------------

const run = process.env.SHALEDB_BENCH_RUN || new Date().toISOString().replace(/\.\d+Z$/, "Z");
const resultsDir = process.env.SHALEDB_BENCH_RESULTS || join(repoRoot, "bench/results");
let hostName = "";


/** Prints one figure and appends it to bench/results/browser.jsonl. */
function emit(f) {
  const line = JSON.stringify({
    suite: "browser",
    case: f.case,
    engine: f.engine,
    metric: f.metric,
    value: Math.round(f.value * 1000) / 1000,
    run,
    host: hostName,
  });
  console.log(line);
  mkdirSync(resultsDir, { recursive: true });
  appendFileSync(join(resultsDir, "browser.jsonl"), line + "\n");
}

/** Emits the size of what a page downloads for ShaleDB, as this build serves it (dist/assets):
 *  the WebAssembly module (case `download/module`) and the worker bundle (`download/worker`),
 *  in bytes and gzip -9 bytes (`bytes`, `bytes/gzip`). */
function emitDownloadSizes() {
  const assets = join(distDir, "assets");
  const files = readdirSync(assets);
  for (const [what, pattern] of [["module", /^shaledb_wasm_bg-.*\.wasm$/], ["worker", /^worker-.*\.js$/]]) {
    const name = files.find((f) => pattern.test(f));
    if (!name) {
      console.log(`download/${what}: no asset matching ${pattern} in ${assets}`);
      continue;
    }
    const bytes = readFileSync(join(assets, name));
    emit({ case: `download/${what}`, engine: "shaledb", metric: "bytes", value: bytes.length });
    emit({ case: `download/${what}`, engine: "shaledb", metric: "bytes/gzip", value: gzipSync(bytes, { level: 9 }).length });
  }
}

// --- The page's server ----------------------------------------------------------------------

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
};

/** Serves dist/ on 127.0.0.1: the HTML revalidated, the hashed assets cacheable for good, as a
 *  production host would. No COOP/COEP: neither ShaleDB nor opfs-sahpool needs them. */
async function serve(root) {
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    if (path.endsWith("/")) path += "index.html";
    const file = normalize(join(root, path));
    let ok = file.startsWith(root);
    try {
      ok &&= statSync(file).isFile();
    } catch {
      ok = false;
    }
    if (!ok) return res.writeHead(404).end();
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "cache-control": path.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache",
    });
    createReadStream(file).pipe(res);
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((d) => { server.closeAllConnections(); server.close(() => d()); }) };
}

// --- Chromium -------------------------------------------------------------------------------

const CHROMIUM = process.env.SHALEDB_CHROMIUM ?? "/usr/bin/chromium";
const FIREFOX_BINARY = process.env.SHALEDB_FIREFOX ?? "/usr/bin/firefox-esr";
const BINARY = FIREFOX ? FIREFOX_BINARY : CHROMIUM;
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];


/** Where the browser profile (and so OPFS and IndexedDB) lives: on disk, not a tmpfs. */
function scratchBase() {
  const dir = process.env.BROWSER_BENCH_DIR || process.env.SHALEDB_BENCH_DIR;
  if (dir) return resolve(dir);
  const tmp = resolve(tmpdir());
  const t = fsType(tmp);
  return t && t !== "tmpfs" && t !== "ramfs" ? tmp : join(here, ".scratch");
}

/** The same memory state before each page: dirty pages written back, page cache dropped (Linux,
 *  as root; elsewhere nothing), as the Node suite does. */
function dropPageCache() {
  spawnSync("sync");
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "1");
  } catch {
    // not root, or not Linux
  }
}

// --- The run --------------------------------------------------------------------------------

if (!existsSync(join(distDir, "index.html"))) {
  console.error(`${distDir} is missing: build the page first (npx vite build in bench/browser, or bash bench/run-browser.sh)`);
  process.exit(2);
}
if (!existsSync(BINARY)) {
  console.error(
    FIREFOX
      ? `${BINARY} is missing (Debian: apt-get install firefox-esr; or set SHALEDB_FIREFOX)`
      : `${BINARY} is missing (Debian: apt-get install chromium; or set SHALEDB_CHROMIUM)`,
  );
  process.exit(2);
}

const base = scratchBase();
mkdirSync(base, { recursive: true });
const profile = mkdtempSync(join(base, "shaledb-bench-browser-"));
process.env.XDG_CONFIG_HOME = join(profile, "xdg-config");
process.env.XDG_CACHE_HOME = join(profile, "xdg-cache");
const server = await serve(distDir);
// Firefox: puppeteer's browser has the two calls of playwright's context used here (newPage, close).
const context = FIREFOX
  ? await puppeteer.launch({
      browser: "firefox",
      executablePath: FIREFOX_BINARY,
      headless: true,
      userDataDir: join(profile, "profile"),
      protocolTimeout: 6 * 3600_000, // a case's evaluate runs for minutes
    })
  : await chromium.launchPersistentContext(join(profile, "profile"), {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
    });
let failed = 0;

/** A freshly loaded bench page (storage of the origin emptied first when `clear`). */
async function freshPage(clear) {
  const page = await context.newPage();
  page.setDefaultTimeout(0);
  page.on("console", (m) => console.log(m.type() === "log" ? `  ${m.text()}` : `  [${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => console.log(`  [page error] ${e?.message ?? e}`));
  await page.goto(`${server.origin}/index.html`);
  await page.waitForFunction(() => globalThis.benchReady === true, ...(FIREFOX ? [{ timeout: 0 }] : []));
  if (clear) await page.evaluate(() => globalThis.bench.clearStorage());
  return page;
}

try {
  {
    const page = await freshPage(true);
    const product = FIREFOX ? "Firefox" : "Chromium";
    const version = spawnSync(BINARY, ["--version"], { encoding: "utf8" }).stdout?.match(/(?:Chromium|Firefox) ([\w.]+)/)?.[1];
    hostName = `${host()}, ${product} ${version ?? (await page.evaluate(() => navigator.userAgent))} headless`;
    const us = await page.evaluate(() => globalThis.bench.roundTrip(5000, 100));
    console.log(`page<->worker postMessage round trip (echo, 16 B key + 100 B value): ${us.toFixed(1)} us`);
    await page.close();
  }
  console.log(`run ${run}; ${hostName}; profile under ${profile}; page at ${server.origin}`);
  if (engines.includes("shaledb")) emitDownloadSizes();

  for (const size of sizes) {
    if (!SIZES[size]) throw new Error(`unknown size ${size} (known: ${Object.keys(SIZES).join(", ")})`);
    const cfg = config(size);
    for (const engine of engines) {
      dropPageCache();
      const page = await freshPage(true);
      const started = Date.now();
      try {
        const figures = await page.evaluate(([e, c]) => globalThis.bench.run(e, c), [engine, cfg]);
        for (const f of figures) emit(f);
        console.log(`  (${engine} ${size}: ${((Date.now() - started) / 1000).toFixed(1)} s)`);
      } catch (err) {
        console.log(`${engine} ${size}: failed (${err?.message ?? err})`);
        failed++;
      } finally {
        await page.close();
      }
    }
  }

  const cfg = config("100B");
  const openCase = `open/${Math.round(cfg.openN / 1000)}k/100B`;
  if (enabled(openCase) && sizes.includes("100B")) {
    for (const engine of engines.filter((e) => !e.endsWith("-direct"))) {
      try {
        const prep = await freshPage(true);
        try {
          await prep.evaluate(([e, c]) => globalThis.bench.prepareOpen(e, c), [engine, cfg]);
        } finally {
          await prep.close();
        }
        dropPageCache();
        const page = await freshPage(false);
        try {
          const figures = await page.evaluate(([e, c]) => globalThis.bench.measureOpens(e, c), [engine, cfg]);
          for (const f of figures) emit(f);
        } finally {
          await page.close();
        }
      } catch (err) {
        console.log(`${engine}: ${openCase}: failed (${err?.message ?? err})`);
        failed++;
      }
    }
  }
} finally {
  await context.close().catch(() => {});
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
