/**
 * The `worker_threads` worker that runs the maintenance jobs of one database opened in the
 * calling thread (`maintenance-runner.ts`): its own WebAssembly instance, its own storage over
 * the same directory (no lock: it only reads a job's inputs and creates the files the job
 * reserved), one job at a time, each answered with its encoded output or its error.
 *
 * @module
 */
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";

import { call, wasm } from "../engine/instance.js";
import { toWire } from "../transport/wire-error.js";
import { useNodeLoader } from "./load-wasm.js";
import { NodeFsStorage } from "./node-storage.js";
import { provideModule } from "./wasm-module.js";
import type { FromMaintenanceWorker, MaintenanceWorkerData, ToMaintenanceWorker } from "./maintenance-messages.js";

useNodeLoader();
lowerThisThreadsPriority();

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

/**
 * Gives this thread the lowest CPU priority (`nice` 19), as the core does for its native
 * background thread (`MaintenancePriority::Low`): on a machine whose cores are busy, jobs then
 * take the idle time instead of preempting the event loop's thread for milliseconds. Linux
 * only, where `/proc/thread-self` names this thread's id and `setpriority` on a thread id
 * changes that thread alone; elsewhere (and if refused) the thread keeps its priority.
 */
function lowerThisThreadsPriority(): void {
  let threadId: number;
  try {
    threadId = Number(readlinkSync("/proc/thread-self").split("/").pop());
  } catch {
    return;
  }
  if (!Number.isSafeInteger(threadId) || threadId <= 0 || threadId === process.pid) {
    return;
  }
  try {
    setPriority(threadId, 19);
  } catch {
    // Refused: maintenance runs at the priority it has.
  }
}

