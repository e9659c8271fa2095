/**
 * What crosses between Node's Promise API and its engine worker (`engine-worker.ts`): the
 * requests and replies of `../transport/requests.ts`, opening and closing, the lock calls the
 * worker relays to the main thread (`lock-relay.ts`), and whether maintenance is under way.
 *
 * @module
 */
import type { KeyspaceDeclaration, Reply, RequestMessage, WireError } from "../transport/requests.js";
import type { KeyEncoding, OpenOptions, ValueEncoding } from "../types.js";
import type { LockCall } from "./lock-relay.js";

/** The engine worker's `workerData`. */
export interface EngineWorkerData {
  /** Where the main thread answers relayed lock calls (`lock-relay.ts`). */
  lockAnswers: SharedArrayBuffer;
  /** The WebAssembly module the owner compiled (given to `init()`, or loaded), if any. */
  wasmModule?: WebAssembly.Module;
}

export type ToEngineWorker =
  | { type: "open"; location: string; options: OpenOptions<KeyEncoding, ValueEncoding> | undefined }
  | { type: "requests"; requests: RequestMessage[]; keyspaces?: KeyspaceDeclaration[] }
  | { type: "close" };

export type FromEngineWorker =
  | { type: "opened"; location: string }
  | { type: "failed"; error: WireError }
  | { type: "replies"; replies: Reply[] }
  /** Maintenance started (`true`) or has no work left (`false`). */
  | { type: "maintaining"; busy: boolean }
  | LockCall
  | { type: "closed"; error?: WireError };
