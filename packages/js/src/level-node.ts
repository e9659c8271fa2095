/**
 * The `shaledb/level` entry in Node: {@link ShaleLevel}, an `abstract-level` database in a
 * directory, over ShaleDB's Promise API (the engine in a worker thread unless
 * `shaledb: { engineThread: "caller" }`).
 *
 * @module
 */
import { open } from "./node.js";
import { ShaleLevelBase } from "./level/shale-level.js";
import type { ByteDatabase } from "./level/cursor.js";
import type { OpenOptions } from "./types.js";

export type { ShaleLevelOptions, ShaleOpenOptions } from "./level/shale-level.js";
export { ShaleLevelSnapshot } from "./level/snapshot.js";

/** An `abstract-level` database over ShaleDB in directory `location`. */
export class ShaleLevel<K = string, V = string> extends ShaleLevelBase<K, V> {
  protected openStore(location: string, options: OpenOptions<"binary", "binary">): Promise<ByteDatabase> {
    return open(location, options);
  }
}
