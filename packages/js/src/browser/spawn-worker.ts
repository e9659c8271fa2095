/**
 * Starting the package's own worker. The `new Worker(new URL(..., import.meta.url))` pattern is
 * what bundlers (Vite, webpack, Rollup, esbuild with plugins) recognise to bundle the worker
 * and its WebAssembly module as assets; keep it literal.
 *
 * @module
 */

/** A new dedicated worker running `worker.ts`. */
export function spawnWorker(): Worker {
  return new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "shaledb" });
}
