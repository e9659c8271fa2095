/**
 * The dedicated worker that `open()` and `importDatabase()` start (the package owns it: users
 * write no worker code). For `open` it either owns the database — holds its Web Lock, opens its
 * OPFS files and serves its page and other tabs — or, when another tab owns it, waits for the
 * lock to take over when that tab goes; meanwhile the page talks to the owner directly.
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import { loadWasm } from "../engine/load-async.js";
import { runImport } from "./worker/import.js";
import { acquireLock } from "./locks.js";
import { Owner } from "./worker/owner.js";
import { moduleUrl } from "./wasm-urls.js";
import { lockNames, type FromWorker, type OpenRequest, type ToWorker } from "./messages.js";
import type { KeyspaceDeclaration, RequestMessage } from "../transport/requests.js";
import { toWire } from "../transport/wire-error.js";

/** What this module needs of the dedicated worker's global scope. */
interface WorkerScope {
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}

const scope = globalThis as unknown as WorkerScope;

let owner: Owner | undefined;
/** While another tab owns the database: aborts this worker's wait for its lock. */
let waiting: AbortController | undefined;
/** A takeover under way (the lock is ours, the database opening). */
let takingOver: Promise<unknown> | undefined;
let closing = false;

function post(message: FromWorker, transfer: Transferable[] = []): void {
  try {
    scope.postMessage(message, transfer);
  } catch {
    scope.postMessage(message);
  }
}

/** Opens the database as its owner (holding its lock: `release` lets go of it). */
async function own(
  request: OpenRequest,
  takeover: boolean,
  release: () => void,
): Promise<{ owner: Owner; created: boolean }> {
  // The module compiles while the OPFS files open.
  const url = moduleUrl(request.module);
  const wasmReady = loadWasm(url).catch((error: unknown) => {
    throw new ShaleError(
      "IO",
      `shaledb: cannot load the WebAssembly module (${String(url)}): ${String(error)}`,
      { cause: error },
    );
  });
  const opened = await Owner.open(request, release, takeover, wasmReady);
  owner = opened.owner;
  return opened;
}

async function open(request: OpenRequest): Promise<void> {
  const lock = lockNames.database(request.name);
  try {
    const release = await acquireLock(lock, { ifAvailable: true });
    if (release !== undefined) {
      const opened = await own(request, false, release);
      post({ type: "opened", owner: opened.owner.id, created: opened.created });
      return;
    }
    if (request.exclusive) {
      throw new ShaleError(
        "LOCKED",
        `shaledb: database "${request.name}" is open in another tab or worker, and { exclusive: true } refuses to share it`,
      );
    }
  } catch (error) {
    post({ type: "failed", error: toWire(error) });
    return;
  }
  // Another tab owns the database and serves this page; take over when it goes.
  post({ type: "opened", owner: undefined, created: false });
  waiting = new AbortController();
  try {
    const release = await acquireLock(lock, { signal: waiting.signal });
    waiting = undefined;
    if (release === undefined || closing) {
      release?.();
      return;
    }
    takingOver = own(request, true, release);
    const taken = (await takingOver) as Awaited<ReturnType<typeof own>>;
    post({ type: "owner", owner: taken.owner.id });
  } catch (error) {
    if (!closing) {
      post({ type: "failed", error: toWire(error) });
    }
  }
}

function serve(requests: RequestMessage[], keyspaces: KeyspaceDeclaration[] | undefined): void {
  if (owner === undefined) {
    const error = toWire(new ShaleError("CLOSED", "shaledb: this worker does not own the database"));
    post({ type: "replies", replies: requests.map(([id]) => [id, false, error]) });
    return;
  }
  owner.serveLocal(requests, keyspaces, (replies, transfer) => post({ type: "replies", replies }, transfer));
}

/**
 * Closes the database if this worker owns it, or stops waiting to own it; finishes a takeover
 * under way first. Answers `closed` once the lock is let go, so that a page whose `close()` has
 * resolved finds the database free.
 */
async function close(): Promise<void> {
  closing = true;
  waiting?.abort();
  try {
    await takingOver;
  } catch {
    // The takeover failed: there is nothing to close.
  }
  try {
    await owner?.close();
  } finally {
    owner = undefined;
    post({ type: "closed" });
  }
}

scope.onmessage = (event) => {
  const message = event.data;
  switch (message.type) {
    case "open":
      void open(message);
      break;
    case "import":
      void runImport(message, moduleUrl("full"), () => post({ type: "importHalted" })).then(
        () => post({ type: "imported" }),
        (error: unknown) => post({ type: "failed", error: toWire(error) }),
      );
      break;
    case "requests":
      serve(message.requests, message.keyspaces);
      break;
    case "close":
      void close();
      break;
  }
};
