// Builds the bench page (page/) into dist/ as a production bundle, the way an application ships
// ShaleDB and its peers: ShaleDB's worker and wasm, SQLite's worker and wasm become hashed assets.
import { fileURLToPath } from "node:url";

import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL("./page", import.meta.url)),
  base: "./",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("./dist", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    // The sqlite-wasm and ShaleDB modules are large; no point warning about it.
    chunkSizeWarningLimit: 4096,
  },
  // Module workers (ShaleDB's and SQLite's import ES modules and use import.meta.url).
  worker: { format: "es" },
});
