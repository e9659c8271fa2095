import { availableParallelism } from "node:os";

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "node",
    include: ["test/**/*.test.ts"],
    // Two files at a time even on a 2-core machine (vitest's default there is one): most files
    // wait on child processes, file I/O or timers, and the run takes ~90 s instead of ~165 s.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
