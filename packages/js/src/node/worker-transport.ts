/**
 * Node's {@link Transport}: the engine runs in a `worker_threads` worker of its own
 * (`engine-worker.ts`), where browsers run theirs, so nothing the engine does (a flush, a
 * compaction step, `count`, `compact`, `checkpoint`) holds up this thread's event loop. Requests
 * made in one turn travel in one message, and the worker commits the writes among them as one
 * batch.
 *
 * The worker keeps the process alive only while a request waits for it or maintenance is under
 * way (as the synchronous API's idle-time maintenance does); the database's `LOCK` is held by
 * this thread (`lock-relay.ts`), so it is released when the process exits without `close()`.
 *
 * @module
 */
import { Worker } from "node:worker_threads";

import { ShaleError, closedError } from "../errors.js";
import { OneServerTransport } from "../transport/one-server-transport.js";
import type { KeyspaceDeclaration, RequestMessage } from "../transport/requests.js";
import { fromWire } from "../transport/wire-error.js";
import type { KeyEncoding, OpenOptions, ValueEncoding } from "../types.js";
import { compiledModule } from "./wasm-module.js";
import { LOCK_ANSWER_BYTES, LockHolder } from "./lock-relay.js";
import type { EngineWorkerData, FromEngineWorker, ToEngineWorker } from "./worker-messages.js";

/** Said when the engine worker does not start: its file is not beside the package's. */
const BUNDLE_HINT =
  " (in a bundle, engine-worker.js is not beside it: open without `engineThread: \"own\"`, or use `openSync`)";

/** The engine worker's module, beside this one; `IO` where there is no such URL (CommonJS bundles). */
function engineWorkerUrl(): URL {
  try {
    return new URL("./engine-worker.js", import.meta.url);
  } catch (error) {
    throw new ShaleError("IO", `shaledb: the engine worker cannot be found: ${String(error)}${BUNDLE_HINT}`);
  }
}

export class WorkerTransport extends OneServerTransport {
  readonly location: string;
  readonly #worker: Worker;
  readonly #locks: LockHolder;
  /** Whether the worker has maintenance under way. */
  #maintaining = false;
  #failure: ShaleError | undefined;
  #closed: ((error: ShaleError | undefined) => void) | undefined;

  private constructor(worker: Worker, locks: LockHolder, location: string, maintaining: boolean) {
    super("engine-worker");
    this.#worker = worker;
    this.#locks = locks;
    this.location = location;
    this.#maintaining = maintaining;
    worker.on("message", (message: FromEngineWorker) => this.#onMessage(message));
    worker.on("error", (error: Error) => {
      this.#fail(new ShaleError("IO", `shaledb: the engine worker failed: ${error.message}`));
    });
    worker.on("exit", () => {
      this.#locks.release();
      this.#fail(closedError("the database"));
    });
    this.#updateRef();
  }

  /**
   * Starts a worker and opens database `location` (a directory) there; rejects as `openSync`
   * throws (`LOCKED`, `CORRUPTION`, `INVALID_ARGUMENT`, `IO`, ...).
   */
  static open(
    location: string,
    options: OpenOptions<KeyEncoding, ValueEncoding> | undefined,
  ): Promise<WorkerTransport> {
    const lockAnswers = new SharedArrayBuffer(LOCK_ANSWER_BYTES);
    const wasmModule = compiledModule();
    const worker = new Worker(engineWorkerUrl(), {
      workerData: { lockAnswers, ...(wasmModule === undefined ? {} : { wasmModule }) } satisfies EngineWorkerData,
    });
    const locks = new LockHolder(location, lockAnswers);
    return new Promise((resolve, reject) => {
      let maintaining = false;
      const settle = (outcome: () => void): void => {
        worker.off("message", first);
        worker.off("error", failed);
        outcome();
      };
      const first = (message: FromEngineWorker): void => {
        if (message.type === "lock") {
          locks.answer(message);
        } else if (message.type === "maintaining") {
          maintaining = message.busy;
        } else if (message.type === "opened") {
          settle(() => resolve(new WorkerTransport(worker, locks, message.location, maintaining)));
        } else {
          settle(() => {
            locks.release();
            void worker.terminate();
            reject(message.type === "failed" ? fromWire(message.error) : new ShaleError("IO", `shaledb: unexpected ${message.type}`));
          });
        }
      };
      const failed = (error: Error): void => {
        settle(() => {
          locks.release();
          reject(new ShaleError("IO", `shaledb: the engine worker failed to start: ${error.message}${BUNDLE_HINT}`));
        });
      };
      worker.on("message", first);
      worker.on("error", failed);
      worker.postMessage({ type: "open", location, options } satisfies ToEngineWorker);
    });
  }

  protected override get failure(): ShaleError | undefined {
    return this.#failure;
  }

  protected override requestAdded(): void {
    this.#updateRef();
  }

  protected deliver(requests: RequestMessage[], keyspaces: KeyspaceDeclaration[] | undefined): void {
    this.#worker.postMessage(
      (keyspaces === undefined
        ? { type: "requests", requests }
        : { type: "requests", requests, keyspaces }) satisfies ToEngineWorker,
    );
  }

  #onMessage(message: FromEngineWorker): void {
    switch (message.type) {
      case "replies":
        this.replies(message.replies);
        break;
      case "lock":
        this.#locks.answer(message);
        break;
      case "maintaining":
        this.#maintaining = message.busy;
        break;
      case "closed":
        this.#closed?.(message.error === undefined ? undefined : fromWire(message.error));
        break;
      default:
        break;
    }
    this.#updateRef();
  }

  /** The worker keeps the process alive while a request waits for it or maintenance runs. */
  #updateRef(): void {
    if (this.pendingRequests > 0 || this.#maintaining || this.closing) {
      this.#worker.ref();
    } else {
      this.#worker.unref();
    }
  }

  #fail(error: ShaleError): void {
    this.#failure ??= error;
    this.failAll(error);
    this.#closed?.(undefined);
  }

  /** Waits for the requests under way, then closes the database in the worker, then ends it. */
  protected async closeServer(): Promise<void> {
    this.#worker.ref();
    try {
      if (this.#failure === undefined) {
        await this.drained();
        const error = await new Promise<ShaleError | undefined>((resolve) => {
          this.#closed = resolve;
          this.#worker.postMessage({ type: "close" } satisfies ToEngineWorker);
        });
        if (error !== undefined) {
          throw error;
        }
      }
    } finally {
      this.#locks.release();
      await this.#worker.terminate();
    }
  }
}
