// The browser tests: vitest in Node driving real headless Chromium through playwright-core
// (test-browser/fixtures/chromium.ts), against the built package served over HTTP. One file at a
// time: each starts its own Chromium.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "node",
    include: ["test-browser/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
