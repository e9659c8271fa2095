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
import { KeyspaceNumbers } from "../transport/keyspace-numbers.js";
import { PendingRequests } from "../transport/pending-requests.js";
import type { Args, Op, Result } from "../transport/requests.js";
import type { Transport } from "../transport/transport.js";
import { fromWire } from "../transport/wire-error.js";
import type { KeyEncoding, OpenOptions, ValueEncoding } from "../types.js";
import { LOCK_ANSWER_BYTES, LockHolder } from "./lock-relay.js";
import type { EngineWorkerData, FromEngineWorker, ToEngineWorker } from "./worker-messages.js";

/** The id of the one server (iterators, snapshots and transactions are bound to it). */
const SERVER = "engine-worker";

export class WorkerTransport implements Transport {
  readonly location: string;
  readonly #worker: Worker;
  readonly #locks: LockHolder;
  readonly #requests = new PendingRequests(() => this.#send());
  readonly #keyspaces = new KeyspaceNumbers();
  /** Whether the worker has maintenance under way. */
  #maintaining = false;
  #closing: Promise<void> | undefined;
  #failure: ShaleError | undefined;
  #closed: ((error: ShaleError | undefined) => void) | undefined;

  private constructor(worker: Worker, locks: LockHolder, location: string, maintaining: boolean) {
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
    const worker = new Worker(new URL("./engine-worker.js", import.meta.url), {
      workerData: { lockAnswers } satisfies EngineWorkerData,
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
          reject(new ShaleError("IO", `shaledb: the engine worker failed to start: ${error.message}`));
        });
      };
      worker.on("message", first);
      worker.on("error", failed);
      worker.postMessage({ type: "open", location, options } satisfies ToEngineWorker);
    });
  }

  get closed(): boolean {
    return this.#closing !== undefined || this.#failure !== undefined;
  }

  request<O extends Op>(op: O, args: Args<O>, server?: string): Promise<Result<O>> {
    return this.#request(op, args, server, false) as Promise<Result<O>>;
  }

  requestServed<O extends Op>(op: O, args: Args<O>, server?: string): Promise<[Result<O>, string]> {
    return this.#request(op, args, server, true) as Promise<[Result<O>, string]>;
  }

  async openKeyspace(name: string): Promise<number> {
    const number = this.#keyspaces.numberOf(name);
    await this.request("keyspace", [name, number]);
    this.#keyspaces.opened(name, SERVER);
    return number;
  }

  #request(op: Op, args: unknown[], server: string | undefined, withServer: boolean): Promise<unknown> {
    if (this.#closing !== undefined) {
      return Promise.reject(closedError("the database"));
    }
    if (this.#failure !== undefined) {
      return Promise.reject(this.#failure);
    }
    const result = this.#requests.add(op, args, server, withServer);
    this.#updateRef();
    return result;
  }

  /** Sends the requests made in this turn, in one message. */
  #send(): void {
    const requests = this.#requests.take(SERVER);
    if (requests.length === 0 || this.#failure !== undefined) {
      return;
    }
    const keyspaces = this.#keyspaces.declarationsFor(SERVER);
    this.#worker.postMessage(
      (keyspaces === undefined
        ? { type: "requests", requests }
        : { type: "requests", requests, keyspaces }) satisfies ToEngineWorker,
    );
  }

  #onMessage(message: FromEngineWorker): void {
    switch (message.type) {
      case "replies":
        this.#requests.onReplies(SERVER, message.replies);
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
    if (this.#requests.size > 0 || this.#maintaining || this.#closing !== undefined) {
      this.#worker.ref();
    } else {
      this.#worker.unref();
    }
  }

  #fail(error: ShaleError): void {
    this.#failure ??= error;
    this.#requests.failAll(error);
    this.#closed?.(undefined);
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Waits for the requests under way, then closes the database in the worker, then ends it. */
  async #close(): Promise<void> {
    this.#worker.ref();
    try {
      if (this.#failure === undefined) {
        await this.#requests.drained();
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
