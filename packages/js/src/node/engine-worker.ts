/**
 * The `worker_threads` worker that runs the engine of one database for Node's Promise API
 * (`worker-transport.ts`), where browsers run theirs: it opens the database on the synchronous
 * API and serves the transport's request messages with the same server as browsers' owners, so
 * flush, compaction and long requests never hold up the caller's event loop.
 *
 * @module
 */
import { resolve } from "node:path";
import { parentPort, workerData } from "node:worker_threads";

import type { Environment } from "../engine/sync-database.js";
import type { DatabaseServer } from "../server/database-server.js";
import { ClientResources } from "../server/client-resources.js";
import { ownBuffers, transferables } from "../transport/transferables.js";
import { toWire } from "../transport/wire-error.js";
import { nodeEnvironment } from "./environment.js";
import { useNodeLoader } from "./load-wasm.js";
import { provideModule } from "./wasm-module.js";
import { relayLocks } from "./lock-relay.js";
import { openNodeServer } from "./node-server.js";
import type { EngineWorkerData, FromEngineWorker, ToEngineWorker } from "./worker-messages.js";

useNodeLoader();

const port = parentPort;
if (port === null) {
  throw new Error("shaledb: engine-worker.js runs as a worker thread only");
}
const { lockAnswers, wasmModule } = workerData as EngineWorkerData;
if (wasmModule !== undefined) {
  provideModule(wasmModule);
}
const client = new ClientResources("node", false);
let server: DatabaseServer | undefined;

function post(message: FromEngineWorker, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

/** Node's file system, with the database's own locks held by the main thread. */
function environment(location: string): Environment {
  const database = resolve(location);
  return {
    resolve: nodeEnvironment.resolve,
    storage: (path, create) => {
      const storage = nodeEnvironment.storage(path, create);
      return path === database && port !== null ? relayLocks(storage, port, lockAnswers) : storage;
    },
  };
}

port.on("message", (message: ToEngineWorker) => {
  switch (message.type) {
    case "open":
      try {
        server = openNodeServer(message.location, message.options, {
          environment: environment(message.location),
          busy: (busy) => post({ type: "maintaining", busy }),
        });
        post({ type: "opened", location: server.db.location });
      } catch (error) {
        post({ type: "failed", error: toWire(error) });
      }
      break;
    case "requests":
      server?.serve(client, message.requests, message.keyspaces, (replies) => {
        const transfer: ArrayBuffer[] = [];
        for (const reply of replies) {
          if (reply[1]) {
            reply[2] = ownBuffers(reply[2]);
            transferables(reply[2], transfer);
          }
        }
        post({ type: "replies", replies }, transfer);
      });
      break;
    case "close": {
      const open = server;
      if (open === undefined) {
        post({ type: "closed" });
        break;
      }
      open.run(() => {
        try {
          void open.stop();
          client.closeAll();
          open.db.close();
          post({ type: "closed" });
        } catch (error) {
          post({ type: "closed", error: toWire(error) });
        }
      });
      break;
    }
  }
});
