/**
 * What the package's worker does (`../worker.ts`): for `open` it either owns the database —
 * holds its Web Lock, opens its OPFS files and serves its page and other tabs — or, when another
 * tab owns it, waits for the lock to take over when that tab goes; `import` runs an import.
 * Served over the worker's global scope, or — for a page that is itself a dedicated worker, where
 * Firefox's `new Worker()` now and then blocks its caller for good — over a `MessagePort` in that
 * thread (`../page/in-thread-worker.ts`).
 *
 * @module
 */
import { ShaleError } from "../../errors.js";
import { loadWasm } from "../../engine/load-async.js";
import type { KeyspaceDeclaration, RequestMessage } from "../../transport/requests.js";
import { toWire } from "../../transport/wire-error.js";
import { acquireLock } from "../locks.js";
import { lockNames, type FromWorker, type OpenRequest, type ToWorker } from "../messages.js";
import { moduleUrl } from "../wasm-urls.js";
import { runImport } from "./import.js";
import { Owner } from "./owner.js";

/** Where the protocol runs: a dedicated worker's global scope, or a `MessagePort`. */
export interface WorkerScope {
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}

/** Serves the worker protocol over `scope` (it takes `scope.onmessage`). */
export class WorkerProtocol {
  readonly #scope: WorkerScope;
  #owner: Owner | undefined;
  /** While another tab owns the database: aborts this worker's wait for its lock. */
  #waiting: AbortController | undefined;
  /** A takeover under way (the lock is ours, the database opening). */
  #takingOver: Promise<unknown> | undefined;
  #closing = false;
  /** Set by {@link stop}: nothing more is posted. */
  #stopped = false;

  constructor(scope: WorkerScope) {
    this.#scope = scope;
    scope.onmessage = (event) => this.#onMessage(event.data);
  }

  /**
   * What a worker's end does to what it held (for the in-thread one, whose thread goes on):
   * closes the database it owns or stops waiting for it, silently.
   */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#scope.onmessage = null;
    void this.#close().catch(() => undefined);
  }

  #onMessage(message: ToWorker): void {
    switch (message.type) {
      case "open":
        void this.#open(message);
        break;
      case "import":
        void runImport(message, moduleUrl("full"), () => this.#post({ type: "importHalted" })).then(
          () => this.#post({ type: "imported" }),
          (error: unknown) => this.#post({ type: "failed", error: toWire(error) }),
        );
        break;
      case "requests":
        this.#serve(message.requests, message.keyspaces);
        break;
      case "close":
        void this.#close();
        break;
    }
  }

  #post(message: FromWorker, transfer: Transferable[] = []): void {
    if (this.#stopped) return;
    try {
      this.#scope.postMessage(message, transfer);
    } catch {
      this.#scope.postMessage(message);
    }
  }

  /** Opens the database as its owner (holding its lock: `release` lets go of it). */
  async #own(request: OpenRequest, takeover: boolean, release: () => void): Promise<{ owner: Owner; created: boolean }> {
    // The module compiles while the OPFS files open.
    const url = moduleUrl(request.module);
    const wasmReady = loadWasm(url).catch((error: unknown) => {
      throw new ShaleError("IO", `shaledb: cannot load the WebAssembly module (${String(url)}): ${String(error)}`, {
        cause: error,
      });
    });
    const opened = await Owner.open(request, release, takeover, wasmReady);
    this.#owner = opened.owner;
    return opened;
  }

  async #open(request: OpenRequest): Promise<void> {
    const lock = lockNames.database(request.name);
    try {
      const release = await acquireLock(lock, { ifAvailable: true });
      if (release !== undefined) {
        const opened = await this.#own(request, false, release);
        this.#post({ type: "opened", owner: opened.owner.id, created: opened.created });
        return;
      }
      if (request.exclusive) {
        throw new ShaleError(
          "LOCKED",
          `shaledb: database "${request.name}" is open in another tab or worker, and { exclusive: true } refuses to share it`,
        );
      }
    } catch (error) {
      this.#post({ type: "failed", error: toWire(error) });
      return;
    }
    // Another tab owns the database and serves this page; take over when it goes.
    this.#post({ type: "opened", owner: undefined, created: false });
    this.#waiting = new AbortController();
    try {
      const release = await acquireLock(lock, { signal: this.#waiting.signal });
      this.#waiting = undefined;
      if (release === undefined || this.#closing) {
        release?.();
        return;
      }
      const taking = this.#own(request, true, release);
      this.#takingOver = taking;
      const taken = await taking;
      this.#post({ type: "owner", owner: taken.owner.id });
    } catch (error) {
      if (!this.#closing) {
        this.#post({ type: "failed", error: toWire(error) });
      }
    }
  }

  #serve(requests: RequestMessage[], keyspaces: KeyspaceDeclaration[] | undefined): void {
    const owner = this.#owner;
    if (owner === undefined) {
      const error = toWire(new ShaleError("CLOSED", "shaledb: this worker does not own the database"));
      this.#post({ type: "replies", replies: requests.map(([id]) => [id, false, error]) });
      return;
    }
    owner.serveLocal(requests, keyspaces, (replies, transfer) => this.#post({ type: "replies", replies }, transfer));
  }

  /**
   * Closes the database if this worker owns it, or stops waiting to own it; finishes a takeover
   * under way first. Answers `closed` once the lock is let go, so that a page whose `close()` has
   * resolved finds the database free.
   */
  async #close(): Promise<void> {
    this.#closing = true;
    this.#waiting?.abort();
    try {
      await this.#takingOver;
    } catch {
      // The takeover failed: there is nothing to close.
    }
    try {
      await this.#owner?.close();
    } finally {
      this.#owner = undefined;
      this.#post({ type: "closed" });
    }
  }
}
