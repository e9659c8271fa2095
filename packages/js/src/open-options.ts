/**
 * The options of `open` and `openSync`, checked once for every environment.
 *
 * @module
 */
import { describe, keyCodec, valueCodec, type Codec } from "./codec.js";
import { invalidArgument } from "./errors.js";
import type { KeyEncoding, OpenOptions, ValueEncoding } from "./types.js";

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
}

/** `options[name]`, of type `type`, or `fallback` when absent. */
export function option<T>(
  options: object,
  name: string,
  type: "boolean" | "number",
  fallback: T,
): T {
  const value = (options as Record<string, unknown>)[name];
  if (value === undefined) {
    return fallback;
  }
  if (typeof value !== type || (type === "number" && !Number.isFinite(value))) {
    throw invalidArgument(`options.${name} must be a ${type}, got ${describe(value)}`);
  }
  return value as T;
}

/** Checks `options` (wrong types and values are `INVALID_ARGUMENT`) and fills in defaults. */
export function checkOpenOptions(
  options: OpenOptions<KeyEncoding, ValueEncoding> | undefined,
): CheckedOpenOptions {
  if (options === undefined) {
    options = {};
  }
  if (typeof options !== "object" || options === null) {
    throw invalidArgument(`options must be an object, got ${describe(options)}`);
  }
  const checked: CheckedOpenOptions = {
    keys: keyCodec(options.keyEncoding),
    values: valueCodec(options.valueEncoding),
    createIfMissing: option(options, "createIfMissing", "boolean", true),
    errorIfExists: option(options, "errorIfExists", "boolean", false),
    memtableSize: option(options, "memtableSize", "number", DEFAULT_MEMTABLE_SIZE),
    blockCacheSize: option(options, "blockCacheSize", "number", DEFAULT_BLOCK_CACHE_SIZE),
    compression: option(options, "compression", "boolean", true),
    bloomBitsPerKey: option(options, "bloomBitsPerKey", "number", 10),
    autoMaintenance: option(options, "autoMaintenance", "boolean", true),
  };
  const bits = checked.bloomBitsPerKey;
  if (!Number.isInteger(bits) || bits < 0 || bits > 64) {
    throw invalidArgument(`options.bloomBitsPerKey must be an integer from 0 to 64`);
  }
  return checked;
}
