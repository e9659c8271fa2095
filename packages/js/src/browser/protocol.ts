/**
 * What crosses between a page and the worker that owns a database: the requests of the Promise
 * API with their keys and values already encoded, the replies, and the control messages of
 * opening, closing and changing owners. The page encodes and decodes (codecs run there); the
 * worker sees bytes only.
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
import type { IterationMode } from "../entry-batch.js";
import type { ShaleErrorCode } from "../errors.js";
import type { ImportDebug } from "./import-debug.js";
import type { OpenOptions, Stats } from "../types.js";

/** Range, direction, limit and snapshot of an iteration, keys encoded. */
export interface WireRange {
  gt?: Uint8Array;
  gte?: Uint8Array;
  lt?: Uint8Array;
  lte?: Uint8Array;
  prefix?: Uint8Array;
  reverse?: boolean;
  limit?: number;
  /** A snapshot id of the owner; 0 or absent: the latest state. */
  snapshot?: number;
}

/** Stats in browsers: the engine's, plus whether the origin's storage is persistent. */
export interface BrowserStats extends Stats {
  /** Whether the browser granted persistent storage (`navigator.storage.persisted()`). */
  persisted: boolean;
  /** Slot files of the OPFS pool: holding a file, and free (docs/FORMAT.md). */
  slots: { used: number; free: number };
}

/**
 * Every request: its arguments and result. Ids of iterators, snapshots and transactions are the
 * owner's; keyspace numbers (`ks`) are the page's own, bound by `keyspace` (0 is the default
 * keyspace; `client-keyspaces.ts`).
 */
export interface Protocol {
  /** Opens (creating it if missing) keyspace `name` as this page's keyspace `number`. */
  keyspace: { args: [name: string, number: number]; result: void };
  get: { args: [ks: number, key: Uint8Array, snapshot: number]; result: Uint8Array | undefined };
  getMany: {
    args: [ks: number, keys: Uint8Array[], snapshot: number];
    result: (Uint8Array | undefined)[];
  };
  has: { args: [ks: number, key: Uint8Array, snapshot: number]; result: boolean };
  put: { args: [ks: number, key: Uint8Array, value: Uint8Array, sync: boolean]; result: void };
  delete: { args: [ks: number, key: Uint8Array, sync: boolean]; result: void };
  /** Packed batch operations (`packed-ops.ts`), applied atomically. */
  write: { args: [ops: Uint8Array, sync: boolean]; result: void };
  /** Opens an iterator and returns its first batch (`entry-batch.ts`) of up to `first` entries. */
  iterOpen: {
    args: [ks: number, range: WireRange, mode: IterationMode, first: number];
    result: [iterator: number, batch: Uint8Array];
  };
  iterNext: { args: [iterator: number, want: number, mode: IterationMode]; result: Uint8Array };
  iterClose: { args: [iterator: number]; result: void };
  count: { args: [ks: number, range: WireRange]; result: number };
  snapshotOpen: { args: []; result: number };
  snapshotClose: { args: [snapshot: number]; result: void };
  txOpen: { args: []; result: number };
  txGet: { args: [tx: number, ks: number, key: Uint8Array]; result: Uint8Array | undefined };
  txPut: { args: [tx: number, ks: number, key: Uint8Array, value: Uint8Array]; result: void };
  txDelete: { args: [tx: number, ks: number, key: Uint8Array]; result: void };
  txCommit: { args: [tx: number, sync: boolean]; result: void };
  txRollback: { args: [tx: number]; result: void };
  flush: { args: []; result: void };
  compact: { args: [start: Uint8Array | undefined, end: Uint8Array | undefined]; result: void };
  maintain: { args: [budget: number]; result: boolean };
  checkpoint: { args: [destination: string]; result: void };
  stats: { args: []; result: BrowserStats };
  /** A tar archive of the database directory. */
  export: { args: []; result: Blob };
  /** Panics inside the WebAssembly module (tests of the panic path only). */
  debugPanic: { args: [message: string]; result: void };
  /**
   * Tests only: the owner carries out this page's next message of requests but does not send
   * its replies (as if the owner's tab went away right after committing).
   */
  debugLoseReplies: { args: []; result: void };
  /** Tests only: the next merged write (a group of writes applied together) fails with `code`. */
  debugFailMergedWrite: { args: [code: ShaleErrorCode]; result: void };
}

export type Op = keyof Protocol;
export type Args<O extends Op> = Protocol[O]["args"];
export type Result<O extends Op> = Protocol[O]["result"];

/**
 * One request: a number unique per client (increasing), the operation, its arguments, and
 * `1` if it was sent before to an owner that went away without answering it (a write then
 * runs only if no owner applied it yet: `applied-writes.ts`).
 */
export type RequestMessage<O extends Op = Op> = [id: number, op: O, args: Args<O>, resent?: 1];

/** A keyspace a page opened earlier, declared to a new owner: the page's number and the name. */
export type KeyspaceDeclaration = [number: number, name: string];

/** An error as it crosses: a ShaleError's code and message. */
export interface WireError {
  code: ShaleErrorCode;
  message: string;
}

/** One reply: to request `id`, its result or its error. */
export type Reply = [id: number, ok: true, result: unknown] | [id: number, ok: false, error: WireError];

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
