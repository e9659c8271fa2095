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
import { inDedicatedWorker } from "../support.js";
import type { WorkerLike } from "./worker-like.js";

export type { WorkerLike } from "./worker-like.js";

/** A new dedicated worker running `../worker.ts`. */
export function spawnWorker(): Worker {
  return new Worker(new URL("../worker.js", import.meta.url), { type: "module", name: "shaledb" });
}

/**
 * The package's worker for `open`: a new one — or, where this code runs in a dedicated worker
 * (an application's), the same protocol in this thread: OPFS access handles work here, and
 * Firefox's `new Worker()` inside a worker now and then blocks its caller for good.
 */
export async function startWorker(): Promise<WorkerLike> {
  if (!inDedicatedWorker()) {
    return spawnWorker() as unknown as WorkerLike;
  }
  const { inThreadWorker } = await import("./in-thread-worker.js");
  return inThreadWorker();
}

/** Waits for the first message of `worker` (or its failure to start). */
export function firstMessage(worker: WorkerLike): Promise<FromWorker> {
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
