/**
 * The options of a browser open — `open` in a page and `openInWorker` — checked once: those of
 * Node, plus sharing and persistence; and the persistence request after a creation.
 *
 * @module
 */
import { describe, option } from "../arguments/checks.js";
import { checkOpenOptions, type CheckedOpenOptions } from "../arguments/open-options.js";
import { invalidArgument } from "../errors.js";
import type { KeyEncoding, OpenOptions, ValueEncoding } from "../types.js";
import type { OpenRequest } from "./messages.js";
import type { EngineModule } from "./wasm-urls.js";

/** Options of `open` and `openInWorker` in browsers: those of Node, plus sharing and persistence. */
export interface BrowserOpenOptions<KE extends KeyEncoding = "utf8", VE extends ValueEncoding = "utf8">
  extends OpenOptions<KE, VE> {
  /**
   * Refuse to share: the open fails with `LOCKED` if another tab or worker has the database,
   * and while this one has it, other opens fail with `LOCKED` instead of being served through
   * it. Default `false`.
   */
  exclusive?: boolean;
  /**
   * Ask the browser for persistent storage (`navigator.storage.persist()`) when this open
   * creates the database, so that it is not evicted under storage pressure. Default `true`;
   * `stats()` reports whether it was granted.
   */
  persist?: boolean;
  /**
   * Which WebAssembly module the database's worker loads: `"full"` (the default), the whole
   * engine, or `"kv"`, the key-value engine alone — keyspaces, batches, iterators, snapshots,
   * transactions, export — a third smaller to download, without queues, topics and the change
   * feed (using them is `NOT_IN_MODULE`). Where a database is shared between tabs, the tab whose
   * worker owns it decides.
   */
  module?: EngineModule;
}

/** Browser open options, checked and with their defaults. */
export interface CheckedBrowserOpen {
  checked: CheckedOpenOptions;
  exclusive: boolean;
  persist: boolean;
  module: EngineModule;
  /** The options the engine's owner opens with (encodings stay with the caller). */
  engine: OpenRequest["options"];
}

/** Checks `options` (`INVALID_ARGUMENT` for anything wrong) and fills in defaults. */
export function checkBrowserOpen(options: unknown): CheckedBrowserOpen {
  const checked = checkOpenOptions(options as OpenOptions<KeyEncoding, ValueEncoding> | undefined, [
    "exclusive",
    "persist",
    "module",
  ]);
  if (checked.readOnly) {
    // OPFS gives one sync access handle per file to one worker: a second engine cannot read
    // the owner's files. Tabs share a database through its owner instead.
    throw invalidArgument(
      "options.readOnly is for Node.js: in browsers one worker owns a database's files (OPFS " +
        "access handles are exclusive) and every other tab or worker is served through it",
    );
  }
  const o = options === undefined ? {} : (options as Readonly<Record<string, unknown>>); // checked above
  return {
    checked,
    exclusive: option(o, "exclusive", "boolean", false),
    persist: option(o, "persist", "boolean", true),
    module: engineModule(o.module),
    engine: {
      createIfMissing: checked.createIfMissing,
      errorIfExists: checked.errorIfExists,
      memtableSize: checked.memtableSize,
      blockCacheSize: checked.blockCacheSize,
      compression: checked.compression,
      bloomBitsPerKey: checked.bloomBitsPerKey,
      autoMaintenance: checked.autoMaintenance,
      follower: checked.follower,
      ...(checked.changes.retain ? { changes: retentionOf(checked) } : {}),
    },
  };
}

/** The checked `module` option (`INVALID_ARGUMENT` unless absent, `"full"` or `"kv"`). */
function engineModule(module: unknown): EngineModule {
  if (module === undefined || module === "full" || module === "kv") {
    return module ?? "full";
  }
  throw invalidArgument(`options.module must be "full" or "kv", got ${describe(module)}`);
}

/** The `changes` open option again, from its checked form. */
function retentionOf(checked: CheckedOpenOptions): { retainMs?: number; retainBytes?: number } {
  const { retainMs, retainBytes } = checked.changes;
  return { ...(retainMs >= 0 ? { retainMs } : {}), ...(retainBytes >= 0 ? { retainBytes } : {}) };
}

/**
 * After an open that created a database, with `persist`: asks for persistent storage, not
 * awaited (some browsers ask the user, who may take their time or never answer).
 */
export function requestPersistence(created: boolean, persist: boolean): void {
  if (created && persist && typeof navigator.storage?.persist === "function") {
    navigator.storage.persist().catch(() => undefined);
  }
}
