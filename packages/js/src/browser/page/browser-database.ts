/**
 * The Promise API in browsers: the one of `../../api/`, plus export, and stats with the
 * browser's figures.
 *
 * @module
 */
import { PromiseDatabase } from "../../api/database.js";
import type { ShaleErrorCode } from "../../errors.js";
import type { Database } from "../../types.js";
import type { BrowserStats } from "../messages.js";

/** Database handles in browsers: the shared Promise API, plus export. */
export interface BrowserDatabase<K, V> extends Database<K, V> {
  /** A plain tar archive of the database directory, for download (`importDatabase` reads it). */
  export(): Promise<Blob>;
  /** Sizes and counts, plus whether storage is persistent and the OPFS slot pool's size. */
  stats(): Promise<BrowserStats>;
}

export class BrowserDatabaseImpl extends PromiseDatabase implements BrowserDatabase<unknown, unknown> {
  override stats(): Promise<BrowserStats> {
    // The owner's stats are its engine's plus the browser's figures.
    return super.stats() as Promise<BrowserStats>;
  }

  /** Panics inside the owner's WebAssembly module. For tests of the panic path only. @internal */
  debugPanic(message: string): Promise<void> {
    return this.transport.request("debugPanic", [message]);
  }

  /**
   * Tests only: the owner carries out this page's next message of requests without sending
   * the replies (as if its tab went away right after committing). @internal
   */
  debugLoseReplies(): Promise<void> {
    return this.transport.request("debugLoseReplies", []);
  }

  /** Tests only: the owner's next merged write fails with `code`. @internal */
  debugFailMergedWrite(code: ShaleErrorCode): Promise<void> {
    return this.transport.request("debugFailMergedWrite", [code]);
  }
}
