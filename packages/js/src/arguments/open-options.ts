/**
 * The options of `open` and `openSync`, checked once for every environment.
 *
 * @module
 */
import { encodingNames, option, optionsObject } from "./checks.js";
import { keyCodec, valueCodec, type Codec } from "../encoding/codec.js";
import { invalidArgument } from "../errors.js";
import { retentionOption, type CheckedRetention } from "./change-options.js";
import type { KeyEncoding, OpenOptions, ValueEncoding } from "../types.js";

const DEFAULT_MEMTABLE_SIZE = 4 << 20;
const DEFAULT_BLOCK_CACHE_SIZE = 16 << 20;

/** Open options with every default filled in, and the codecs of the default keyspace. */
export interface CheckedOpenOptions {
  keys: Codec<unknown>;
  values: Codec<unknown>;
  createIfMissing: boolean;
  errorIfExists: boolean;
  memtableSize: number;
  blockCacheSize: number;
  compression: boolean;
  bloomBitsPerKey: number;
  autoMaintenance: boolean;
  /** Where Node's Promise API runs the engine. */
  engineThread: "own" | "caller";
  follower: boolean;
  /** The `changes` option. */
  changes: CheckedRetention;
}

/** Checks `options` (wrong types and values are `INVALID_ARGUMENT`) and fills in defaults. */
export function checkOpenOptions(
  options: OpenOptions<KeyEncoding, ValueEncoding> | undefined,
): CheckedOpenOptions {
  const o = optionsObject(options);
  const { keyEncoding, valueEncoding } = encodingNames(o);
  const checked: CheckedOpenOptions = {
    keys: keyCodec(keyEncoding),
    values: valueCodec(valueEncoding),
    createIfMissing: option(o, "createIfMissing", "boolean", true),
    errorIfExists: option(o, "errorIfExists", "boolean", false),
    memtableSize: option(o, "memtableSize", "number", DEFAULT_MEMTABLE_SIZE),
    blockCacheSize: option(o, "blockCacheSize", "number", DEFAULT_BLOCK_CACHE_SIZE),
    compression: option(o, "compression", "boolean", true),
    bloomBitsPerKey: option(o, "bloomBitsPerKey", "number", 10),
    autoMaintenance: option(o, "autoMaintenance", "boolean", true),
    engineThread: engineThreadOption(o["engineThread"]),
    follower: option(o, "follower", "boolean", false),
    changes: retentionOption(o["changes"]),
  };
  const bits = checked.bloomBitsPerKey;
  if (!Number.isInteger(bits) || bits < 0 || bits > 64) {
    throw invalidArgument(`options.bloomBitsPerKey must be an integer from 0 to 64`);
  }
  return checked;
}

/** `options.engineThread`: `"own"` (the default) or `"caller"`. */
function engineThreadOption(value: unknown): "own" | "caller" {
  if (value === undefined) {
    return "own";
  }
  if (value === "own" || value === "caller") {
    return value;
  }
  throw invalidArgument(`options.engineThread must be "own" or "caller", not ${String(value)}`);
}
