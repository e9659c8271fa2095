/**
 * What a page needs of the package's worker: a `Worker`, or its protocol run in this thread
 * (`./in-thread-worker.ts`).
 *
 * @module
 */
import type { FromWorker, ToWorker } from "../messages.js";

export interface WorkerLike {
  postMessage(message: ToWorker, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
  terminate(): void;
}
