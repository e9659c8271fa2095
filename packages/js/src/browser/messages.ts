/**
 * What crosses between a page and the worker that owns a database: the requests of the Promise
 * API and their replies (`../transport/requests.ts`), and the control messages of opening,
 * closing and changing owners.
 *
 * Channels:
 * - page ↔ its own worker: `postMessage` ({@link ToWorker}, {@link FromWorker});
 * - a page whose worker does not own the database ↔ the owner, in another tab or worker:
 *   `BroadcastChannel`s named by {@link channelNames} ({@link ToOwner}, {@link FromOwner},
 *   {@link OwnerAnnouncement}).
 * Ownership is a Web Lock ({@link lockNames}); a page holds a lock of its own for as long as it is
 * a client, so that the owner notices when it is gone.
 *
 * @module
 */
import type { OpenOptions, Stats } from "../types.js";
import type { KeyspaceDeclaration, RequestMessage, Reply, WireError } from "../transport/requests.js";
import type { ImportDebug } from "./import-debug.js";
import type { EngineModule } from "./wasm-urls.js";

/** Stats in browsers: the engine's, plus whether the origin's storage is persistent. */
export interface BrowserStats extends Stats {
  /** Whether the browser granted persistent storage (`navigator.storage.persisted()`). */
  persisted: boolean;
  /** Slot files of the OPFS pool: holding a file, and free (docs/FORMAT.md). */
  slots: { used: number; free: number };
}

/** What `open` asks of the worker it starts. */
export interface OpenRequest {
  type: "open";
  name: string;
  /** The page's client id (`Connection.client`): the owner's local client. */
  client: string;
  /** Options of the engine (encodings are the page's business and are not sent). */
  options: Omit<OpenOptions, "keyEncoding" | "valueEncoding">;
  /** Refuse to share: `LOCKED` if another tab has the database, and serve no other tab. */
  exclusive: boolean;
  /** The WebAssembly module the owner loads (`BrowserOpenOptions.module`). */
  module: EngineModule;
  /**
   * The database's OPFS directory, looked up by the page while the worker starts (a head start
   * for the open); absent where the page could not (then the worker looks it up itself).
   */
  directory?: FileSystemDirectoryHandle;
}

/** What `importDatabase` asks of a worker it starts for the job. */
export interface ImportRequest {
  type: "import";
  name: string;
  archive: Blob;
  overwrite: boolean;
  /** Tests only: stop at a given step (`import-debug.ts`). */
  debug?: ImportDebug;
}

export type ToWorker =
  | OpenRequest
  | ImportRequest
  | { type: "requests"; requests: RequestMessage[]; keyspaces?: KeyspaceDeclaration[] }
  | { type: "close" };

export type FromWorker =
  /** The database is open: this worker owns it, or another does and serves this page. */
  | { type: "opened"; owner: string | undefined; created: boolean }
  /** `open` or `import` failed. */
  | { type: "failed"; error: WireError }
  /** The import is done. */
  | { type: "imported" }
  /** Tests only: the import reached the step `ImportRequest.debug` names and waits there. */
  | { type: "importHalted" }
  | { type: "replies"; replies: Reply[] }
  /** This worker has taken the database over from an owner that went away. */
  | { type: "owner"; owner: string }
  /** Closed (after a `close` request, or a panic): the worker can be terminated. */
  | { type: "closed" };

/**
 * The version of these messages between tabs. Tabs of one origin may run different releases of
 * the package (one not yet reloaded after a deploy): an owner serves only its own version.
 */
export const PROTOCOL_VERSION = 2;

/** Client → owner, on the owner's request channel. */
export type ToOwner =
  | { type: "hello"; client: string; version: number }
  | {
      type: "requests";
      client: string;
      owner: string;
      requests: RequestMessage[];
      /** Keyspaces this owner has not been told of yet (the first message after a takeover). */
      keyspaces?: KeyspaceDeclaration[];
      /** Every request of this client numbered below this one has its answer. */
      settled: number;
    }
  | { type: "bye"; client: string; owner: string };

/** Owner → one client, on that client's reply channel. */
export type FromOwner =
  | { type: "welcome"; owner: string }
  | { type: "refused"; owner: string; error: WireError }
  | { type: "replies"; owner: string; replies: Reply[] };

/** A new owner, on the announcement channel. */
export interface OwnerAnnouncement {
  type: "owner";
  owner: string;
}

/** The BroadcastChannel names of database `name` and of client `client`. */
export const channelNames = {
  requests: (name: string): string => `shaledb:requests:${name}`,
  announcements: (name: string): string => `shaledb:owner:${name}`,
  replies: (client: string): string => `shaledb:replies:${client}`,
};

/** The Web Lock names: ownership of database `name`; liveness of client `client`. */
export const lockNames = {
  database: (name: string): string => `shaledb:database:${name}`,
  client: (client: string): string => `shaledb:client:${client}`,
};
