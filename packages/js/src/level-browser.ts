/**
 * The `shaledb/level` entry in browsers: {@link ShaleLevel}, an `abstract-level` database named
 * `location` in the origin's private file system, over ShaleDB's Promise API (shared by the
 * origin's tabs, like `open`).
 *
 * @module
 */
import { open } from "./browser.js";
import { ShaleLevelBase } from "./level/shale-level.js";
import type { ByteDatabase } from "./level/cursor.js";
import type { OpenOptions } from "./types.js";

export type { ShaleLevelOptions, ShaleOpenOptions } from "./level/shale-level.js";
export { ShaleLevelSnapshot } from "./level/snapshot.js";

/** An `abstract-level` database over ShaleDB, named `location`, in the browser. */
export class ShaleLevel<K = string, V = string> extends ShaleLevelBase<K, V> {
  protected openStore(location: string, options: OpenOptions<"binary", "binary">): Promise<ByteDatabase> {
    return open(location, options);
  }
}
