/**
 * The package's worker protocol run in this thread, for `open()` called in a dedicated worker:
 * the same messages over a `MessageChannel` as to a `Worker`, so the connection works the same.
 * Loaded only there (a dynamic import: pages never download the engine with their own code).
 *
 * @module
 */
import { WorkerProtocol, type WorkerScope } from "../worker/protocol.js";
import type { WorkerLike } from "./worker-like.js";

/** A {@link WorkerLike} whose other end is the worker protocol, in this thread. */
export function inThreadWorker(): WorkerLike {
  const channel = new MessageChannel();
  const protocol = new WorkerProtocol(channel.port2 as unknown as WorkerScope);
  const worker: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage: (message, transfer) => channel.port1.postMessage(message, transfer ?? []),
    terminate: () => {
      // As a worker's end: what it owned is closed (its lock let go), its waits stopped.
      protocol.stop();
      channel.port1.close();
    },
  };
  channel.port1.onmessage = (event: MessageEvent) => worker.onmessage?.(event);
  return worker;
}
