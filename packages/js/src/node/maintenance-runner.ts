/**
 * The {@link JobRunner} of Node's databases opened in the calling thread: one maintenance worker
 * (`maintenance-worker.ts`) per lane, so that a flush or a log sync never waits behind a
 * compaction (a memtable switch and a writer's backlog wait for those). Each worker starts on
 * its lane's first job (an open that never needs maintenance starts no thread) and is kept
 * alive by the process only while a job of its lane is out.
 *
 * @module
 */
import { Worker } from "node:worker_threads";

import type { JobLane, JobRunner } from "../engine/job-maintenance.js";
import { ShaleError } from "../errors.js";
import { fromWire } from "../transport/wire-error.js";
import type { FromMaintenanceWorker, MaintenanceWorkerData, ToMaintenanceWorker } from "./maintenance-messages.js";
import { compiledModule } from "./wasm-module.js";

/** The worker's module, beside this one; `undefined` where there is none (a bundle). */
function maintenanceWorkerUrl(): URL | undefined {
  try {
    return new URL("./maintenance-worker.js", import.meta.url);
  } catch {
    return undefined;
  }
}

interface Pending {
  resolve(output: Uint8Array): void;
  reject(error: ShaleError): void;
}

export class MaintenanceRunner implements JobRunner {
  readonly #lanes: Record<JobLane, WorkerLane>;

  /** A runner for the database in directory `location` (resolved). */
  constructor(location: string) {
    this.#lanes = { flush: new WorkerLane(location), compaction: new WorkerLane(location) };
  }

  run(job: Uint8Array, lane: JobLane): Promise<Uint8Array> {
    return this.#lanes[lane].run(job);
  }

  async close(): Promise<void> {
    await Promise.all([this.#lanes.flush.close(), this.#lanes.compaction.close()]);
  }
}

/** One maintenance worker, running its jobs one at a time in the order given. */
class WorkerLane {
  readonly #location: string;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;

  constructor(location: string) {
    this.#location = location;
  }

  run(job: Uint8Array): Promise<Uint8Array> {
    if (this.#closed) {
      return Promise.reject(new ShaleError("CLOSED", "shaledb: the maintenance runner is closed"));
    }
    let worker: Worker;
    try {
      worker = this.#started();
    } catch (error) {
      return Promise.reject(new ShaleError("IO", `shaledb: the maintenance worker does not start: ${String(error)}`));
    }
    const id = this.#nextId++;
    return new Promise<Uint8Array>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, job } satisfies ToMaintenanceWorker);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll(new ShaleError("CLOSED", "shaledb: the database closed"));
    if (worker !== undefined) {
      // An idle worker is unref'd: without this, the process could end while `close()` still
      // awaits the worker's exit (a top-level `await db.close()` then never settles: exit 13;
      // the answer of a job under way, arriving meanwhile, must not unref it either).
      worker.ref();
      await worker.terminate();
    }
  }

  #started(): Worker {
    if (this.#worker !== undefined) {
      return this.#worker;
    }
    const url = maintenanceWorkerUrl();
    if (url === undefined) {
      throw new Error("maintenance-worker.js is not beside the package's modules (a bundle?)");
    }
    const wasmModule = compiledModule();
    const worker = new Worker(url, {
      workerData: {
        location: this.#location,
        ...(wasmModule === undefined ? {} : { wasmModule }),
      } satisfies MaintenanceWorkerData,
    });
    worker.unref();
    worker.on("message", (answer: FromMaintenanceWorker) => {
      const pending = this.#pending.get(answer.id);
      this.#pending.delete(answer.id);
      // Not once closing: the worker must keep the process alive until it has exited.
      if (this.#pending.size === 0 && !this.#closed) {
        worker.unref();
      }
      if (answer.ok) {
        pending?.resolve(answer.output);
      } else {
        pending?.reject(fromWire(answer.error));
      }
    });
    const failed = (error: ShaleError): void => {
      if (this.#worker === worker) {
        this.#worker = undefined;
      }
      this.#failAll(error);
    };
    worker.on("error", (error: Error) => {
      failed(new ShaleError("IO", `shaledb: the maintenance worker failed: ${error.message}`));
    });
    worker.on("exit", () => {
      failed(new ShaleError("IO", "shaledb: the maintenance worker exited"));
    });
    this.#worker = worker;
    return worker;
  }

  #failAll(error: ShaleError): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) {
      p.reject(error);
    }
  }
}
