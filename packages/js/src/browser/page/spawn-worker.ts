/**
 * Starting the package's own worker, and waiting for its first answer. The
 * `new Worker(new URL(..., import.meta.url))` pattern is what bundlers (Vite, webpack, Rollup,
 * esbuild with plugins) recognise to bundle the worker and its WebAssembly module as assets;
 * keep it literal.
 *
 * @module
 */
import { ShaleError } from "../../errors.js";
import type { FromWorker } from "../messages.js";

/** A new dedicated worker running `../worker.ts`. */
export function spawnWorker(): Worker {
  return new Worker(new URL("../worker.js", import.meta.url), { type: "module", name: "shaledb" });
}

/** Waits for the first message of `worker` (or its failure to start). */
export function firstMessage(worker: Worker): Promise<FromWorker> {
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<FromWorker>) => resolve(event.data);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      reject(
        new ShaleError(
          "IO",
          `shaledb: the ShaleDB worker failed to start (${event.message || "it could not be loaded"}); ` +
            "if a bundler moved the package's files, check that worker.js and shaledb_wasm_bg.wasm are served",
        ),
      );
    };
  });
}
