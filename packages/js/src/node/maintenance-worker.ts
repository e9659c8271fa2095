/**
 * The `worker_threads` worker that runs the maintenance jobs of one database opened in the
 * calling thread (`maintenance-runner.ts`): its own WebAssembly instance, its own storage over
 * the same directory (no lock: it only reads a job's inputs and creates the files the job
 * reserved), one job at a time, each answered with its encoded output or its error.
 *
 * @module
 */
import { parentPort, workerData } from "node:worker_threads";

import { call, wasm } from "../engine/instance.js";
import { toWire } from "../transport/wire-error.js";
import { useNodeLoader } from "./load-wasm.js";
import { NodeFsStorage } from "./node-storage.js";
import { provideModule } from "./wasm-module.js";
import type { FromMaintenanceWorker, MaintenanceWorkerData, ToMaintenanceWorker } from "./maintenance-messages.js";

useNodeLoader();

const port = parentPort;
if (port === null) {
  throw new Error("shaledb: maintenance-worker.js runs as a worker thread only");
}
const { location, wasmModule } = workerData as MaintenanceWorkerData;
if (wasmModule !== undefined) {
  provideModule(wasmModule);
}
const storage = new NodeFsStorage(location, { create: false });

port.on("message", ({ id, job }: ToMaintenanceWorker) => {
  let answer: FromMaintenanceWorker;
  try {
    const output = call(() => wasm.runJob(storage, job));
    answer = { id, ok: true, output };
  } catch (error) {
    answer = { id, ok: false, error: toWire(error) };
  } finally {
    // The job's files are closed: a table it wrote may be deleted by the database later.
    storage.releaseAll();
  }
  port.postMessage(answer, answer.ok ? [answer.output.buffer as ArrayBuffer] : []);
});
