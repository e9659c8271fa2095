// The browser tests: vitest in Node driving real headless Chromium through playwright-core, or
// Firefox ESR through puppeteer-core (SHALEDB_BROWSER=firefox; test-browser/fixtures/browser.ts),
// against the built package served over HTTP. One file at a time: each starts its own browser.
import { defineConfig } from "vitest/config";

/**
 * The files run in Firefox too: those whose outcome depends on the browser — its OPFS, workers,
 * locks, tabs, storage quota, downloads, secure contexts, restarts, the installed app, the
 * module a worker fetches (kv-module) and watches across tabs (their timers and frames). The
 * others (bad input, the change feed, queues, topics, keyspace encodings, the Level adapter,
 * merged writes) run the same JavaScript and WebAssembly over the same storage calls, and run
 * in Chromium only: in Firefox they repeated what these cover and took two minutes.
 * SHALEDB_FIREFOX_ALL=1 runs every file in Firefox.
 */
const FIREFOX_FILES = [
  "api",
  "exactly-once",
  "example-app",
  "export-import",
  "import-safety",
  "kv-module",
  "own-worker",
  "persistence",
  "secure-context",
  "storage-usage",
  "tabs",
  "tabs-keyspaces",
  "watch",
].map((name) => `test-browser/${name}.test.ts`);

export default defineConfig({
  test: {
    environment: "node",
    include:
      process.env.SHALEDB_BROWSER === "firefox" && process.env.SHALEDB_FIREFOX_ALL !== "1"
        ? FIREFOX_FILES
        : ["test-browser/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
