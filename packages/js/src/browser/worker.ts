/**
 * The dedicated worker that `open()` and `importDatabase()` start (the package owns it: users
 * write no worker code). What it does is `./worker/protocol.ts`, served over its global scope.
 *
 * @module
 */
import { WorkerProtocol, type WorkerScope } from "./worker/protocol.js";

new WorkerProtocol(globalThis as unknown as WorkerScope);
