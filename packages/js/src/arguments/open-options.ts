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
  /** Open read-only: no lock, nothing written, the writer's progress read by `catchUp()`. */
  readOnly: boolean;
  /** With `readOnly`: catch up every this many milliseconds (0: only on request). */
  catchUpIntervalMs: number;
}

/** The options every environment knows (`OpenOptions`); any other key is `INVALID_ARGUMENT`. */
const OPEN_OPTION_NAMES: readonly string[] = [
  "keyEncoding",
  "valueEncoding",
  "createIfMissing",
  "errorIfExists",
  "memtableSize",
  "blockCacheSize",
  "compression",
  "bloomBitsPerKey",
  "autoMaintenance",
  "engineThread",
  "follower",
  "changes",
  "readOnly",
  "catchUpIntervalMs",
];

/** The longest `catchUpIntervalMs` (a day), so that a timer can take it. */
const MAX_CATCH_UP_INTERVAL_MS = 86_400_000;

/**
 * Checks `options` (wrong types and values, and keys that are no option, are
 * `INVALID_ARGUMENT`) and fills in defaults. `extraNames`: the options an environment adds
 * (browsers' `exclusive`, `persist`), checked by it.
 */
export function checkOpenOptions(
  options: OpenOptions<KeyEncoding, ValueEncoding> | undefined,
  extraNames: readonly string[] = [],
): CheckedOpenOptions {
  const o = optionsObject(options, [...OPEN_OPTION_NAMES, ...extraNames], "open options");
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
    readOnly: option(o, "readOnly", "boolean", false),
    catchUpIntervalMs: option(o, "catchUpIntervalMs", "number", 0),
  };
  const interval = checked.catchUpIntervalMs;
  if (!Number.isInteger(interval) || interval < 0 || interval > MAX_CATCH_UP_INTERVAL_MS) {
    throw invalidArgument(
      `options.catchUpIntervalMs must be a whole number of milliseconds from 0 to ${MAX_CATCH_UP_INTERVAL_MS}, got ${interval}`,
    );
  }
  if (interval > 0 && !checked.readOnly) {
    throw invalidArgument("options.catchUpIntervalMs is for a readOnly open");
  }
  if (checked.readOnly && (checked.follower || checked.errorIfExists)) {
    throw invalidArgument(
      `options.readOnly cannot be combined with ${checked.follower ? "follower" : "errorIfExists"}`,
    );
  }
  const bits = checked.bloomBitsPerKey;
  if (!Number.isInteger(bits) || bits < 0 || bits > 64) {
    throw invalidArgument(`options.bloomBitsPerKey must be an integer from 0 to 64`);
  }
  return checked;
}

/** `options.engineThread`: `"caller"` (the default) or `"own"`. */
function engineThreadOption(value: unknown): "own" | "caller" {
  if (value === undefined) {
    return "caller";
  }
  if (value === "own" || value === "caller") {
    return value;
  }
  throw invalidArgument(`options.engineThread must be "own" or "caller", not ${String(value)}`);
}
