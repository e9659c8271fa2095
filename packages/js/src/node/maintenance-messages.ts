/**
 * What crosses between a database opened in the calling thread and its maintenance worker
 * (`maintenance-worker.ts`): encoded jobs one way, encoded outputs or errors the other.
 *
 * @module
 */
import type { WireError } from "../transport/requests.js";

/** The maintenance worker's `workerData`. */
export interface MaintenanceWorkerData {
  /** The database's directory (resolved). */
  location: string;
  /** The WebAssembly module this thread compiled, if any. */
  wasmModule?: WebAssembly.Module;
}

/** Run job `job` (encoded), answered under `id`. */
export interface ToMaintenanceWorker {
  id: number;
  job: Uint8Array;
}

export type FromMaintenanceWorker =
  | { id: number; ok: true; output: Uint8Array }
  | { id: number; ok: false; error: WireError };
